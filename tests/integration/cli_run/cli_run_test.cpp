// SPDX-License-Identifier: Apache-2.0
// `dsh-sandbox run` end to end: the real CLI over the
// real bwrap, the real landlock-run and real bash, on both backends of the chain, as root and as
// nobody. Every case attacks from inside and judges from outside: the files on the host, the
// exit status, the one-line errors, /proc of whatever the command tried to leave behind.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <thread>
#include <tuple>

#include "cli_run_harness.h"
#include "dsh/sandbox/policy_service.h"
#include "must_run.h"
#include "paths.h"

namespace dsh::cli_run_it {
namespace {

using std::string;
using std::vector;
using namespace std::chrono_literals;

const string kReadOnlyMarker = "[sandbox: file access denied under read-only mode]";
const string kWorkspaceWriteMarker = "[sandbox: file access denied under workspace-write mode]";
const string kQuestion = "Retry this command once? [y/N]";

std::size_t count(const string& text, const string& needle) {
  std::size_t count = 0;
  for (std::size_t at = text.find(needle); at != string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

bool has_cli_line(const string& err) { return err.find("dsh-sandbox: ") != string::npos; }

// Exit 125, nothing on stdout, exactly one stderr line and it starts "dsh-sandbox: ".
void expect_one_cli_error_line(const CliResult& result) {
  EXPECT_TRUE(result.exited_with(125)) << result.describe();
  EXPECT_EQ(result.out, "") << result.describe();
  const vector<string> lines = split_lines(result.err);
  ASSERT_EQ(lines.size(), 1U) << result.describe();
  EXPECT_EQ(lines[0].rfind("dsh-sandbox: ", 0), 0U) << result.describe();
  EXPECT_TRUE(result.err.ends_with("\n")) << result.describe();
}

class CliRun : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!host_problem().empty()) DSH_SKIP_OR_FAIL(host_problem());
    ::chmod(dir_.path().c_str(), 0755);
  }

  // A config file in the private directory (0644, so the nobody leg could read it too).
  string write_config(const string& json) {
    const string path = dir_ / (unique("config") + ".json");
    write_file(path, json);
    return path;
  }

  // `run` + the options that select `backend`: nothing for the host's natural chain, a config
  // with a missing bwrap for Landlock.
  vector<string> Run(Backend backend) {
    if (backend == Backend::kNatural) return {"run"};
    return {"run", "--config", write_config(R"({"bwrapPath":"/nonexistent/dsh-cli-run/bwrap"})")};
  }

  static vector<string> plus(vector<string> head, const vector<string>& tail) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  }

  TempDir dir_;
};

class CliRunOn : public CliRun, public ::testing::WithParamInterface<Backend> {
 protected:
  vector<string> Run() { return CliRun::Run(GetParam()); }
};

INSTANTIATE_TEST_SUITE_P(Backends, CliRunOn,
                         ::testing::Values(Backend::kNatural, Backend::kLandlock),
                         [](const ::testing::TestParamInfo<Backend>& param) {
                           return string(param.param == Backend::kNatural ? "bwrap" : "landlock");
                         });

// ---- 1. read-only denial -----------------------------------------------------------------------

TEST_P(CliRunOn, ReadOnlyWriteIsDeniedClassifiedAndAbsent) {
  const string ws = dir_.mkdir("ws");
  const string target = ws + "/f";
  const CliResult plain = cli(plus(Run(), {"--workspace", ws, "-c", "echo x > " + target}));
  EXPECT_TRUE(plain.exited_with(1)) << plain.describe();
  EXPECT_EQ(plain.out, "");
  ASSERT_FALSE(split_lines(plain.err).empty()) << plain.describe();
  EXPECT_EQ(split_lines(plain.err).back(), kReadOnlyMarker) << plain.describe();
  EXPECT_FALSE(exists(target));

  const CliResult json =
      cli(plus(Run(), {"--json", "--workspace", ws, "-c", "echo x > " + target}));
  EXPECT_TRUE(json.exited_with(1)) << json.describe();
  EXPECT_EQ(json.err, "") << json.describe();  // the object carries everything
  const nlohmann::json object = parse_json(json.out);
  EXPECT_EQ(object["denied"], true) << json.out;
  EXPECT_EQ(object["mode"], "read-only") << json.out;
  EXPECT_EQ(object["backend"], backend_name(GetParam())) << json.out;
  EXPECT_EQ(object["exitCode"], 1) << json.out;
  EXPECT_FALSE(exists(target));
  EXPECT_EQ(list_dir(ws), vector<string>{});

  // Control: the same write with the sandbox off lands, so the denial above was the sandbox's.
  const CliResult control = cli(
      plus(Run(), {"--mode", "danger-full-access", "--workspace", ws, "-c", "echo x > " + target}));
  EXPECT_TRUE(control.exited_with(0)) << control.describe();
  EXPECT_EQ(read_file(target), "x\n");
}

// ---- 2. workspace-write: inside lands, the sibling beside the workspace is denied --------------

TEST_P(CliRunOn, WorkspaceWriteLandsInsideAndTheSiblingIsDenied) {
  const string ws = dir_.mkdir("ws");
  const string sibling = dir_ / "sibling";
  const string command = "echo inside > " + ws + "/f; echo outside > " + sibling;
  const CliResult plain =
      cli(plus(Run(), {"--mode", "workspace-write", "--workspace", ws, "-c", command}));
  EXPECT_TRUE(plain.exited_with(1)) << plain.describe();
  ASSERT_FALSE(split_lines(plain.err).empty()) << plain.describe();
  EXPECT_EQ(split_lines(plain.err).back(), kWorkspaceWriteMarker) << plain.describe();
  EXPECT_EQ(read_file(ws + "/f"), "inside\n");
  EXPECT_FALSE(exists(sibling));

  ASSERT_EQ(::unlink((ws + "/f").c_str()), 0);
  const CliResult json =
      cli(plus(Run(), {"--json", "--mode", "workspace-write", "--workspace", ws, "-c", command}));
  const nlohmann::json object = parse_json(json.out);
  EXPECT_EQ(object["mode"], "workspace-write") << json.out;
  EXPECT_EQ(object["backend"], backend_name(GetParam())) << json.out;
  EXPECT_EQ(object["denied"], true) << json.out;
  EXPECT_EQ(read_file(ws + "/f"), "inside\n");
  EXPECT_FALSE(exists(sibling));

  // Only the write outside: denied, and the marker names the mode.
  const CliResult outside = cli(
      plus(Run(), {"--mode", "workspace-write", "--workspace", ws, "-c", "echo o > " + sibling}));
  EXPECT_TRUE(outside.exited_with(1)) << outside.describe();
  EXPECT_NE(outside.err.find(kWorkspaceWriteMarker), string::npos) << outside.describe();
  EXPECT_FALSE(exists(sibling));
  // A successful write alone: exit 0, no marker.
  const CliResult inside = cli(plus(
      Run(), {"--mode", "workspace-write", "--workspace", ws, "-c", "echo again > " + ws + "/g"}));
  EXPECT_TRUE(inside.exited_with(0)) << inside.describe();
  EXPECT_EQ(inside.err, "");
  EXPECT_EQ(read_file(ws + "/g"), "again\n");
}

// ---- 3. escalation: one question on a terminal, one retry under the narrowest wider mode -------

TEST_P(CliRunOn, ApprovedRetryOnATerminalLandsTheWrite) {
  const string ws = dir_.mkdir("ws");
  const CliResult result = cli_on_terminal(
      plus(Run(), {"--escalate", "ask", "--workspace", ws, "-c", "echo granted > " + ws + "/f"}),
      "y");
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(read_file(ws + "/f"), "granted\n");
  EXPECT_EQ(count(result.err, kQuestion), 1U) << result.describe();
  EXPECT_NE(result.err.find("escalate sandbox to workspace-write"), string::npos)
      << result.describe();
  // The denial marker comes before the question.
  EXPECT_LT(result.err.find(kReadOnlyMarker), result.err.find(kQuestion)) << result.describe();
}

TEST_P(CliRunOn, ApprovedRetryReportsTheModeItUsedInJson) {
  const string ws = dir_.mkdir("ws");
  const CliResult result = cli_on_terminal(
      plus(Run(),
           {"--json", "--escalate", "ask", "--workspace", ws, "-c", "echo json > " + ws + "/f"}),
      "y");
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(count(result.err, kQuestion), 1U) << result.describe();
  const nlohmann::json object = parse_json(result.out);
  EXPECT_EQ(object["mode"], "workspace-write") << result.out;
  EXPECT_EQ(object["denied"], false) << result.out;
  EXPECT_EQ(object["exitCode"], 0) << result.out;
  EXPECT_EQ(object["backend"], backend_name(GetParam())) << result.out;
  EXPECT_EQ(read_file(ws + "/f"), "json\n");
}

TEST_P(CliRunOn, TheRetryIsOnlyTheNarrowestWiderModeAndAskedOnce) {
  const string ws = dir_.mkdir("ws");
  const string sibling = dir_ / "sibling";
  // Denied under read-only; retried under workspace-write, where the sibling is still denied:
  // no second question, no danger-full-access.
  const CliResult result =
      cli_on_terminal(plus(Run(), {"--escalate", "ask", "--workspace", ws, "-c",
                                   "echo a > " + ws + "/f; echo b > " + sibling}),
                      "y");
  EXPECT_TRUE(result.exited_with(1)) << result.describe();
  EXPECT_EQ(count(result.err, kQuestion), 1U) << result.describe();
  EXPECT_NE(result.err.find(kWorkspaceWriteMarker), string::npos) << result.describe();
  EXPECT_EQ(read_file(ws + "/f"), "a\n");
  EXPECT_FALSE(exists(sibling));
}

// A first run under danger-full-access with --network is refused (nothing would enforce it); the
// retry from workspace-write to danger-full-access is held to the same check: never offered, the
// command not run again, the write outside still absent. Without --network it is offered.
TEST_P(CliRunOn, ARetryThatCouldNotEnforceTheNetworkPolicyIsNeverOffered) {
  const string ws = dir_.mkdir("ws");
  const string sibling = dir_ / "sibling";
  const vector<string> args = {"--mode", "workspace-write",    "--escalate",
                               "ask",    "--workspace",        ws,
                               "-c",     "echo b > " + sibling};
  const CliResult with_network =
      cli_on_terminal(plus(Run(), plus({"--network", "deny"}, args)), "y");
  EXPECT_TRUE(with_network.exited_with(1)) << with_network.describe();
  EXPECT_EQ(count(with_network.err, kQuestion), 0U) << with_network.describe();
  EXPECT_NE(with_network.err.find("no retry under danger-full-access"), string::npos)
      << with_network.describe();
  EXPECT_NE(with_network.err.find("--network deny"), string::npos) << with_network.describe();
  EXPECT_FALSE(exists(sibling));
  // The same denial without --network is offered the wider mode (declined here).
  const CliResult without = cli_on_terminal(plus(Run(), args), "n");
  EXPECT_TRUE(without.exited_with(1)) << without.describe();
  EXPECT_EQ(count(without.err, kQuestion), 1U) << without.describe();
  EXPECT_NE(without.err.find("escalate sandbox to danger-full-access"), string::npos)
      << without.describe();
  EXPECT_FALSE(exists(sibling));
}

TEST_P(CliRunOn, ARejectedRetryRunsNothingMore) {
  const string ws = dir_.mkdir("ws");
  for (const string answer : {"n", "", "maybe"}) {
    SCOPED_TRACE("answer [" + answer + "]");
    const CliResult result = cli_on_terminal(
        plus(Run(), {"--escalate", "ask", "--workspace", ws, "-c", "echo no > " + ws + "/f"}),
        answer);
    EXPECT_TRUE(result.exited_with(1)) << result.describe();
    EXPECT_EQ(count(result.err, kQuestion), 1U) << result.describe();
    EXPECT_FALSE(exists(ws + "/f"));
  }
  EXPECT_EQ(list_dir(ws), vector<string>{});
}

TEST_P(CliRunOn, NoQuestionWithoutATerminalOrWithEscalateNever) {
  const string ws = dir_.mkdir("ws");
  const string command = "echo q > " + ws + "/f";
  const CliResult piped = cli(plus(Run(), {"--escalate", "ask", "--workspace", ws, "-c", command}));
  EXPECT_TRUE(piped.exited_with(1)) << piped.describe();
  EXPECT_EQ(piped.err.find(kQuestion), string::npos) << piped.describe();
  const CliResult never =
      cli_on_terminal(plus(Run(), {"--escalate", "never", "--workspace", ws, "-c", command}), "y");
  EXPECT_TRUE(never.exited_with(1)) << never.describe();
  EXPECT_EQ(never.err.find(kQuestion), string::npos) << never.describe();
  const CliResult unset = cli_on_terminal(plus(Run(), {"--workspace", ws, "-c", command}), "y");
  EXPECT_TRUE(unset.exited_with(1)) << unset.describe();
  EXPECT_EQ(unset.err.find(kQuestion), string::npos) << unset.describe();
  EXPECT_FALSE(exists(ws + "/f"));
}

// ---- 4. a runner that cannot be spawned: 125, SANDBOX_UNAVAILABLE, nothing ran ----------------

class CliRunner : public CliRun {
 protected:
  void expect_unavailable(const string& runner, const string& detail) {
    SCOPED_TRACE("runner " + runner);
    const string ws = dir_.mkdir(unique("ws"));
    const string marker = ws + "/marker";
    const string config = write_config(R"({"runnerCommand":[")" + runner +
                                       R"("],"runnerFailureSignatures":["x: "]})");
    for (const string mode : {"read-only", "workspace-write"}) {
      const vector<string> args = {"run",         "--config", config, "--mode",         mode,
                                   "--workspace", ws,         "-c",   "touch " + marker};
      const CliResult plain = cli(args);
      expect_one_cli_error_line(plain);
      EXPECT_EQ(plain.err.rfind("dsh-sandbox: sandbox mode \"" + string(mode) + "\"", 0), 0U)
          << plain.describe();
      EXPECT_NE(plain.err.find("Runner failure: " + detail), string::npos) << plain.describe();
      EXPECT_FALSE(exists(marker));

      const CliResult json =
          cli(plus({"run", "--json"}, vector<string>(args.begin() + 1, args.end())));
      EXPECT_TRUE(json.exited_with(125)) << json.describe();
      EXPECT_EQ(split_lines(json.err).size(), 1U) << json.describe();
      EXPECT_NE(json.err.find("Runner failure: " + detail), string::npos) << json.describe();

      const CliResult agent =
          cli(plus({"run", "--format", "agent"}, vector<string>(args.begin() + 1, args.end())));
      EXPECT_TRUE(agent.exited_with(125)) << agent.describe();
      EXPECT_EQ(agent.out.rfind("Error: sandbox mode \"" + string(mode) + "\"", 0), 0U)
          << agent.describe();
      EXPECT_NE(agent.out.find("Runner failure: " + detail), string::npos) << agent.describe();
      EXPECT_FALSE(exists(marker));
    }
    EXPECT_EQ(list_dir(ws), vector<string>{});
  }
};

TEST_F(CliRunner, MissingRunnerIsUnavailableAndNothingRuns) {
  const string runner = dir_ / "missing-runner";
  expect_unavailable(runner, "Error: spawn " + runner + " ENOENT");
  expect_unavailable("/abs/missing-runner", "Error: spawn /abs/missing-runner ENOENT");
}

TEST_F(CliRunner, NonExecutableRunnerIsUnavailableAndNothingRuns) {
  const string runner = dir_ / "runner-0644";
  write_file(runner, "#!/bin/sh\nexec \"$@\"\n", 0644);
  if (is_root()) {
    // root's execute permission still needs one x bit: 0644 is refused for root too.
    ASSERT_NE(::access(runner.c_str(), X_OK), 0);
  }
  expect_unavailable(runner, "Error: spawn " + runner + " EACCES");
}

TEST_F(CliRunner, RunnerWithAMissingInterpreterIsUnavailable) {
  const string runner = dir_ / "runner-interp";
  write_file(runner, "#!/nonexistent/dsh-cli-run/interpreter\nexec \"$@\"\n", 0755);
  expect_unavailable(runner, "Error: spawn " + runner + " ENOENT");
}

// ---- 5. a child's own 125/126/127 stays ordinary --------------------------------------------

TEST_P(CliRunOn, ChildExitCodes125To127StayOrdinary) {
  const string ws = dir_.mkdir("ws");
  for (const int code : {125, 126, 127}) {
    SCOPED_TRACE(code);
    const string command = "echo own >&2; exit " + std::to_string(code);
    const CliResult plain = cli(plus(Run(), {"--workspace", ws, "-c", command}));
    EXPECT_TRUE(plain.exited_with(code)) << plain.describe();
    EXPECT_EQ(plain.err, "own\n") << plain.describe();
    const CliResult json = cli(plus(Run(), {"--json", "--workspace", ws, "-c", command}));
    EXPECT_TRUE(json.exited_with(code)) << json.describe();
    EXPECT_FALSE(has_cli_line(json.err)) << json.describe();
    const nlohmann::json object = parse_json(json.out);
    EXPECT_EQ(object["exitCode"], code) << json.out;
    EXPECT_EQ(object["runnerFailed"], false) << json.out;
    EXPECT_EQ(object["denied"], false) << json.out;
  }
  // bash's own 127 for a missing program and 126 for a non-executable one: ordinary too.
  write_file(ws + "/noexec", "#!/bin/sh\n", 0644);
  const CliResult missing =
      cli(plus(Run(), {"--workspace", ws, "-c", "/nonexistent/dsh-cli-run/program"}));
  EXPECT_TRUE(missing.exited_with(127)) << missing.describe();
  EXPECT_FALSE(has_cli_line(missing.err)) << missing.describe();
  const CliResult noexec = cli(plus(Run(), {"--workspace", ws, "-c", ws + "/noexec"}));
  EXPECT_TRUE(noexec.exited_with(126)) << noexec.describe();
  EXPECT_FALSE(has_cli_line(noexec.err)) << noexec.describe();
}

// `-- ARGV` has no shell in front: the runner execs the program itself, after every restriction
// is in place. Its refusal, reported by the runner out of band, means the command never started,
// as under danger-full-access: 127/126 as a shell reports it, one "cannot start the command" line,
// notStarted in the JSON; never "no sandbox backend is usable".
TEST_P(CliRunOn, AProgramTheKernelRefusesToExecuteNeverStarted) {
  const string ws = dir_.mkdir("ws");
  write_file(ws + "/noexec", "#!/bin/sh\n", 0644);
  for (const auto& [program, code, why] : vector<std::tuple<string, int, string>>{
           {"/nonexistent/dsh-cli-run/program", 127, "ENOENT (No such file or directory)"},
           {ws + "/noexec", 126, "EACCES (Permission denied)"}}) {
    SCOPED_TRACE(program);
    const string line = "cannot start the command: spawn " + program + " " + why;
    const CliResult plain = cli(plus(Run(), {"--workspace", ws, "--", program}));
    EXPECT_TRUE(plain.exited_with(code)) << plain.describe();
    EXPECT_NE(plain.err.find("dsh-sandbox: " + line + "\n"), string::npos) << plain.describe();
    const CliResult json = cli(plus(Run(), {"--json", "--workspace", ws, "--", program}));
    EXPECT_TRUE(json.exited_with(code)) << json.describe();
    const nlohmann::json object = parse_json(json.out);
    EXPECT_TRUE(object["exitCode"].is_null()) << json.out;
    EXPECT_EQ(object["notStarted"], line) << json.out;
    EXPECT_EQ(object["runnerFailed"], false) << json.out;
    EXPECT_EQ(object["denied"], false) << json.out;
    EXPECT_EQ(object["backend"], backend_name(GetParam())) << json.out;
  }
}

// Where the command runs is the tool layer's rule: with no --workdir the policy's root (not the
// caller's directory), a relative --workdir against that root, an absolute one as given.
TEST_P(CliRunOn, WithoutWorkdirTheCommandRunsInTheWorkspaceRoot) {
  const string ws = dir_.mkdir("ws");
  const string elsewhere = dir_.mkdir("elsewhere");
  CliResult result;
  {
    const testing::CwdGuard in(elsewhere);
    result = cli(plus(Run(), {"--workspace", ws, "--", "/bin/sh", "-c", "pwd -P"}));
  }
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.out, std::filesystem::canonical(ws).string() + "\n") << result.describe();
}

TEST_P(CliRunOn, ARelativeWorkdirIsResolvedAgainstTheRoot) {
  const string ws = dir_.mkdir("ws");
  dir_.mkdir("ws/sub");
  dir_.mkdir("elsewhere");
  dir_.mkdir("elsewhere/sub");  // what the caller's directory would have given
  CliResult result;
  CliResult missing;
  {
    const testing::CwdGuard in(dir_ / "elsewhere");
    result = cli(plus(
        Run(), {"--workspace", ws, "--workdir", "sub/../sub", "--", "/bin/sh", "-c", "pwd -P"}));
    missing = cli(plus(Run(), {"--workspace", ws, "--workdir", "gone", "--", "true"}));
  }
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.out, std::filesystem::canonical(ws).string() + "/sub\n") << result.describe();
  // A missing workdir is an ordinary start failure (127, the directory named), never the
  // sandbox's: the contract's "a missing cwd must stay an ordinary error".
  EXPECT_TRUE(missing.exited_with(127)) << missing.describe();
  EXPECT_NE(missing.err.find("dsh-sandbox: cannot start the command: chdir " +
                             std::filesystem::canonical(ws).string() + "/gone"),
            string::npos)
      << missing.describe();
  EXPECT_EQ(missing.err.find("SANDBOX_UNAVAILABLE"), string::npos) << missing.describe();
}

// An absolute --workdir is used as given, or the command does not run. bwrap's own /dev hides
// /dev/shm: bwrap would fall back to $HOME unless told --chdir; Landlock hides nothing.
TEST_P(CliRunOn, AnAbsoluteWorkdirIsUsedAsGivenOrNotAtAll) {
  const string ws = dir_.mkdir("ws");
  const string elsewhere = "/dev/shm/" + unique("dsh-cli-run-cwd");
  ASSERT_EQ(::mkdir(elsewhere.c_str(), 0700), 0) << elsewhere << ": " << std::strerror(errno);
  const CliResult result =
      cli(plus(Run(), {"--mode", "workspace-write", "--workspace", ws, "--workdir", elsewhere, "--",
                       "/bin/sh", "-c", "pwd > " + ws + "/marker"}));
  ::rmdir(elsewhere.c_str());
  if (GetParam() == Backend::kLandlock) {
    EXPECT_TRUE(result.exited_with(0)) << result.describe();
    EXPECT_EQ(split_lines(read_file(ws + "/marker")), vector<string>{elsewhere});
    return;
  }
  EXPECT_TRUE(result.exited_with(127)) << result.describe();
  EXPECT_NE(result.err.find("dsh-sandbox: cannot start the command: chdir " + elsewhere),
            string::npos)
      << result.describe();
  EXPECT_NE(result.err.find("bwrap's view of the filesystem hides that directory"), string::npos)
      << result.describe();
  EXPECT_FALSE(exists(ws + "/marker"));
}

// With --session and no --workspace, the root is the session's recorded cwd, and so is the
// working directory.
TEST_P(CliRunOn, TheSessionsCwdIsTheDefaultWorkdir) {
  const string ws = dir_.mkdir("ws");
  const string log = dir_ / "session.jsonl";
  (void)sandbox::SessionLog::create(log, "cli-run-workdir", ws);
  CliResult result;
  {
    const testing::CwdGuard in(dir_.mkdir("elsewhere"));
    result = cli(plus(Run(), {"--session", log, "--", "/bin/sh", "-c", "pwd -P"}));
  }
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.out, std::filesystem::canonical(ws).string() + "\n") << result.describe();
}

// landlock-run reports its own failures on --status-fd and bwrap on --json-status-fd, out of
// band, on both layers of the chain: a child that prints a runner's words and exits with the
// runner's failure code is an ordinary failure.
TEST_P(CliRunOn, SpoofedRunnerLinesStayOrdinary) {
  const string ws = dir_.mkdir("ws");
  for (const auto& [line, code] : vector<std::pair<string, int>>{
           {"landlock-run: exec failed: spoofed", 125},
           {"landlock-run: Landlock is not enforced by this kernel", 125},
           {"landlock-run: cannot open rule path: /x: Permission denied", 125},
           {"bwrap: Creating new namespace failed: spoofed", 1}}) {
    SCOPED_TRACE(line);
    const string command = "echo '" + line + "' >&2; exit " + std::to_string(code);
    const CliResult plain = cli(plus(Run(), {"--workspace", ws, "-c", command}));
    EXPECT_TRUE(plain.exited_with(code)) << plain.describe();
    EXPECT_FALSE(has_cli_line(plain.err)) << plain.describe();
    // The child's own line comes through; one that carries denial words is (rightly) a denial.
    EXPECT_EQ(plain.err.rfind(line + "\n", 0), 0U) << plain.describe();
    const CliResult json = cli(plus(Run(), {"--json", "--workspace", ws, "-c", command}));
    EXPECT_TRUE(json.exited_with(code)) << json.describe();
    const nlohmann::json object = parse_json(json.out);
    EXPECT_EQ(object["backend"], backend_name(GetParam())) << json.out;
    EXPECT_EQ(object["runnerFailed"], false) << json.out;
    EXPECT_EQ(object["exitCode"], code) << json.out;
    EXPECT_EQ(object["stderr"], line + "\n") << json.out;
  }
}

// ---- 6. timeout and normal exit: nothing of the tree survives, judged from /proc --------------

class TreeWatch {
 public:
  // A bash script that leaves behind a plain background child, a setsid'ed one and a double-
  // forked orphan, each renamed <token>-<role> (exec -a) so /proc finds it from outside, and
  // records their pids (as the command sees them) in `pids`.
  TreeWatch() : token_(unique("dshtree")) {}
  string spawners(const string& pids) const {
    return "(exec -a " + token_ + "-child sleep 30) & echo $! > " + pids +
           "; setsid bash -c 'exec -a " + token_ + "-setsid sleep 30' & echo $! >> " + pids +
           "; bash -c '(exec -a " + token_ + "-orphan sleep 30) & echo $! >> " + pids + "'";
  }
  const string& token() const { return token_; }
  // Polls /proc while `cli` runs until every role in `roles` was seen (or 10 s passed).
  void collect(const vector<string>& roles) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
      for (const pid_t pid : processes_named(token_ + "-")) {
        const string cmdline = process_cmdline(pid);
        seen_[pid] = cmdline.substr(0, cmdline.find(' '));
      }
      std::set<string> names;
      for (const auto& [pid, name] : seen_) names.insert(name);
      if (std::all_of(roles.begin(), roles.end(),
                      [&](const string& role) { return names.count(token_ + "-" + role) > 0; })) {
        return;
      }
      std::this_thread::sleep_for(10ms);
    }
    ADD_FAILURE() << "not every process of the tree was seen from outside: " << seen_.size();
  }
  // After the CLI returned: every process seen is gone or a zombie, and no live process of the
  // tree exists at all.
  void expect_none_alive(const vector<pid_t>& also = {}) const {
    vector<pid_t> pids = also;
    for (const auto& [pid, name] : seen_) pids.push_back(pid);
    for (const pid_t pid : pids) {
      const char state = process_state(pid);
      const bool ours = process_cmdline(pid).rfind(token_, 0) == 0;  // a zombie's cmdline is empty
      EXPECT_FALSE(ours && state != 'Z' && state != '\0')
          << "pid " << pid << " (" << process_cmdline(pid) << ") is alive, state " << state;
    }
    for (const pid_t pid : processes_named(token_)) {
      EXPECT_EQ(process_state(pid), 'Z')
          << "pid " << pid << " (" << process_cmdline(pid) << ") survived";
    }
  }

 private:
  string token_;
  std::map<pid_t, string> seen_;
};

vector<pid_t> read_pids(const string& path) {
  vector<pid_t> pids;
  for (const string& line : split_lines(read_file(path))) pids.push_back(std::atoi(line.c_str()));
  return pids;
}

TEST_P(CliRunOn, TimeoutExits124AndLeavesNoProcessOfTheTreeAlive) {
  const string ws = dir_.mkdir("ws");
  const string pids = ws + "/pids";
  TreeWatch tree;
  const string script = tree.spawners(pids) + "; exec -a " + tree.token() + "-main sleep 30";
  Started cli(plus(Run(), {"--mode", "workspace-write", "--workspace", ws, "--timeout", "1", "--",
                           "/bin/bash", "-c", script}));
  tree.collect({"child", "setsid", "orphan", "main"});
  const CliResult result = cli.wait();
  EXPECT_TRUE(result.exited_with(124)) << result.describe();
  EXPECT_FALSE(has_cli_line(result.err)) << result.describe();
  EXPECT_LT(result.elapsed, 8s) << result.describe();  // 1 s deadline + 3 s grace at most
  // Under Landlock the recorded pids are host pids; under bwrap they are the PID namespace's,
  // and the /proc scan by name covers them.
  const vector<pid_t> recorded = read_pids(pids);
  EXPECT_EQ(recorded.size(), 3U) << read_file(pids);
  tree.expect_none_alive(GetParam() == Backend::kLandlock ? recorded : vector<pid_t>{});
}

TEST_P(CliRunOn, TimeoutIsReportedInJsonAndAgentRender) {
  const string ws = dir_.mkdir("ws");
  const CliResult json =
      cli(plus(Run(), {"--json", "--timeout", "1", "--workspace", ws, "-c", "sleep 30"}));
  EXPECT_TRUE(json.exited_with(124)) << json.describe();
  const nlohmann::json object = parse_json(json.out);
  EXPECT_EQ(object["timedOut"], true) << json.out;
  EXPECT_EQ(object["denied"], false) << json.out;
  const CliResult agent = cli(
      plus(Run(), {"--format", "agent", "--timeout", "1", "--workspace", ws, "-c", "sleep 30"}));
  EXPECT_TRUE(agent.exited_with(124)) << agent.describe();
  EXPECT_NE(agent.out.find("[timed out after 1000ms]"), string::npos) << agent.describe();
}

TEST_P(CliRunOn, NormalExitLeavesNoDescendantBehind) {
  const string ws = dir_.mkdir("ws");
  const string pids = ws + "/pids";
  TreeWatch tree;
  const string script = tree.spawners(pids) + "; sleep 1; exit 7";
  Started cli(plus(
      Run(), {"--mode", "workspace-write", "--workspace", ws, "--", "/bin/bash", "-c", script}));
  tree.collect({"child", "setsid", "orphan"});
  const CliResult result = cli.wait();
  EXPECT_TRUE(result.exited_with(7)) << result.describe();
  EXPECT_EQ(result.err, "") << result.describe();
  EXPECT_LT(result.elapsed, 10s) << result.describe();  // not held open by the leftovers
  const vector<pid_t> recorded = read_pids(pids);
  EXPECT_EQ(recorded.size(), 3U) << read_file(pids);
  tree.expect_none_alive(GetParam() == Backend::kLandlock ? recorded : vector<pid_t>{});
}

// ---- 7. signal death, --json, --format agent, bad input -------------------------------------

TEST_P(CliRunOn, SignalDeathExits128PlusN) {
  const string ws = dir_.mkdir("ws");
  for (const auto& [signal, name] : vector<std::pair<int, string>>{{15, "TERM"}, {9, "KILL"}}) {
    const CliResult result = cli(plus(Run(), {"--workspace", ws, "-c", "kill -" + name + " $$"}));
    EXPECT_TRUE(result.exited_with(128 + signal)) << result.describe();
    EXPECT_FALSE(has_cli_line(result.err)) << result.describe();
  }
}

// Where the command is the runner's direct child (Landlock execs; danger-full-access has no
// runner) the CLI sees the signal itself and reports it by name.
TEST_F(CliRun, SignalIsReportedByNameInJsonAndAgentRender) {
  const string ws = dir_.mkdir("ws");
  for (const vector<string>& head :
       {Run(Backend::kLandlock), vector<string>{"run", "--mode", "danger-full-access"}}) {
    SCOPED_TRACE(::testing::PrintToString(head));
    const CliResult json = cli(plus(head, {"--json", "--workspace", ws, "-c", "kill -KILL $$"}));
    EXPECT_TRUE(json.exited_with(137)) << json.describe();
    const nlohmann::json object = parse_json(json.out);
    EXPECT_EQ(object["signal"], "SIGKILL") << json.out;
    EXPECT_TRUE(object["exitCode"].is_null()) << json.out;
    EXPECT_EQ(object["denied"], false) << json.out;
    const CliResult agent =
        cli(plus(head, {"--format", "agent", "--workspace", ws, "-c", "kill -TERM $$"}));
    EXPECT_TRUE(agent.exited_with(143)) << agent.describe();
    EXPECT_EQ(agent.out, "(no output)\n[killed by signal: SIGTERM]\n") << agent.describe();
  }
}

TEST_P(CliRunOn, JsonIsOneObjectWithTheDocumentedFieldsAndTypes) {
  const string ws = dir_.mkdir("ws");
  const CliResult result =
      cli(plus(Run(), {"--json", "--workspace", ws, "-c", "echo out; echo err >&2; exit 3"}));
  EXPECT_TRUE(result.exited_with(3)) << result.describe();
  EXPECT_EQ(result.err, "") << result.describe();
  EXPECT_EQ(count(result.out, "\n"), 1U) << result.out;  // one line
  const nlohmann::json object = parse_json(result.out);
  ASSERT_TRUE(object.is_object()) << result.out;
  vector<string> keys;
  for (const auto& [key, value] : object.items()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys,
            (vector<string>{
                "backend",    "bounds",      "denialCount",  "denialSource",  "denials", "denied",
                "durationMs", "enforcement", "exitCode",     "interrupted",   "mode",    "network",
                "notStarted", "policy",      "runnerFailed", "schemaVersion", "signal",  "stderr",
                "stdout",     "timedOut",    "truncated",    "workspaceRoot"}));
  EXPECT_EQ(object["mode"], "read-only");
  EXPECT_EQ(object["policy"]["mode"], "read-only");
  EXPECT_TRUE(object["policy"]["protected"].is_array());
  EXPECT_EQ(object["backend"], backend_name(GetParam()));
  EXPECT_TRUE(object["enforcement"] == "full" || object["enforcement"] == "partial") << result.out;
  EXPECT_TRUE(object["exitCode"].is_number_integer());
  EXPECT_EQ(object["exitCode"], 3);
  EXPECT_TRUE(object["signal"].is_null());
  EXPECT_EQ(object["timedOut"], false);
  EXPECT_EQ(object["denied"], false);
  EXPECT_EQ(object["runnerFailed"], false);
  EXPECT_EQ(object["stdout"], "out\n");
  EXPECT_EQ(object["stderr"], "err\n");
  EXPECT_TRUE(object["durationMs"].is_number_integer());
  EXPECT_GE(object["durationMs"].get<long long>(), 0);
  EXPECT_TRUE(object["interrupted"].is_null());
  // The bounds: on by default, each with the mechanism that enforced it.
  const nlohmann::json& bounds = object["bounds"];
  EXPECT_EQ(bounds["processes"]["max"], 4096) << result.out;
  EXPECT_TRUE(bounds["memory"]["max"].is_number_unsigned()) << result.out;
  EXPECT_TRUE(bounds["memory"]["enforcedBy"].is_string()) << result.out;
  EXPECT_TRUE(bounds["treeKill"] == "subreaper" || bounds["treeKill"] == "cgroup2 cgroup.kill")
      << result.out;
  if (!is_root()) {
    EXPECT_TRUE(bounds["processes"]["enforcedBy"].is_string()) << result.out;
  }

  // danger-full-access never reaches a provider: no backend, no enforcement.
  const CliResult open =
      cli(plus(Run(), {"--json", "--mode", "danger-full-access", "--workspace", ws, "--", "true"}));
  EXPECT_TRUE(open.exited_with(0)) << open.describe();
  const nlohmann::json unconfined = parse_json(open.out);
  EXPECT_EQ(unconfined["mode"], "danger-full-access");
  EXPECT_TRUE(unconfined["backend"].is_null()) << open.out;
  EXPECT_TRUE(unconfined["enforcement"].is_null()) << open.out;
  EXPECT_EQ(unconfined["exitCode"], 0);
}

TEST_P(CliRunOn, AgentRenderEndsWithTheExitCodeAfterTheDenialMarker) {
  const string ws = dir_.mkdir("ws");
  const CliResult result =
      cli(plus(Run(), {"--format", "agent", "--workspace", ws, "-c", "echo x > " + ws + "/f"}));
  EXPECT_TRUE(result.exited_with(1)) << result.describe();
  EXPECT_EQ(result.err, "") << result.describe();
  EXPECT_FALSE(exists(ws + "/f"));
  // The evidence lines (what was refused, the narrowest change) come after the hint.
  const vector<string> all_lines = split_lines(result.out);
  vector<string> lines;
  for (const string& line : all_lines) {
    if (line.rfind("[sandbox refused", 0) != 0 && line.rfind("[narrowest change", 0) != 0) {
      lines.push_back(line);
    }
  }
  EXPECT_NE(result.out.find("[sandbox refused: create " + ws + "/f (read-only-mode)]"),
            string::npos)
      << result.out;
  ASSERT_GE(lines.size(), 4U) << result.out;
  // The command's stderr inside its fence, then the sandbox's own lines.
  EXPECT_EQ(lines.front().rfind("<stderr ", 0), 0U) << result.out;
  EXPECT_EQ(lines[lines.size() - 4], "</stderr " + lines.front().substr(8)) << result.out;
  EXPECT_EQ(lines[lines.size() - 3], kReadOnlyMarker) << result.out;
  EXPECT_EQ(lines[lines.size() - 2].rfind("[sandbox: escalation available", 0), 0U) << result.out;
  EXPECT_EQ(lines.back(), "[exit code: 1]") << result.out;
  EXPECT_TRUE(result.out.ends_with("[exit code: 1]\n")) << result.out;

  // Under danger-full-access no wider mode exists: no hint; clean output renders as is.
  const CliResult clean = cli(plus(Run(), {"--format", "agent", "--workspace", ws, "--", "true"}));
  EXPECT_TRUE(clean.exited_with(0)) << clean.describe();
  EXPECT_EQ(clean.out, "(no output)\n[exit code: 0]\n");
}

// A command that never started says why on every output: one "dsh-sandbox: " line (with --json
// too, whose object has no field for it), and an Error line as the whole agent render.
TEST_F(CliRun, AStartFailureIsExplainedInEachFormat) {
  const string program = "/nonexistent/dsh-cli-run/program";
  const string why = "cannot start the command: spawn " + program + " ENOENT";
  const vector<string> run = {"run", "--mode", "danger-full-access", "--"};
  const CliResult plain = cli(plus(run, {program}));
  EXPECT_TRUE(plain.exited_with(127)) << plain.describe();
  EXPECT_EQ(plain.err.rfind("dsh-sandbox: " + why, 0), 0U) << plain.describe();
  const CliResult json =
      cli(plus({"run", "--json", "--mode", "danger-full-access", "--"}, {program}));
  EXPECT_TRUE(json.exited_with(127)) << json.describe();
  EXPECT_TRUE(parse_json(json.out)["exitCode"].is_null()) << json.out;
  EXPECT_EQ(split_lines(json.err),
            vector<string>{"dsh-sandbox: " + why + " (No such file or directory)"});
  const CliResult agent =
      cli(plus({"run", "--format", "agent", "--mode", "danger-full-access", "--"}, {program}));
  EXPECT_TRUE(agent.exited_with(127)) << agent.describe();
  EXPECT_EQ(agent.out, "Error: " + why + " (No such file or directory)\n") << agent.describe();
}

class CliBadInput : public CliRun {
 protected:
  void SetUp() override {
    CliRun::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ws_ = dir_.mkdir("ws");
    outside_ = dir_.mkdir("outside", 0777);
    marker_ = outside_ + "/marker";
    // Unconfined by config: if any bad call ran its command, the marker would land.
    open_ = write_config(R"({"mode":"danger-full-access"})");
  }
  void expect_refused(const vector<string>& args, const string& mentions) {
    SCOPED_TRACE(::testing::PrintToString(args));
    const CliResult result = cli(args);
    expect_one_cli_error_line(result);
    EXPECT_NE(result.err.find(mentions), string::npos) << result.describe();
    EXPECT_FALSE(exists(marker_)) << result.describe();
  }
  string touch() const { return "touch " + marker_; }
  string ws_, outside_, marker_, open_;
};

TEST_F(CliBadInput, ControlTheSameCallWithGoodInputRuns) {
  const CliResult result = cli({"run", "--config", open_, "--workspace", ws_, "-c", touch()});
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_TRUE(exists(marker_));
}

TEST_F(CliBadInput, EachIsRefusedWith125AndRunsNothing) {
  expect_refused({"run", "--config", open_, "--mode", "yolo", "--workspace", ws_, "-c", touch()},
                 "yolo");
  expect_refused({"run", "--config", open_, "--workspace", "relative/ws", "-c", touch()},
                 "relative/ws");
  expect_refused({"run", "--config", open_, "--workspace", dir_ / "missing", "-c", touch()},
                 dir_ / "missing");
  expect_refused(
      {"run", "--config", open_, "--workspace", ws_, "-c", touch(), "--", "/bin/sh", "-c", touch()},
      "exactly once");
  expect_refused({"run", "--config", open_, "--workspace", ws_}, "exactly once");
  expect_refused({"run", "--config", open_, "--workspace", ws_, "-c", ""}, "exactly once");
  expect_refused({"run", "--config", open_, "--format", "yaml", "--workspace", ws_, "-c", touch()},
                 "yaml");
  expect_refused({"run", "--config", dir_ / "missing.json", "--workspace", ws_, "-c", touch()},
                 dir_ / "missing.json");
  expect_refused(
      {"run", "--config", open_, "--network", "sometimes", "--workspace", ws_, "-c", touch()},
      "sometimes");
  expect_refused({"run", "--config", open_, "--timeout", "0", "--workspace", ws_, "-c", touch()},
                 "timeout");
  expect_refused(
      {"run", "--config", open_, "--escalate", "always", "--workspace", ws_, "-c", touch()},
      "always");
  const string malformed = write_config("{not json");
  expect_refused({"run", "--config", malformed, "--workspace", ws_, "-c", touch()}, malformed);
  if (!is_root()) {  // root reads a 0000 file
    const string unreadable = write_config(R"({"mode":"danger-full-access"})");
    ASSERT_EQ(::chmod(unreadable.c_str(), 0), 0);
    expect_refused({"run", "--config", unreadable, "--workspace", ws_, "-c", touch()}, unreadable);
  }
  EXPECT_EQ(list_dir(outside_), vector<string>{});
}

// ---- 8. 200 concurrent runs, distinct workspaces, each lands its own write only ---------------

TEST_F(CliRun, TwoHundredConcurrentRunsLandOnlyTheirOwnWrites) {
  constexpr std::size_t kRuns = 200;
  constexpr std::size_t kWave = 40;
  vector<string> workspaces;
  for (std::size_t i = 0; i < kRuns; ++i)
    workspaces.push_back(dir_.mkdir("ws" + std::to_string(i)));
  // Half on each backend; each also tries its neighbour's workspace, which must stay clean.
  const vector<string> landlock = Run(Backend::kLandlock);
  const auto start = std::chrono::steady_clock::now();
  vector<CliResult> results(kRuns);
  for (std::size_t first = 0; first < kRuns; first += kWave) {
    vector<std::unique_ptr<Started>> wave;
    for (std::size_t i = first; i < std::min(kRuns, first + kWave); ++i) {
      const string& ws = workspaces[i];
      const string& neighbour = workspaces[(i + 1) % kRuns];
      const string command = "echo " + std::to_string(i) + " > " + ws + "/own-" +
                             std::to_string(i) + "; echo " + std::to_string(i) + " > " + neighbour +
                             "/from-" + std::to_string(i);
      const vector<string> head = i % 2 == 0 ? vector<string>{"run"} : landlock;
      wave.push_back(std::make_unique<Started>(
          plus(head, {"--mode", "workspace-write", "--workspace", ws, "-c", command})));
    }
    for (std::size_t i = first; i < std::min(kRuns, first + kWave); ++i) {
      results[i] = wave[i - first]->wait();
    }
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, 45s);
  std::cout << "[          ] " << kRuns << " runs in "
            << std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count() << " ms\n";
  int failures = 0;
  for (std::size_t i = 0; i < kRuns && failures < 5; ++i) {
    SCOPED_TRACE("run " + std::to_string(i));
    const string own = "own-" + std::to_string(i);
    const bool ok = results[i].exited_with(1) &&
                    results[i].err.find(kWorkspaceWriteMarker) != string::npos &&
                    list_dir(workspaces[i]) == vector<string>{own} &&
                    read_file(workspaces[i] + "/" + own) == std::to_string(i) + "\n";
    if (!ok) {
      ++failures;
      ADD_FAILURE() << results[i].describe() << "\nworkspace holds "
                    << ::testing::PrintToString(list_dir(workspaces[i]));
    }
  }
  EXPECT_EQ(failures, 0);
}

// ---- 9. --session: the session's last sandbox/mode event, outranked by --mode ----------------

TEST_P(CliRunOn, SessionModeIsUsedAndTheCommandLineModeOutranksIt) {
  const string ws = dir_.mkdir("ws");
  const string log = dir_ / "session.jsonl";
  {
    const sandbox::SessionLog session = sandbox::SessionLog::create(log, "cli-run-it", ws);
    sandbox::set_sandbox_mode(session, sandbox::SandboxMode::kWorkspaceWrite);
  }
  const string before = read_file(log);

  const CliResult session_mode =
      cli(plus(Run(), {"--session", log, "--workspace", ws, "-c", "echo s > " + ws + "/f"}));
  EXPECT_TRUE(session_mode.exited_with(0)) << session_mode.describe();
  EXPECT_EQ(read_file(ws + "/f"), "s\n");
  const CliResult json =
      cli(plus(Run(), {"--json", "--session", log, "--workspace", ws, "--", "true"}));
  EXPECT_EQ(parse_json(json.out)["mode"], "workspace-write") << json.out;

  const CliResult outranked = cli(plus(Run(), {"--mode", "read-only", "--session", log,
                                               "--workspace", ws, "-c", "echo r > " + ws + "/g"}));
  EXPECT_TRUE(outranked.exited_with(1)) << outranked.describe();
  EXPECT_NE(outranked.err.find(kReadOnlyMarker), string::npos) << outranked.describe();
  EXPECT_FALSE(exists(ws + "/g"));
  // Runs never change the session's mode; each appends its audit line (what ran, how it ended).
  const string after = read_file(log);
  ASSERT_EQ(after.rfind(before, 0), 0U) << after;
  const vector<string> audit = split_lines(after.substr(before.size()));
  ASSERT_EQ(audit.size(), 3U) << after;
  const vector<std::pair<string, bool>> expected = {
      {"workspace-write", false}, {"workspace-write", false}, {"read-only", true}};
  for (std::size_t i = 0; i < audit.size(); ++i) {
    const nlohmann::json event = parse_json(audit[i]);
    EXPECT_EQ(event["type"], "sandbox/run") << audit[i];
    EXPECT_EQ(event["payload"]["mode"], expected[i].first) << audit[i];
    EXPECT_EQ(event["payload"]["denied"], expected[i].second) << audit[i];
    EXPECT_EQ(event["payload"]["workspace"], ws) << audit[i];
    EXPECT_EQ(event["payload"]["backend"], backend_name(GetParam())) << audit[i];
  }
  EXPECT_EQ(parse_json(audit[2])["payload"]["exitCode"], 1);
  EXPECT_EQ(parse_json(audit[2])["payload"]["denial"], kReadOnlyMarker);
  EXPECT_EQ(parse_json(audit[1])["payload"]["argv"], nlohmann::json::array({"true"}));

  // The last event wins: a later switch back to read-only is honoured at the next run.
  sandbox::set_sandbox_mode(sandbox::SessionLog::open(log), sandbox::SandboxMode::kReadOnly);
  const CliResult switched =
      cli(plus(Run(), {"--session", log, "--workspace", ws, "-c", "echo h > " + ws + "/h"}));
  EXPECT_TRUE(switched.exited_with(1)) << switched.describe();
  EXPECT_NE(switched.err.find(kReadOnlyMarker), string::npos) << switched.describe();
  EXPECT_FALSE(exists(ws + "/h"));
  EXPECT_EQ(list_dir(ws), vector<string>{"f"});
}

// `confine` prints exactly the argv `run` executes: a runner that records the argv it was given
// (one word a line), then starts the real bwrap with it, stands in for bwrap (bwrapPath: the chain
// layers landlock-run inside it, with both status channels and --chdir) and for an operator's
// runnerCommand (the bwrap profile only). Checked from outside, on the record the runner wrote.
class ConfineMatchesRun : public CliRun {
 protected:
  // Writes the recording runner; returns its path.
  string recording_runner() {
    const string runner = dir_ / "recording-runner";
    write_file(runner,
               "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + record_ + "\nexec /usr/bin/bwrap \"$@\"\n",
               0755);
    return runner;
  }

  // `run` then `confine` with the same inputs; returns confine's JSON, expecting its argv to be
  // the one run executed.
  nlohmann::json expect_same_argv(const string& config, const vector<string>& confine_extra) {
    const string ws = dir_.mkdir(unique("ws"));
    const vector<string> command = {"--", "/bin/sh", "-c", "exit 3"};
    const CliResult ran = cli(plus({"run", "--config", config, "--workspace", ws}, command));
    EXPECT_TRUE(ran.exited_with(3)) << ran.describe();
    const vector<string> executed = split_lines(read_file(record_));
    vector<string> extra = confine_extra;
    for (string& word : extra) {
      if (word == "WS") word = ws;  // the workspace this call made
    }
    const CliResult confine =
        cli(plus(plus({"confine", "--config", config, "--workspace", ws}, extra), command));
    EXPECT_TRUE(confine.exited_with(0)) << confine.describe();
    const nlohmann::json confined = parse_json(confine.out);
    vector<string> printed;
    for (const nlohmann::json& word : confined["argv"]) printed.push_back(word.get<string>());
    EXPECT_FALSE(printed.empty()) << confine.describe();
    if (!printed.empty()) {
      EXPECT_EQ(vector<string>(printed.begin() + 1, printed.end()), executed) << confine.describe();
    }
    return confined;
  }

  string record_ = dir_ / "argv";
};

TEST_F(ConfineMatchesRun, ThroughBwrapWithTheLauncherInside) {
  const string runner = recording_runner();
  const string config = write_config(R"({"bwrapPath":")" + runner + R"("})");
  // The default --cwd is the workspace root, where run runs the command (not the caller's
  // directory); stating it changes nothing.
  for (const vector<string>& extra :
       {vector<string>{"--status-channels"}, vector<string>{"--status-channels", "--cwd", "WS"}}) {
    const nlohmann::json confined = expect_same_argv(config, extra);
    EXPECT_EQ(confined["argv"][0], runner);
    EXPECT_EQ(confined["backend"], "bwrap+landlock");
    EXPECT_EQ(confined["layers"], nlohmann::json::array({"bwrap", "landlock-run"}));
    EXPECT_EQ(confined["statusChannels"],
              nlohmann::json::array(
                  {{{"fd", 3}, {"layer", "bwrap"}, {"format", "bwrap-json"}},
                   {{"fd", 4}, {"layer", "landlock-run"}, {"format", "launcher-lines"}}}));
    const vector<string> flags = {"--json-status-fd", "3", "--chdir",
                                  confined["policy"]["workspaceRoot"].get<string>()};
    EXPECT_EQ(vector<string>(confined["argv"].begin() + 1, confined["argv"].begin() + 5), flags);
  }
}

TEST_F(ConfineMatchesRun, ThroughTheOperatorsRunnerCommand) {
  const string runner = recording_runner();
  const string config = write_config(R"({"runnerCommand":[")" + runner +
                                     R"("],"runnerFailureSignatures":["bwrap: "]})");
  // The operator's runner gets no channel and no --chdir: asking for channels changes nothing.
  for (const vector<string>& extra : {vector<string>{}, vector<string>{"--status-channels"}}) {
    const nlohmann::json confined = expect_same_argv(config, extra);
    EXPECT_EQ(confined["argv"][0], runner);
    EXPECT_EQ(confined["backend"], "runner-command");
    EXPECT_EQ(confined["layers"], nlohmann::json::array({"runner-command"}));
    EXPECT_EQ(confined["statusChannels"], nlohmann::json::array());
  }
}

}  // namespace
}  // namespace dsh::cli_run_it
