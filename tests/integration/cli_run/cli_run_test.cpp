// SPDX-License-Identifier: Apache-2.0
// `dsh-sandbox run` end to end (issue 5 points 6 and 8; spec §5, §7.4-7.5): the real CLI over the
// real bwrap, the real landlock-run and real bash, on both backends of the chain, as root and as
// nobody. Every case attacks from inside and judges from outside: the files on the host, the
// exit status, the one-line errors, /proc of whatever the command tried to leave behind.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <thread>

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

std::size_t Count(const string& text, const string& needle) {
  std::size_t count = 0;
  for (std::size_t at = text.find(needle); at != string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

bool HasCliLine(const string& err) { return err.find("dsh-sandbox: ") != string::npos; }

// Exit 125, nothing on stdout, exactly one stderr line and it starts "dsh-sandbox: ".
void ExpectOneCliErrorLine(const CliResult& result) {
  EXPECT_TRUE(result.ExitedWith(125)) << result.Describe();
  EXPECT_EQ(result.out, "") << result.Describe();
  const vector<string> lines = Lines(result.err);
  ASSERT_EQ(lines.size(), 1U) << result.Describe();
  EXPECT_EQ(lines[0].rfind("dsh-sandbox: ", 0), 0U) << result.Describe();
  EXPECT_TRUE(result.err.ends_with("\n")) << result.Describe();
}

class CliRun : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HostProblem().empty()) DSH_SKIP_OR_FAIL(HostProblem());
    ::chmod(dir_.path().c_str(), 0755);
  }

  // A config file in the private directory (0644, so the nobody leg could read it too).
  string Config(const string& json) {
    const string path = dir_ / (Unique("config") + ".json");
    WriteFile(path, json);
    return path;
  }

  // `run` + the options that select `backend`: nothing for the host's natural chain, a config
  // with a missing bwrap for Landlock.
  vector<string> Run(Backend backend) {
    if (backend == Backend::kNatural) return {"run"};
    return {"run", "--config", Config(R"({"bwrapPath":"/nonexistent/dsh-cli-run/bwrap"})")};
  }

  static vector<string> Plus(vector<string> head, const vector<string>& tail) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  }

  WorkDir dir_;
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
  const string ws = dir_.Mkdir("ws");
  const string target = ws + "/f";
  const CliResult plain = Cli(Plus(Run(), {"--workspace", ws, "-c", "echo x > " + target}));
  EXPECT_TRUE(plain.ExitedWith(1)) << plain.Describe();
  EXPECT_EQ(plain.out, "");
  ASSERT_FALSE(Lines(plain.err).empty()) << plain.Describe();
  EXPECT_EQ(Lines(plain.err).back(), kReadOnlyMarker) << plain.Describe();
  EXPECT_FALSE(Exists(target));

  const CliResult json =
      Cli(Plus(Run(), {"--json", "--workspace", ws, "-c", "echo x > " + target}));
  EXPECT_TRUE(json.ExitedWith(1)) << json.Describe();
  EXPECT_EQ(json.err, "") << json.Describe();  // the object carries everything
  const nlohmann::json object = ParseJson(json.out);
  EXPECT_EQ(object["denied"], true) << json.out;
  EXPECT_EQ(object["mode"], "read-only") << json.out;
  EXPECT_EQ(object["backend"], BackendName(GetParam())) << json.out;
  EXPECT_EQ(object["exitCode"], 1) << json.out;
  EXPECT_FALSE(Exists(target));
  EXPECT_EQ(ListDir(ws), vector<string>{});

  // Control: the same write with the sandbox off lands, so the denial above was the sandbox's.
  const CliResult control = Cli(
      Plus(Run(), {"--mode", "danger-full-access", "--workspace", ws, "-c", "echo x > " + target}));
  EXPECT_TRUE(control.ExitedWith(0)) << control.Describe();
  EXPECT_EQ(ReadFile(target), "x\n");
}

// ---- 2. workspace-write: inside lands, the sibling beside the workspace is denied --------------

TEST_P(CliRunOn, WorkspaceWriteLandsInsideAndTheSiblingIsDenied) {
  const string ws = dir_.Mkdir("ws");
  const string sibling = dir_ / "sibling";
  const string command = "echo inside > " + ws + "/f; echo outside > " + sibling;
  const CliResult plain =
      Cli(Plus(Run(), {"--mode", "workspace-write", "--workspace", ws, "-c", command}));
  EXPECT_TRUE(plain.ExitedWith(1)) << plain.Describe();
  ASSERT_FALSE(Lines(plain.err).empty()) << plain.Describe();
  EXPECT_EQ(Lines(plain.err).back(), kWorkspaceWriteMarker) << plain.Describe();
  EXPECT_EQ(ReadFile(ws + "/f"), "inside\n");
  EXPECT_FALSE(Exists(sibling));

  ASSERT_EQ(::unlink((ws + "/f").c_str()), 0);
  const CliResult json =
      Cli(Plus(Run(), {"--json", "--mode", "workspace-write", "--workspace", ws, "-c", command}));
  const nlohmann::json object = ParseJson(json.out);
  EXPECT_EQ(object["mode"], "workspace-write") << json.out;
  EXPECT_EQ(object["backend"], BackendName(GetParam())) << json.out;
  EXPECT_EQ(object["denied"], true) << json.out;
  EXPECT_EQ(ReadFile(ws + "/f"), "inside\n");
  EXPECT_FALSE(Exists(sibling));

  // Only the write outside: denied, and the marker names the mode.
  const CliResult outside = Cli(
      Plus(Run(), {"--mode", "workspace-write", "--workspace", ws, "-c", "echo o > " + sibling}));
  EXPECT_TRUE(outside.ExitedWith(1)) << outside.Describe();
  EXPECT_NE(outside.err.find(kWorkspaceWriteMarker), string::npos) << outside.Describe();
  EXPECT_FALSE(Exists(sibling));
  // A successful write alone: exit 0, no marker.
  const CliResult inside = Cli(Plus(
      Run(), {"--mode", "workspace-write", "--workspace", ws, "-c", "echo again > " + ws + "/g"}));
  EXPECT_TRUE(inside.ExitedWith(0)) << inside.Describe();
  EXPECT_EQ(inside.err, "");
  EXPECT_EQ(ReadFile(ws + "/g"), "again\n");
}

// ---- 3. escalation: one question on a terminal, one retry under the narrowest wider mode -------

TEST_P(CliRunOn, ApprovedRetryOnATerminalLandsTheWrite) {
  const string ws = dir_.Mkdir("ws");
  const CliResult result = CliOnTerminal(
      Plus(Run(), {"--escalate", "ask", "--workspace", ws, "-c", "echo granted > " + ws + "/f"}),
      "y");
  EXPECT_TRUE(result.ExitedWith(0)) << result.Describe();
  EXPECT_EQ(ReadFile(ws + "/f"), "granted\n");
  EXPECT_EQ(Count(result.err, kQuestion), 1U) << result.Describe();
  EXPECT_NE(result.err.find("escalate sandbox to workspace-write"), string::npos)
      << result.Describe();
  // The denial marker comes before the question.
  EXPECT_LT(result.err.find(kReadOnlyMarker), result.err.find(kQuestion)) << result.Describe();
}

TEST_P(CliRunOn, ApprovedRetryReportsTheModeItUsedInJson) {
  const string ws = dir_.Mkdir("ws");
  const CliResult result = CliOnTerminal(Plus(Run(), {"--json", "--escalate", "ask", "--workspace",
                                                      ws, "-c", "echo json > " + ws + "/f"}),
                                         "y");
  EXPECT_TRUE(result.ExitedWith(0)) << result.Describe();
  EXPECT_EQ(Count(result.err, kQuestion), 1U) << result.Describe();
  const nlohmann::json object = ParseJson(result.out);
  EXPECT_EQ(object["mode"], "workspace-write") << result.out;
  EXPECT_EQ(object["denied"], false) << result.out;
  EXPECT_EQ(object["exitCode"], 0) << result.out;
  EXPECT_EQ(object["backend"], BackendName(GetParam())) << result.out;
  EXPECT_EQ(ReadFile(ws + "/f"), "json\n");
}

TEST_P(CliRunOn, TheRetryIsOnlyTheNarrowestWiderModeAndAskedOnce) {
  const string ws = dir_.Mkdir("ws");
  const string sibling = dir_ / "sibling";
  // Denied under read-only; retried under workspace-write, where the sibling is still denied:
  // no second question, no danger-full-access.
  const CliResult result =
      CliOnTerminal(Plus(Run(), {"--escalate", "ask", "--workspace", ws, "-c",
                                 "echo a > " + ws + "/f; echo b > " + sibling}),
                    "y");
  EXPECT_TRUE(result.ExitedWith(1)) << result.Describe();
  EXPECT_EQ(Count(result.err, kQuestion), 1U) << result.Describe();
  EXPECT_NE(result.err.find(kWorkspaceWriteMarker), string::npos) << result.Describe();
  EXPECT_EQ(ReadFile(ws + "/f"), "a\n");
  EXPECT_FALSE(Exists(sibling));
}

TEST_P(CliRunOn, ARejectedRetryRunsNothingMore) {
  const string ws = dir_.Mkdir("ws");
  for (const string answer : {"n", "", "maybe"}) {
    SCOPED_TRACE("answer [" + answer + "]");
    const CliResult result = CliOnTerminal(
        Plus(Run(), {"--escalate", "ask", "--workspace", ws, "-c", "echo no > " + ws + "/f"}),
        answer);
    EXPECT_TRUE(result.ExitedWith(1)) << result.Describe();
    EXPECT_EQ(Count(result.err, kQuestion), 1U) << result.Describe();
    EXPECT_FALSE(Exists(ws + "/f"));
  }
  EXPECT_EQ(ListDir(ws), vector<string>{});
}

TEST_P(CliRunOn, NoQuestionWithoutATerminalOrWithEscalateNever) {
  const string ws = dir_.Mkdir("ws");
  const string command = "echo q > " + ws + "/f";
  const CliResult piped = Cli(Plus(Run(), {"--escalate", "ask", "--workspace", ws, "-c", command}));
  EXPECT_TRUE(piped.ExitedWith(1)) << piped.Describe();
  EXPECT_EQ(piped.err.find(kQuestion), string::npos) << piped.Describe();
  const CliResult never =
      CliOnTerminal(Plus(Run(), {"--escalate", "never", "--workspace", ws, "-c", command}), "y");
  EXPECT_TRUE(never.ExitedWith(1)) << never.Describe();
  EXPECT_EQ(never.err.find(kQuestion), string::npos) << never.Describe();
  const CliResult unset = CliOnTerminal(Plus(Run(), {"--workspace", ws, "-c", command}), "y");
  EXPECT_TRUE(unset.ExitedWith(1)) << unset.Describe();
  EXPECT_EQ(unset.err.find(kQuestion), string::npos) << unset.Describe();
  EXPECT_FALSE(Exists(ws + "/f"));
}

// ---- 4. a runner that cannot be spawned: 125, SANDBOX_UNAVAILABLE, nothing ran ----------------

class CliRunner : public CliRun {
 protected:
  void ExpectUnavailable(const string& runner, const string& detail) {
    SCOPED_TRACE("runner " + runner);
    const string ws = dir_.Mkdir(Unique("ws"));
    const string marker = ws + "/marker";
    const string config =
        Config(R"({"runnerCommand":[")" + runner + R"("],"runnerFailureSignatures":["x: "]})");
    for (const string mode : {"read-only", "workspace-write"}) {
      const vector<string> args = {"run",         "--config", config, "--mode",         mode,
                                   "--workspace", ws,         "-c",   "touch " + marker};
      const CliResult plain = Cli(args);
      ExpectOneCliErrorLine(plain);
      EXPECT_EQ(plain.err.rfind("dsh-sandbox: sandbox mode \"" + string(mode) + "\"", 0), 0U)
          << plain.Describe();
      EXPECT_NE(plain.err.find("Runner failure: " + detail), string::npos) << plain.Describe();
      EXPECT_FALSE(Exists(marker));

      const CliResult json =
          Cli(Plus({"run", "--json"}, vector<string>(args.begin() + 1, args.end())));
      EXPECT_TRUE(json.ExitedWith(125)) << json.Describe();
      EXPECT_EQ(Lines(json.err).size(), 1U) << json.Describe();
      EXPECT_NE(json.err.find("Runner failure: " + detail), string::npos) << json.Describe();

      const CliResult agent =
          Cli(Plus({"run", "--format", "agent"}, vector<string>(args.begin() + 1, args.end())));
      EXPECT_TRUE(agent.ExitedWith(125)) << agent.Describe();
      EXPECT_EQ(agent.out.rfind("Error: sandbox mode \"" + string(mode) + "\"", 0), 0U)
          << agent.Describe();
      EXPECT_NE(agent.out.find("Runner failure: " + detail), string::npos) << agent.Describe();
      EXPECT_FALSE(Exists(marker));
    }
    EXPECT_EQ(ListDir(ws), vector<string>{});
  }
};

TEST_F(CliRunner, MissingRunnerIsUnavailableAndNothingRuns) {
  const string runner = dir_ / "missing-runner";
  ExpectUnavailable(runner, "spawn " + runner + " ENOENT");
  ExpectUnavailable("/abs/missing-runner", "spawn /abs/missing-runner ENOENT");
}

TEST_F(CliRunner, NonExecutableRunnerIsUnavailableAndNothingRuns) {
  const string runner = dir_ / "runner-0644";
  WriteFile(runner, "#!/bin/sh\nexec \"$@\"\n", 0644);
  if (IsRoot()) {
    // root's execute permission still needs one x bit: 0644 is refused for root too.
    ASSERT_NE(::access(runner.c_str(), X_OK), 0);
  }
  ExpectUnavailable(runner, "spawn " + runner + " EACCES");
}

TEST_F(CliRunner, RunnerWithAMissingInterpreterIsUnavailable) {
  const string runner = dir_ / "runner-interp";
  WriteFile(runner, "#!/nonexistent/dsh-cli-run/interpreter\nexec \"$@\"\n", 0755);
  ExpectUnavailable(runner, "spawn " + runner + " ENOENT");
}

// ---- 5. a child's own 125/126/127 stays ordinary --------------------------------------------

TEST_P(CliRunOn, ChildExitCodes125To127StayOrdinary) {
  const string ws = dir_.Mkdir("ws");
  for (const int code : {125, 126, 127}) {
    SCOPED_TRACE(code);
    const string command = "echo own >&2; exit " + std::to_string(code);
    const CliResult plain = Cli(Plus(Run(), {"--workspace", ws, "-c", command}));
    EXPECT_TRUE(plain.ExitedWith(code)) << plain.Describe();
    EXPECT_EQ(plain.err, "own\n") << plain.Describe();
    const CliResult json = Cli(Plus(Run(), {"--json", "--workspace", ws, "-c", command}));
    EXPECT_TRUE(json.ExitedWith(code)) << json.Describe();
    EXPECT_FALSE(HasCliLine(json.err)) << json.Describe();
    const nlohmann::json object = ParseJson(json.out);
    EXPECT_EQ(object["exitCode"], code) << json.out;
    EXPECT_EQ(object["runnerFailed"], false) << json.out;
    EXPECT_EQ(object["denied"], false) << json.out;
  }
  // bash's own 127 for a missing program and 126 for a non-executable one: ordinary too.
  WriteFile(ws + "/noexec", "#!/bin/sh\n", 0644);
  const CliResult missing =
      Cli(Plus(Run(), {"--workspace", ws, "-c", "/nonexistent/dsh-cli-run/program"}));
  EXPECT_TRUE(missing.ExitedWith(127)) << missing.Describe();
  EXPECT_FALSE(HasCliLine(missing.err)) << missing.Describe();
  const CliResult noexec = Cli(Plus(Run(), {"--workspace", ws, "-c", ws + "/noexec"}));
  EXPECT_TRUE(noexec.ExitedWith(126)) << noexec.Describe();
  EXPECT_FALSE(HasCliLine(noexec.err)) << noexec.Describe();
}

// `-- ARGV` has no shell in front: the runner execs the program itself, after every restriction
// is in place. Its refusal is the command's 127/126, as bash reports it and as
// danger-full-access does, never "no sandbox backend is usable".
TEST_P(CliRunOn, AProgramTheKernelRefusesToExecuteExits127Or126) {
  const string ws = dir_.Mkdir("ws");
  WriteFile(ws + "/noexec", "#!/bin/sh\n", 0644);
  for (const auto& [program, code] : vector<std::pair<string, int>>{
           {"/nonexistent/dsh-cli-run/program", 127}, {ws + "/noexec", 126}}) {
    SCOPED_TRACE(program);
    const CliResult plain = Cli(Plus(Run(), {"--workspace", ws, "--", program}));
    EXPECT_TRUE(plain.ExitedWith(code)) << plain.Describe();
    EXPECT_FALSE(HasCliLine(plain.err)) << plain.Describe();
    const CliResult json = Cli(Plus(Run(), {"--json", "--workspace", ws, "--", program}));
    EXPECT_TRUE(json.ExitedWith(code)) << json.Describe();
    const nlohmann::json object = ParseJson(json.out);
    EXPECT_EQ(object["exitCode"], code) << json.out;
    EXPECT_EQ(object["runnerFailed"], false) << json.out;
    EXPECT_EQ(object["denied"], false) << json.out;
    EXPECT_EQ(object["backend"], BackendName(GetParam())) << json.out;
  }
}

// The caller's directory is where the command runs, or it does not run. bwrap's own /dev hides
// /dev/shm: bwrap would fall back to $HOME unless told --chdir; Landlock hides nothing.
TEST_P(CliRunOn, TheCommandRunsInTheCallersDirectoryOrNotAtAll) {
  const string ws = dir_.Mkdir("ws");
  const string elsewhere = "/dev/shm/" + Unique("dsh-cli-run-cwd");
  ASSERT_EQ(::mkdir(elsewhere.c_str(), 0700), 0) << elsewhere << ": " << std::strerror(errno);
  CliResult result;
  {
    const testing::CwdGuard in(elsewhere);
    result = Cli(Plus(Run(), {"--mode", "workspace-write", "--workspace", ws, "--", "/bin/sh", "-c",
                              "pwd > " + ws + "/marker"}));
  }
  ::rmdir(elsewhere.c_str());
  if (GetParam() == Backend::kLandlock) {
    EXPECT_TRUE(result.ExitedWith(0)) << result.Describe();
    EXPECT_EQ(Lines(ReadFile(ws + "/marker")), vector<string>{elsewhere});
    return;
  }
  EXPECT_TRUE(result.ExitedWith(127)) << result.Describe();
  EXPECT_NE(result.err.find("dsh-sandbox: cannot start the command: chdir " + elsewhere),
            string::npos)
      << result.Describe();
  EXPECT_NE(result.err.find("bwrap's view of the filesystem hides that directory"), string::npos)
      << result.Describe();
  EXPECT_FALSE(Exists(ws + "/marker"));
}

// landlock-run reports its own failures on --status-fd and bwrap on --json-status-fd, out of
// band, on both layers of the chain: a child that prints a runner's words and exits with the
// runner's failure code is an ordinary failure.
TEST_P(CliRunOn, SpoofedRunnerLinesStayOrdinary) {
  const string ws = dir_.Mkdir("ws");
  for (const auto& [line, code] : vector<std::pair<string, int>>{
           {"landlock-run: exec failed: spoofed", 125},
           {"landlock-run: Landlock is not enforced by this kernel", 125},
           {"landlock-run: cannot open rule path: /x: Permission denied", 125},
           {"bwrap: Creating new namespace failed: spoofed", 1}}) {
    SCOPED_TRACE(line);
    const string command = "echo '" + line + "' >&2; exit " + std::to_string(code);
    const CliResult plain = Cli(Plus(Run(), {"--workspace", ws, "-c", command}));
    EXPECT_TRUE(plain.ExitedWith(code)) << plain.Describe();
    EXPECT_FALSE(HasCliLine(plain.err)) << plain.Describe();
    // The child's own line comes through; one that carries denial words is (rightly) a denial.
    EXPECT_EQ(plain.err.rfind(line + "\n", 0), 0U) << plain.Describe();
    const CliResult json = Cli(Plus(Run(), {"--json", "--workspace", ws, "-c", command}));
    EXPECT_TRUE(json.ExitedWith(code)) << json.Describe();
    const nlohmann::json object = ParseJson(json.out);
    EXPECT_EQ(object["backend"], BackendName(GetParam())) << json.out;
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
  TreeWatch() : token_(Unique("dshtree")) {}
  string Spawners(const string& pids) const {
    return "(exec -a " + token_ + "-child sleep 30) & echo $! > " + pids +
           "; setsid bash -c 'exec -a " + token_ + "-setsid sleep 30' & echo $! >> " + pids +
           "; bash -c '(exec -a " + token_ + "-orphan sleep 30) & echo $! >> " + pids + "'";
  }
  const string& token() const { return token_; }
  // Polls /proc while `cli` runs until every role in `roles` was seen (or 10 s passed).
  void Collect(const vector<string>& roles) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
      for (const pid_t pid : ProcessesNamed(token_ + "-")) {
        const string cmdline = Cmdline(pid);
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
  void ExpectNoneAlive(const vector<pid_t>& also = {}) const {
    vector<pid_t> pids = also;
    for (const auto& [pid, name] : seen_) pids.push_back(pid);
    for (const pid_t pid : pids) {
      const char state = ProcessState(pid);
      const bool ours = Cmdline(pid).rfind(token_, 0) == 0;  // a zombie's cmdline is empty
      EXPECT_FALSE(ours && state != 'Z' && state != '\0')
          << "pid " << pid << " (" << Cmdline(pid) << ") is alive, state " << state;
    }
    for (const pid_t pid : ProcessesNamed(token_)) {
      EXPECT_EQ(ProcessState(pid), 'Z') << "pid " << pid << " (" << Cmdline(pid) << ") survived";
    }
  }

 private:
  string token_;
  std::map<pid_t, string> seen_;
};

vector<pid_t> ReadPids(const string& path) {
  vector<pid_t> pids;
  for (const string& line : Lines(ReadFile(path))) pids.push_back(std::atoi(line.c_str()));
  return pids;
}

TEST_P(CliRunOn, TimeoutExits124AndLeavesNoProcessOfTheTreeAlive) {
  const string ws = dir_.Mkdir("ws");
  const string pids = ws + "/pids";
  TreeWatch tree;
  const string script = tree.Spawners(pids) + "; exec -a " + tree.token() + "-main sleep 30";
  Started cli(Plus(Run(), {"--mode", "workspace-write", "--workspace", ws, "--timeout", "1", "--",
                           "/bin/bash", "-c", script}));
  tree.Collect({"child", "setsid", "orphan", "main"});
  const CliResult result = cli.Wait();
  EXPECT_TRUE(result.ExitedWith(124)) << result.Describe();
  EXPECT_FALSE(HasCliLine(result.err)) << result.Describe();
  EXPECT_LT(result.elapsed, 8s) << result.Describe();  // 1 s deadline + 3 s grace at most
  // Under Landlock the recorded pids are host pids; under bwrap they are the PID namespace's,
  // and the /proc scan by name covers them.
  const vector<pid_t> recorded = ReadPids(pids);
  EXPECT_EQ(recorded.size(), 3U) << ReadFile(pids);
  tree.ExpectNoneAlive(GetParam() == Backend::kLandlock ? recorded : vector<pid_t>{});
}

TEST_P(CliRunOn, TimeoutIsReportedInJsonAndAgentRender) {
  const string ws = dir_.Mkdir("ws");
  const CliResult json =
      Cli(Plus(Run(), {"--json", "--timeout", "1", "--workspace", ws, "-c", "sleep 30"}));
  EXPECT_TRUE(json.ExitedWith(124)) << json.Describe();
  const nlohmann::json object = ParseJson(json.out);
  EXPECT_EQ(object["timedOut"], true) << json.out;
  EXPECT_EQ(object["denied"], false) << json.out;
  const CliResult agent = Cli(
      Plus(Run(), {"--format", "agent", "--timeout", "1", "--workspace", ws, "-c", "sleep 30"}));
  EXPECT_TRUE(agent.ExitedWith(124)) << agent.Describe();
  EXPECT_NE(agent.out.find("[timed out after 1000ms]"), string::npos) << agent.Describe();
}

TEST_P(CliRunOn, NormalExitLeavesNoDescendantBehind) {
  const string ws = dir_.Mkdir("ws");
  const string pids = ws + "/pids";
  TreeWatch tree;
  const string script = tree.Spawners(pids) + "; sleep 1; exit 7";
  Started cli(Plus(
      Run(), {"--mode", "workspace-write", "--workspace", ws, "--", "/bin/bash", "-c", script}));
  tree.Collect({"child", "setsid", "orphan"});
  const CliResult result = cli.Wait();
  EXPECT_TRUE(result.ExitedWith(7)) << result.Describe();
  EXPECT_EQ(result.err, "") << result.Describe();
  EXPECT_LT(result.elapsed, 10s) << result.Describe();  // not held open by the leftovers
  const vector<pid_t> recorded = ReadPids(pids);
  EXPECT_EQ(recorded.size(), 3U) << ReadFile(pids);
  tree.ExpectNoneAlive(GetParam() == Backend::kLandlock ? recorded : vector<pid_t>{});
}

// ---- 7. signal death, --json, --format agent, bad input -------------------------------------

TEST_P(CliRunOn, SignalDeathExits128PlusN) {
  const string ws = dir_.Mkdir("ws");
  for (const auto& [signal, name] : vector<std::pair<int, string>>{{15, "TERM"}, {9, "KILL"}}) {
    const CliResult result = Cli(Plus(Run(), {"--workspace", ws, "-c", "kill -" + name + " $$"}));
    EXPECT_TRUE(result.ExitedWith(128 + signal)) << result.Describe();
    EXPECT_FALSE(HasCliLine(result.err)) << result.Describe();
  }
}

// Where the command is the runner's direct child (Landlock execs; danger-full-access has no
// runner) the CLI sees the signal itself and reports it by name.
TEST_F(CliRun, SignalIsReportedByNameInJsonAndAgentRender) {
  const string ws = dir_.Mkdir("ws");
  for (const vector<string>& head :
       {Run(Backend::kLandlock), vector<string>{"run", "--mode", "danger-full-access"}}) {
    SCOPED_TRACE(::testing::PrintToString(head));
    const CliResult json = Cli(Plus(head, {"--json", "--workspace", ws, "-c", "kill -KILL $$"}));
    EXPECT_TRUE(json.ExitedWith(137)) << json.Describe();
    const nlohmann::json object = ParseJson(json.out);
    EXPECT_EQ(object["signal"], "SIGKILL") << json.out;
    EXPECT_TRUE(object["exitCode"].is_null()) << json.out;
    EXPECT_EQ(object["denied"], false) << json.out;
    const CliResult agent =
        Cli(Plus(head, {"--format", "agent", "--workspace", ws, "-c", "kill -TERM $$"}));
    EXPECT_TRUE(agent.ExitedWith(143)) << agent.Describe();
    EXPECT_EQ(agent.out, "(no output)\n[killed by signal: SIGTERM]\n") << agent.Describe();
  }
}

TEST_P(CliRunOn, JsonIsOneObjectWithTheDocumentedFieldsAndTypes) {
  const string ws = dir_.Mkdir("ws");
  const CliResult result =
      Cli(Plus(Run(), {"--json", "--workspace", ws, "-c", "echo out; echo err >&2; exit 3"}));
  EXPECT_TRUE(result.ExitedWith(3)) << result.Describe();
  EXPECT_EQ(result.err, "") << result.Describe();
  EXPECT_EQ(Count(result.out, "\n"), 1U) << result.out;  // one line
  const nlohmann::json object = ParseJson(result.out);
  ASSERT_TRUE(object.is_object()) << result.out;
  vector<string> keys;
  for (const auto& [key, value] : object.items()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (vector<string>{"backend", "bounds", "denied", "durationMs", "enforcement",
                                  "exitCode", "interrupted", "mode", "runnerFailed", "signal",
                                  "stderr", "stdout", "timedOut"}));
  EXPECT_EQ(object["mode"], "read-only");
  EXPECT_EQ(object["backend"], BackendName(GetParam()));
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
  if (!IsRoot()) {
    EXPECT_TRUE(bounds["processes"]["enforcedBy"].is_string()) << result.out;
  }

  // danger-full-access never reaches a provider: no backend, no enforcement.
  const CliResult open =
      Cli(Plus(Run(), {"--json", "--mode", "danger-full-access", "--workspace", ws, "--", "true"}));
  EXPECT_TRUE(open.ExitedWith(0)) << open.Describe();
  const nlohmann::json unconfined = ParseJson(open.out);
  EXPECT_EQ(unconfined["mode"], "danger-full-access");
  EXPECT_TRUE(unconfined["backend"].is_null()) << open.out;
  EXPECT_TRUE(unconfined["enforcement"].is_null()) << open.out;
  EXPECT_EQ(unconfined["exitCode"], 0);
}

TEST_P(CliRunOn, AgentRenderEndsWithTheExitCodeAfterTheDenialMarker) {
  const string ws = dir_.Mkdir("ws");
  const CliResult result =
      Cli(Plus(Run(), {"--format", "agent", "--workspace", ws, "-c", "echo x > " + ws + "/f"}));
  EXPECT_TRUE(result.ExitedWith(1)) << result.Describe();
  EXPECT_EQ(result.err, "") << result.Describe();
  EXPECT_FALSE(Exists(ws + "/f"));
  const vector<string> lines = Lines(result.out);
  ASSERT_GE(lines.size(), 4U) << result.out;
  // The command's stderr inside its fence, then the sandbox's own lines.
  EXPECT_EQ(lines.front().rfind("<stderr ", 0), 0U) << result.out;
  EXPECT_EQ(lines[lines.size() - 4], "</stderr " + lines.front().substr(8)) << result.out;
  EXPECT_EQ(lines[lines.size() - 3], kReadOnlyMarker) << result.out;
  EXPECT_EQ(lines[lines.size() - 2].rfind("[sandbox: escalation available", 0), 0U) << result.out;
  EXPECT_EQ(lines.back(), "[exit code: 1]") << result.out;
  EXPECT_TRUE(result.out.ends_with("[exit code: 1]\n")) << result.out;

  // Under danger-full-access no wider mode exists: no hint; clean output renders as is.
  const CliResult clean = Cli(Plus(Run(), {"--format", "agent", "--workspace", ws, "--", "true"}));
  EXPECT_TRUE(clean.ExitedWith(0)) << clean.Describe();
  EXPECT_EQ(clean.out, "(no output)\n[exit code: 0]\n");
}

// A command that never started says why on every output: one "dsh-sandbox: " line (with --json
// too, whose object has no field for it), and an Error line as the whole agent render.
TEST_F(CliRun, AStartFailureIsExplainedInEachFormat) {
  const string program = "/nonexistent/dsh-cli-run/program";
  const string why = "cannot start the command: spawn " + program + " ENOENT";
  const vector<string> run = {"run", "--mode", "danger-full-access", "--"};
  const CliResult plain = Cli(Plus(run, {program}));
  EXPECT_TRUE(plain.ExitedWith(127)) << plain.Describe();
  EXPECT_EQ(plain.err.rfind("dsh-sandbox: " + why, 0), 0U) << plain.Describe();
  const CliResult json =
      Cli(Plus({"run", "--json", "--mode", "danger-full-access", "--"}, {program}));
  EXPECT_TRUE(json.ExitedWith(127)) << json.Describe();
  EXPECT_TRUE(ParseJson(json.out)["exitCode"].is_null()) << json.out;
  EXPECT_EQ(Lines(json.err),
            vector<string>{"dsh-sandbox: " + why + " (No such file or directory)"});
  const CliResult agent =
      Cli(Plus({"run", "--format", "agent", "--mode", "danger-full-access", "--"}, {program}));
  EXPECT_TRUE(agent.ExitedWith(127)) << agent.Describe();
  EXPECT_EQ(agent.out, "Error: " + why + " (No such file or directory)\n") << agent.Describe();
}

class CliBadInput : public CliRun {
 protected:
  void SetUp() override {
    CliRun::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ws_ = dir_.Mkdir("ws");
    outside_ = dir_.Mkdir("outside", 0777);
    marker_ = outside_ + "/marker";
    // Unconfined by config: if any bad call ran its command, the marker would land.
    open_ = Config(R"({"mode":"danger-full-access"})");
  }
  void ExpectRefused(const vector<string>& args, const string& mentions) {
    SCOPED_TRACE(::testing::PrintToString(args));
    const CliResult result = Cli(args);
    ExpectOneCliErrorLine(result);
    EXPECT_NE(result.err.find(mentions), string::npos) << result.Describe();
    EXPECT_FALSE(Exists(marker_)) << result.Describe();
  }
  string Touch() const { return "touch " + marker_; }
  string ws_, outside_, marker_, open_;
};

TEST_F(CliBadInput, ControlTheSameCallWithGoodInputRuns) {
  const CliResult result = Cli({"run", "--config", open_, "--workspace", ws_, "-c", Touch()});
  EXPECT_TRUE(result.ExitedWith(0)) << result.Describe();
  EXPECT_TRUE(Exists(marker_));
}

TEST_F(CliBadInput, EachIsRefusedWith125AndRunsNothing) {
  ExpectRefused({"run", "--config", open_, "--mode", "yolo", "--workspace", ws_, "-c", Touch()},
                "yolo");
  ExpectRefused({"run", "--config", open_, "--workspace", "relative/ws", "-c", Touch()},
                "relative/ws");
  ExpectRefused({"run", "--config", open_, "--workspace", dir_ / "missing", "-c", Touch()},
                dir_ / "missing");
  ExpectRefused(
      {"run", "--config", open_, "--workspace", ws_, "-c", Touch(), "--", "/bin/sh", "-c", Touch()},
      "exactly once");
  ExpectRefused({"run", "--config", open_, "--workspace", ws_}, "exactly once");
  ExpectRefused({"run", "--config", open_, "--workspace", ws_, "-c", ""}, "exactly once");
  ExpectRefused({"run", "--config", open_, "--format", "yaml", "--workspace", ws_, "-c", Touch()},
                "yaml");
  ExpectRefused({"run", "--config", dir_ / "missing.json", "--workspace", ws_, "-c", Touch()},
                dir_ / "missing.json");
  ExpectRefused(
      {"run", "--config", open_, "--network", "sometimes", "--workspace", ws_, "-c", Touch()},
      "sometimes");
  ExpectRefused({"run", "--config", open_, "--timeout", "0", "--workspace", ws_, "-c", Touch()},
                "timeout");
  ExpectRefused(
      {"run", "--config", open_, "--escalate", "always", "--workspace", ws_, "-c", Touch()},
      "always");
  const string malformed = Config("{not json");
  ExpectRefused({"run", "--config", malformed, "--workspace", ws_, "-c", Touch()}, malformed);
  if (!IsRoot()) {  // root reads a 0000 file
    const string unreadable = Config(R"({"mode":"danger-full-access"})");
    ASSERT_EQ(::chmod(unreadable.c_str(), 0), 0);
    ExpectRefused({"run", "--config", unreadable, "--workspace", ws_, "-c", Touch()}, unreadable);
  }
  EXPECT_EQ(ListDir(outside_), vector<string>{});
}

// ---- 8. 200 concurrent runs, distinct workspaces, each lands its own write only ---------------

TEST_F(CliRun, TwoHundredConcurrentRunsLandOnlyTheirOwnWrites) {
  constexpr std::size_t kRuns = 200;
  constexpr std::size_t kWave = 40;
  vector<string> workspaces;
  for (std::size_t i = 0; i < kRuns; ++i)
    workspaces.push_back(dir_.Mkdir("ws" + std::to_string(i)));
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
          Plus(head, {"--mode", "workspace-write", "--workspace", ws, "-c", command})));
    }
    for (std::size_t i = first; i < std::min(kRuns, first + kWave); ++i) {
      results[i] = wave[i - first]->Wait();
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
    const bool ok = results[i].ExitedWith(1) &&
                    results[i].err.find(kWorkspaceWriteMarker) != string::npos &&
                    ListDir(workspaces[i]) == vector<string>{own} &&
                    ReadFile(workspaces[i] + "/" + own) == std::to_string(i) + "\n";
    if (!ok) {
      ++failures;
      ADD_FAILURE() << results[i].Describe() << "\nworkspace holds "
                    << ::testing::PrintToString(ListDir(workspaces[i]));
    }
  }
  EXPECT_EQ(failures, 0);
}

// ---- 9. --session: the session's last sandbox/mode event, outranked by --mode ----------------

TEST_P(CliRunOn, SessionModeIsUsedAndTheCommandLineModeOutranksIt) {
  const string ws = dir_.Mkdir("ws");
  const string log = dir_ / "session.jsonl";
  {
    const sandbox::SessionLog session = sandbox::SessionLog::create(log, "cli-run-it", ws);
    sandbox::set_sandbox_mode(session, sandbox::SandboxMode::kWorkspaceWrite);
  }
  const string before = ReadFile(log);

  const CliResult session_mode =
      Cli(Plus(Run(), {"--session", log, "--workspace", ws, "-c", "echo s > " + ws + "/f"}));
  EXPECT_TRUE(session_mode.ExitedWith(0)) << session_mode.Describe();
  EXPECT_EQ(ReadFile(ws + "/f"), "s\n");
  const CliResult json =
      Cli(Plus(Run(), {"--json", "--session", log, "--workspace", ws, "--", "true"}));
  EXPECT_EQ(ParseJson(json.out)["mode"], "workspace-write") << json.out;

  const CliResult outranked = Cli(Plus(Run(), {"--mode", "read-only", "--session", log,
                                               "--workspace", ws, "-c", "echo r > " + ws + "/g"}));
  EXPECT_TRUE(outranked.ExitedWith(1)) << outranked.Describe();
  EXPECT_NE(outranked.err.find(kReadOnlyMarker), string::npos) << outranked.Describe();
  EXPECT_FALSE(Exists(ws + "/g"));
  // Runs never change the session's mode; each appends its audit line (what ran, how it ended).
  const string after = ReadFile(log);
  ASSERT_EQ(after.rfind(before, 0), 0U) << after;
  const vector<string> audit = Lines(after.substr(before.size()));
  ASSERT_EQ(audit.size(), 3U) << after;
  const vector<std::pair<string, bool>> expected = {
      {"workspace-write", false}, {"workspace-write", false}, {"read-only", true}};
  for (std::size_t i = 0; i < audit.size(); ++i) {
    const nlohmann::json event = ParseJson(audit[i]);
    EXPECT_EQ(event["type"], "sandbox/run") << audit[i];
    EXPECT_EQ(event["payload"]["mode"], expected[i].first) << audit[i];
    EXPECT_EQ(event["payload"]["denied"], expected[i].second) << audit[i];
    EXPECT_EQ(event["payload"]["workspace"], ws) << audit[i];
    EXPECT_EQ(event["payload"]["backend"], BackendName(GetParam())) << audit[i];
  }
  EXPECT_EQ(ParseJson(audit[2])["payload"]["exitCode"], 1);
  EXPECT_EQ(ParseJson(audit[2])["payload"]["denial"], kReadOnlyMarker);
  EXPECT_EQ(ParseJson(audit[1])["payload"]["argv"], nlohmann::json::array({"true"}));

  // The last event wins: a later switch back to read-only is honoured at the next run.
  sandbox::set_sandbox_mode(sandbox::SessionLog::open(log), sandbox::SandboxMode::kReadOnly);
  const CliResult switched =
      Cli(Plus(Run(), {"--session", log, "--workspace", ws, "-c", "echo h > " + ws + "/h"}));
  EXPECT_TRUE(switched.ExitedWith(1)) << switched.Describe();
  EXPECT_NE(switched.err.find(kReadOnlyMarker), string::npos) << switched.Describe();
  EXPECT_FALSE(Exists(ws + "/h"));
  EXPECT_EQ(ListDir(ws), vector<string>{"f"});
}

}  // namespace
}  // namespace dsh::cli_run_it
