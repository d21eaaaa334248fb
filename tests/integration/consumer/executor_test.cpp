// SPDX-License-Identifier: Apache-2.0
// The public SandboxExecutor with the real provider, launcher, bwrap and proxy: the path rules,
// the network allow-list, the bounds and the cancellation of a RunRequest take the CLI's path
// (policy/call_policy.h, the CLI's allow-list grammar), and every verdict is read from outside:
// the secret never reaches the command's output, the loopback server's own log says which
// requests arrived, an ended tree's processes are gone from /proc and its marker never appears.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "consumer/bash_executor.h"
#include "consumer/render.h"
#include "consumer/tool_schema.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/escalation.h"
#include "dsh/sandbox/executor.h"
#include "dsh/sandbox/local_provider.h"
#include "dsh/sandbox/policy_service.h"
#include "files.h"
#include "must_run.h"
#include "process.h"
#include "temp_dir.h"
#include "wait.h"

namespace dsh::sandbox {
namespace {

using dsh::testing::Started;
using dsh::testing::TempDir;

// Serves its directory on 127.0.0.1; writes its port to argv[2] (by rename, once it listens)
// and appends each request's path to argv[3].
constexpr const char* kServer = R"(
import http.server, os, sys
os.chdir(sys.argv[1])
class Logged(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        with open(sys.argv[3], "a") as log: log.write(self.path + "\n")
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Logged)
with open(sys.argv[2] + ".tmp", "w") as f: f.write(str(server.server_port))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
server.serve_forever()
)";

class ExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access("/usr/bin/bwrap", X_OK) != 0) DSH_SKIP_OR_FAIL("bwrap is not installed");
    std::filesystem::create_directory(workspace_);
    std::filesystem::permissions(dir_.path(), std::filesystem::perms(0755));
  }

  static LocalSandboxHooks hooks() {
    LocalSandboxHooks hooks;
    hooks.launcher_path = LANDLOCK_RUN_PATH;  // dsh-netproxy is found beside it
    return hooks;
  }

  RunRequest request(std::vector<std::string> argv) const {
    RunRequest request;
    request.argv = std::move(argv);
    request.workspace_root = workspace_;
    return request;
  }

  TempDir dir_;
  std::string workspace_ = dir_ / "workspace";
  LocalSandboxProvider provider_{{}, hooks()};
  SandboxExecutor executor_{provider_};
};

// Host pids whose command line holds `token`, read from outside the run's pid namespace.
std::vector<pid_t> pids_with(const std::string& token) {
  std::vector<pid_t> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = dsh::testing::read_file(entry.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(token) != std::string::npos) found.push_back(std::stoi(name));
  }
  return found;
}

// The NSpid line's innermost pid of `pid` (the pid the command itself printed).
int inner_pid(pid_t pid) {
  const std::string field = dsh::testing::status_field(pid, "NSpid");
  const std::size_t last = field.find_last_of(" \t");
  return std::atoi(field.substr(last == std::string::npos ? 0 : last + 1).c_str());
}

TEST_F(ExecutorTest, ADenyReadPathIsUnreadableAndReadableWithoutTheRule) {
  const std::string secret = dir_ / "secret.txt";
  dsh::testing::write_file(secret, "executor-secret\n", 0644);
  const RunResult plain = executor_.run(request({"cat", secret}));
  EXPECT_EQ(plain.stdout_tail, "executor-secret\n");
  RunRequest denied = request({"cat", secret});
  denied.deny_read = {secret};
  const RunResult result = executor_.run(denied);
  EXPECT_EQ(result.end, RunEnd::kExited);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_EQ(result.stdout_tail.find("executor-secret"), std::string::npos) << result.stdout_tail;
}

TEST_F(ExecutorTest, AllowWriteOpensARootAndDenyWriteClosesOneInside) {
  const std::string extra = dir_ / "extra";
  const std::string kept = workspace_ + "/kept";
  std::filesystem::create_directories(extra);
  std::filesystem::create_directories(kept);
  std::filesystem::permissions(extra, std::filesystem::perms::all);
  RunRequest run = request({"sh", "-c", "echo a > " + extra + "/a; echo b > " + kept + "/b"});
  run.mode = SandboxMode::kWorkspaceWrite;
  run.allow_write = {extra};
  run.deny_write = {kept};
  const RunResult result = executor_.run(run);
  EXPECT_EQ(dsh::testing::read_file(extra + "/a"), "a\n");
  EXPECT_FALSE(dsh::testing::exists(kept + "/b"));
  EXPECT_NE(result.exit_code, 0);
}

// A library workspace-write run counts as the CLI's does: its workspace (and extra roots) join the
// per-user record before the command starts, so a symlink it plants there cannot steer a later
// CLI call's workspace (and its writes) somewhere else. Checked from outside: the target stays
// empty. The same symlink made by the person in a directory no run could write is followed.
TEST_F(ExecutorTest, AWorkspaceWriteRunIsRecordedSoALaterCliCallFollowsNoSymlinkItPlanted) {
  // Root's record lies in /run; another user's needs a private runtime directory.
  std::optional<dsh::testing::ScopedEnv> runtime;
  if (::geteuid() != 0) runtime.emplace("XDG_RUNTIME_DIR", dir_.mkdir("xdg", 0700).c_str());
  const std::string target = dir_.mkdir("target", 0777);
  const std::string extra = dir_.mkdir("extra", 0777);
  RunRequest plant = request(
      {"sh", "-c",
       "ln -s " + target + " " + workspace_ + "/link && ln -s " + target + " " + extra + "/link"});
  plant.mode = SandboxMode::kWorkspaceWrite;
  plant.allow_write = {extra};
  const RunResult planted = executor_.run(plant);
  ASSERT_EQ(planted.exit_code, 0) << planted.stderr_tail;
  ASSERT_TRUE(std::filesystem::is_symlink(workspace_ + "/link"));
  ASSERT_TRUE(std::filesystem::is_symlink(extra + "/link"));
  for (const std::string& link : {workspace_ + "/link", extra + "/link"}) {
    const dsh::testing::RunResult later =
        dsh::testing::execute({DSH_SANDBOX_PATH, "run", "--mode", "workspace-write", "--workspace",
                               link, "--", "/bin/sh", "-c", "echo planted > f"});
    EXPECT_TRUE(later.exited_with(125)) << later.describe();
    EXPECT_NE(later.err.find("could have planted that symlink"), std::string::npos) << later.err;
    EXPECT_FALSE(dsh::testing::exists(target + "/f")) << link;
  }
  // Control: the person's own symlink, beside the workspace and never writable by a run.
  const std::string own = dir_ / "own-link";
  ASSERT_EQ(::symlink(target.c_str(), own.c_str()), 0);
  const dsh::testing::RunResult followed =
      dsh::testing::execute({DSH_SANDBOX_PATH, "run", "--mode", "workspace-write", "--workspace",
                             own, "--", "/bin/sh", "-c", "echo mine > f"});
  EXPECT_TRUE(followed.exited_with(0)) << followed.describe();
  EXPECT_EQ(dsh::testing::read_file(target + "/f"), "mine\n");
}

TEST_F(ExecutorTest, TheAllowListReachesTheLoopbackServerOnlyForAListedName) {
  TempDir site;
  std::filesystem::permissions(site.path(), std::filesystem::perms(0755));
  std::ofstream(site / "marker.txt") << "reached through dsh-netproxy\n";
  std::ofstream(site / "server.py") << kServer;
  const std::string log = site / "requests.log";
  Started server({"/usr/bin/python3", site / "server.py", site.path(), site / "port", log});
  const int port = dsh::testing::wait_for_port_file(site / "port");
  ASSERT_NE(port, 0) << "the loopback HTTP server did not start";
  const std::string base = ":" + std::to_string(port);
  RunRequest run = request({"sh", "-c",
                            "curl -sS http://allowed.test" + base +
                                "/marker.txt; curl -s -o /dev/null -w "
                                "'%{http_code}\\n' http://other.test" +
                                base + "/other.txt"});
  run.network = NetworkPolicy::kAllowList;
  // 127.0.0.1 is listed too: the proxy drops a name's loopback address unless an address entry
  // admits it (docs/evidence-and-network.md). Spelled loosely: the executor canonicalises, as the
  // CLI does.
  run.network_allow.allow = {"ALLOWED.test", "127.0.0.1"};
  run.network_allow.resolve = {"allowed.test=127.0.0.1", "other.test=127.0.0.1"};
  const RunResult result = executor_.run(run);
  ::kill(server.pid(), SIGKILL);
  server.wait();
  EXPECT_EQ(result.stdout_tail.substr(0, result.stdout_tail.find('\n')),
            "reached through dsh-netproxy")
      << result.stdout_tail << result.stderr_tail;
  EXPECT_EQ(result.stdout_tail.find("\n200"), std::string::npos) << result.stdout_tail;
  const std::string requests = dsh::testing::read_file(log);
  EXPECT_NE(requests.find("/marker.txt"), std::string::npos) << requests;
  EXPECT_EQ(requests.find("/other.txt"), std::string::npos) << requests;
}

TEST_F(ExecutorTest, CancellingEndsTheWholeTreeAndItsMarkerNeverAppears) {
  const std::string token = "2." + std::to_string(::getpid()) + "77";
  const std::string marker = workspace_ + "/cancel-marker";
  RunRequest run = request(
      {"sh", "-c", "sh -c 'echo \"pid $$\"; sleep " + token + "; touch " + marker + "' & wait"});
  run.mode = SandboxMode::kWorkspaceWrite;
  run.cancellation.emplace();
  std::atomic<int> printed{0};
  run.on_stdout = [&](std::string_view chunk) {
    std::smatch found;
    const std::string text(chunk);
    if (std::regex_search(text, found, std::regex("pid (\\d+)"))) printed = std::stoi(found[1]);
  };
  RunResult result;
  std::thread runner([&] { result = executor_.run(run); });
  pid_t grandchild = 0;
  const bool seen = dsh::testing::wait_until([&] {
    if (printed == 0) return false;
    for (const pid_t pid : pids_with(token)) {
      if (inner_pid(pid) == printed) grandchild = pid;
    }
    return grandchild != 0;
  });
  const auto seen_at = std::chrono::steady_clock::now();
  run.cancellation->cancel();
  runner.join();
  ASSERT_TRUE(seen) << "the grandchild never showed in /proc";
  EXPECT_EQ(result.end, RunEnd::kAborted);
  EXPECT_TRUE(run.cancellation->cancelled());
  EXPECT_TRUE(pids_with(token).empty());
  // Past the grandchild's 2 s, with a margin: the marker it would have written is absent.
  std::this_thread::sleep_until(seen_at + std::chrono::seconds(3));
  EXPECT_FALSE(dsh::testing::exists(marker));
}

TEST_F(ExecutorTest, TheBoundsReachTheTree) {
  RunRequest run = request({"true"});
  run.max_processes = 1000;
  run.max_memory_bytes = std::uint64_t{256} << 20;
  const RunResult result = executor_.run(run);
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.max_processes, 1000U);
  EXPECT_EQ(result.max_memory_bytes, std::uint64_t{256} << 20);
  EXPECT_FALSE(result.max_processes_enforced_by.empty());
  RunRequest unbounded = request({"true"});
  unbounded.max_processes = kUnbounded;
  EXPECT_EQ(executor_.run(unbounded).max_processes, std::nullopt);
}

TEST_F(ExecutorTest, BadInputIsRefusedAndNothingRuns) {
  const std::string marker = workspace_ + "/bad-input";
  const auto refused = [&](const std::function<void(RunRequest&)>& change) {
    RunRequest run = request({"touch", marker});
    run.mode = SandboxMode::kWorkspaceWrite;
    change(run);
    EXPECT_THROW(executor_.run(run), InvalidSandboxInputError);
  };
  refused([](RunRequest& run) {
    run.mode = SandboxMode::kReadOnly;
    run.allow_write = {"/var/tmp"};
  });
  refused([](RunRequest& run) {
    run.mode = SandboxMode::kDangerFullAccess;
    run.deny_read = {"/etc/hostname"};
  });
  refused([](RunRequest& run) { run.network_allow.allow = {"example.test"}; });
  refused([](RunRequest& run) { run.network = NetworkPolicy::kAllowList; });
  refused([](RunRequest& run) {
    run.network = NetworkPolicy::kAllowList;
    run.network_allow.allow = {"not a name"};
  });
  refused([](RunRequest& run) { run.max_memory_bytes = 1024; });
  refused([](RunRequest& run) { run.allow_cache = {"no-such-cache"}; });
  EXPECT_FALSE(dsh::testing::exists(marker));
}

// A person who approves every question, and counts them.
class Approving final : public Approver {
 public:
  EscalationOutcome request(const ApprovalRequest& /*request*/) override {
    ++asked;
    return EscalationOutcome::kAllowedOnce;
  }
  int asked = 0;
};

// The tool layer's grant for a background job, as for a foreground call: the standing policy
// resolved from a read-only session, the model's sandbox_permissions approved, and the job
// started with SandboxBashExecutor::start under the real provider writes the workspace (checked
// on the host) where the same job under the standing policy is denied; the session's log gains
// no mode event.
TEST_F(ExecutorTest, AnApprovedGrantRunsABackgroundJobUnderTheGrantedMode) {
  const SessionLog session = SessionLog::create(dir_ / "session.jsonl", "s", workspace_);
  set_sandbox_mode(session, SandboxMode::kReadOnly);
  const SandboxPolicyService service(SandboxMode::kReadOnly,
                                     ResolvedWorkspace::resolve(workspace_).value());
  const SandboxExecutionPolicy standing = service.resolve({&session, std::nullopt, std::nullopt});
  ASSERT_EQ(standing.mode, SandboxMode::kReadOnly);
  const consumer::ToolComposition composition{standing.mode, true, true, standing.network};
  const auto job = [&](const SandboxExecutionPolicy& policy, const std::string& file) {
    consumer::RunSpec spec;
    spec.argv = {"bash", "-c", "echo job > " + file};
    spec.policy = policy;
    spec.process.workdir = workspace_;
    return consumer::SandboxBashExecutor(provider_).start(spec).wait();
  };
  const consumer::RunOutcome plain = job(standing, workspace_ + "/plain");
  EXPECT_TRUE(plain.sandbox.denied);
  EXPECT_FALSE(std::filesystem::exists(workspace_ + "/plain"));

  Approving person;
  const SandboxExecutionPolicy granted = consumer::tool_call_policy(
      standing, {SandboxMode::kWorkspaceWrite, "the job writes its result"}, composition,
      {"agent", "bash", "call-1", &person});
  EXPECT_EQ(person.asked, 1);
  const consumer::RunOutcome outcome = job(granted, workspace_ + "/granted");
  EXPECT_EQ(outcome.sandbox.mode, SandboxMode::kWorkspaceWrite);
  EXPECT_FALSE(outcome.sandbox.denied);
  EXPECT_EQ(dsh::testing::read_file(workspace_ + "/granted"), "job\n");
  const std::vector<SandboxModeEvent> events = session.sandbox_mode_events();
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].mode, SandboxMode::kReadOnly);
  EXPECT_EQ(service.resolve({&session, std::nullopt, std::nullopt}).mode, SandboxMode::kReadOnly);
}

// The agent flow without "unconfined": a write refused outside the workspace under
// workspace-write is rendered with the narrowest grant (that directory), the model asks for
// exactly it, the person approves it once, and the retry writes there (checked on the host) and
// nowhere else, still under workspace-write, on both backends.
TEST_F(ExecutorTest, TheRenderedNarrowGrantIsWhatTheRetryGetsAndNoMore) {
  LocalSandboxConfig no_bwrap;
  no_bwrap.bwrap_path = "/nonexistent/dsh-executor/bwrap";
  LocalSandboxProvider landlock_alone{no_bwrap, hooks()};
  int round = 0;
  for (LocalSandboxProvider* provider : {&provider_, &landlock_alone}) {
    const std::string out = dir_ / ("out" + std::to_string(round));
    const std::string third = dir_ / ("third" + std::to_string(round++));
    std::filesystem::create_directory(out);
    std::filesystem::create_directory(third);
    SandboxExecutionPolicy standing;
    standing.mode = SandboxMode::kWorkspaceWrite;
    standing.workspace_root = workspace_;
    const auto run = [&](const SandboxExecutionPolicy& policy, const std::string& command) {
      consumer::RunSpec spec;
      spec.argv = {"bash", "-c", command};
      spec.policy = policy;
      spec.process.workdir = workspace_;
      return consumer::SandboxBashExecutor(*provider).run(spec);
    };
    const consumer::RunOutcome refused = run(standing, "echo x > " + out + "/f");
    ASSERT_TRUE(refused.sandbox.denied) << refused.err.tail;
    const std::string render = consumer::render_for_agent(refused, true, 120000);
    EXPECT_NE(render.find("with allow_write [\"" + out + "\"] + justification"), std::string::npos)
        << render;
    EXPECT_EQ(render.find("escalation available"), std::string::npos) << render;
    Approving person;
    consumer::ToolEscalation asked{std::nullopt, "the build writes its output to " + out};
    asked.grant.allow_write = {out};
    const SandboxExecutionPolicy granted =
        consumer::tool_call_policy(standing, asked, {standing.mode, true, true, standing.network},
                                   {"agent", "bash", "call-3", &person});
    EXPECT_EQ(person.asked, 1);
    EXPECT_EQ(granted.mode, SandboxMode::kWorkspaceWrite);
    const consumer::RunOutcome retried =
        run(granted, "echo x > " + out + "/f; echo y > " + third + "/f");
    EXPECT_EQ(dsh::testing::read_file(out + "/f"), "x\n");
    EXPECT_FALSE(std::filesystem::exists(third + "/f"));
    EXPECT_TRUE(retried.sandbox.denied);
  }
}

// The contract's facts through the library on both backends: `ls /` and the home list; a socket
// the network policy refuses reads as no file denial (the library's evidence names it a network
// refusal, which only a wider network lifts); a write refusal is a denial; and the command starts
// in its workdir (relative, against the workspace root) whichever backend confines it.
TEST_F(ExecutorTest, ListingsSocketsAndTheWorkdirHoldOnEveryBackend) {
  LocalSandboxConfig no_bwrap;
  no_bwrap.bwrap_path = "/nonexistent/dsh-executor/bwrap";
  LocalSandboxProvider landlock_alone{no_bwrap, hooks()};
  SandboxExecutor alone{landlock_alone};
  std::filesystem::create_directory(workspace_ + "/sub");
  for (SandboxExecutor* executor : {&executor_, &alone}) {
    const RunResult listed = executor->run(request({"sh", "-c", "ls / >/dev/null && ls -d ~"}));
    EXPECT_EQ(listed.exit_code, 0) << listed.backend << ": " << listed.stderr_tail;
    const RunResult socket = executor->run(request({"bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/9"}));
    EXPECT_NE(socket.exit_code, 0) << socket.backend;
    EXPECT_NE(socket.stderr_tail.find("Address family not supported by protocol"),
              std::string::npos)
        << socket.backend << ": " << socket.stderr_tail;
    EXPECT_EQ(socket.stderr_tail.find("Permission denied"), std::string::npos)
        << socket.backend << ": " << socket.stderr_tail;
    const RunResult write = executor->run(request({"sh", "-c", "echo x > " + workspace_ + "/f"}));
    EXPECT_TRUE(write.denied) << write.backend << ": " << write.stderr_tail;
    EXPECT_FALSE(dsh::testing::exists(workspace_ + "/f"));
    RunRequest in_sub = request({"pwd"});
    in_sub.workdir = "sub";
    const RunResult where = executor->run(in_sub);
    EXPECT_EQ(where.stdout_tail, workspace_ + "/sub\n") << where.backend;
  }
  EXPECT_EQ(alone.run(request({"true"})).backend, "landlock");
}

}  // namespace
}  // namespace dsh::sandbox
