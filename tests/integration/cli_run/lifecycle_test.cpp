// SPDX-License-Identifier: Apache-2.0
// `dsh-sandbox run` and the life of its command tree, on both backends, as root and as nobody:
// nothing of the tree outlives the run however run ends (a signal, a broken pipe, SIGKILL, a
// Ctrl-C at a terminal), the deadline holds against a reader that never reads, a fork bomb is
// bounded, memory is bounded, stdin is passed through only when it is not a terminal, and
// spill files do not pile up. Every verdict comes from outside: /proc, the marker file the tree
// keeps writing, the spill directory, the test's own ability to fork.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "cli_run_harness.h"
#include "must_run.h"
#include "wait.h"

extern char** environ;

namespace dsh::cli_run_it {
namespace {

using std::string;
using std::vector;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Every live process whose command line contains `token` (zombies have none).
vector<pid_t> live_with(const string& token) {
  vector<pid_t> found;
  for (const pid_t pid : processes_named("")) {
    const char state = process_state(pid);
    if (state != 'Z' && state != '\0' && process_cmdline(pid).find(token) != string::npos) {
      found.push_back(pid);
    }
  }
  return found;
}

std::size_t file_size(const string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 ? static_cast<std::size_t>(info.st_size) : 0;
}

using testing::wait_until;

// The CLI with chosen descriptors as its stdin and stdout (-1: /dev/null for stdin, captured
// for stdout), optionally on a fresh pseudo-terminal as its controlling terminal.
class Spawned : public testing::Started {
 public:
  Spawned(const vector<string>& args, int in, int out, bool terminal = false)
      : testing::Started(cli_argv(args), options(in, out, terminal)) {}
  int master() const { return terminal(); }

 private:
  static testing::SpawnOptions options(int in, int out, bool terminal) {
    testing::SpawnOptions options;
    options.stdin_fd = in;
    options.stdout_fd = out;
    options.terminal = terminal;
    return options;
  }
};

class Lifecycle : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (!host_problem().empty()) DSH_SKIP_OR_FAIL(host_problem());
    ::chmod(dir_.path().c_str(), 0755);
    ws_ = dir_.mkdir("ws", 0777);
    ::chmod(ws_.c_str(), 0777);
    token_ = unique("dshlife");
    marker_ = ws_ + "/marker";
  }

  vector<string> Run(const vector<string>& tail, const string& mode = "workspace-write") {
    vector<string> args = {"run"};
    if (GetParam() == Backend::kLandlock) {
      const string config = dir_ / (unique("config") + ".json");
      write_file(config, R"({"bwrapPath":"/nonexistent/dsh-cli-run/bwrap"})");
      args.insert(args.end(), {"--config", config});
    }
    args.insert(args.end(), {"--mode", mode, "--workspace", ws_});
    args.insert(args.end(), tail.begin(), tail.end());
    return args;
  }

  // A command that leaves a setsid'd, double-forked writer behind (named after the token, so
  // /proc finds it), then runs `then`.
  string escapee(const string& then) const {
    return "setsid bash -c '(exec -a " + token_ + "-writer bash -c \"while :; do echo x >> " +
           marker_ + "; sleep 0.05; done\" &)' </dev/null >/dev/null 2>&1; " + then;
  }

  bool marker_growing() const { return file_size(marker_) > 0; }

  // After the run: the marker stops growing and no process of the tree is alive.
  void expect_tree_gone() const {
    EXPECT_TRUE(wait_until([&] { return live_with(token_).empty(); }, 5s))
        << "still alive: " << ::testing::PrintToString(live_with(token_));
    const std::size_t before = file_size(marker_);
    std::this_thread::sleep_for(300ms);  // six periods of the writer
    EXPECT_EQ(file_size(marker_), before) << "the marker still grows";
  }

  TempDir dir_;
  string ws_;
  string token_;
  string marker_;
};

INSTANTIATE_TEST_SUITE_P(Backends, Lifecycle,
                         ::testing::Values(Backend::kNatural, Backend::kLandlock),
                         [](const ::testing::TestParamInfo<Backend>& param) {
                           return string(param.param == Backend::kNatural ? "bwrap" : "landlock");
                         });

// ---- signals to run ----------------------------------------------------------------------------

TEST_P(Lifecycle, SigintSigtermSighupEndTheTreeReportAndExit128PlusN) {
  for (const auto& [signal, name] : vector<std::pair<int, string>>{
           {SIGINT, "SIGINT"}, {SIGTERM, "SIGTERM"}, {SIGHUP, "SIGHUP"}}) {
    SCOPED_TRACE(name);
    ::unlink(marker_.c_str());
    Spawned cli(Run({"--json", "-c", escapee("sleep 60")}), -1, -1);
    ASSERT_TRUE(wait_until([&] { return marker_growing(); })) << "the writer never started";
    ASSERT_EQ(::kill(cli.pid(), signal), 0);
    const CliResult result = cli.wait();
    EXPECT_TRUE(result.exited_with(128 + signal)) << result.describe();
    EXPECT_LT(result.elapsed, 10s) << result.describe();
    const nlohmann::json object = parse_json(result.out);
    EXPECT_EQ(object["interrupted"], name) << result.out;
    EXPECT_EQ(object["backend"], backend_name(GetParam())) << result.out;
    expect_tree_gone();
  }
}

TEST_P(Lifecycle, SigkillOfRunLeavesTheTreeToItsSupervisorWhichEndsIt) {
  Spawned cli(Run({"-c", escapee("sleep 60")}), -1, -1);
  ASSERT_TRUE(wait_until([&] { return marker_growing(); })) << "the writer never started";
  ASSERT_EQ(::kill(cli.pid(), SIGKILL), 0);
  const CliResult result = cli.wait();
  EXPECT_TRUE(WIFSIGNALED(result.status) && WTERMSIG(result.status) == SIGKILL)
      << result.describe();
  expect_tree_gone();
}

// The process that started run dies by SIGKILL (a harness, nothing of it can clean up): with
// --die-with-parent the kernel tells run, which ends the whole tree as for SIGTERM. (Without the
// flag, run and its tree live on, re-parented.)
TEST_P(Lifecycle, AParentKilledBySigkillEndsTheTreeOfARunThatAskedToDieWithIt) {
  vector<string> argv = {"/bin/sh", "-c", "\"$@\"; true", "sh"};
  for (const string& word : cli_argv(Run({"--die-with-parent", "-c", escapee("sleep 60")}))) {
    argv.push_back(word);
  }
  testing::Started parent(argv);
  ASSERT_TRUE(wait_until([&] { return marker_growing(); })) << "the writer never started";
  ASSERT_EQ(::kill(parent.pid(), SIGKILL), 0);
  static_cast<void>(parent.wait());
  expect_tree_gone();
}

TEST_P(Lifecycle, ABrokenPipeOnRunsOutputEndsTheTree) {
  std::array<int, 2> pipe{};
  ASSERT_EQ(::pipe2(pipe.data(), O_CLOEXEC), 0);
  Spawned cli(Run({"-c", escapee("exec yes")}), -1, pipe[1]);
  ::close(pipe[1]);
  char byte = 0;
  ASSERT_EQ(::read(pipe[0], &byte, 1), 1);  // `run ... | head -c 1`
  EXPECT_EQ(byte, 'y');
  ASSERT_TRUE(wait_until([&] { return marker_growing(); })) << "the writer never started";
  ::close(pipe[0]);
  const CliResult result = cli.wait();
  EXPECT_TRUE(result.exited_with(128 + SIGPIPE)) << result.describe();
  EXPECT_LT(result.elapsed, 10s) << result.describe();
  expect_tree_gone();
}

TEST_P(Lifecycle, CtrlCAtATerminalEndsTheCommand) {
  Spawned cli(Run({"-c", escapee("sleep 60")}), -1, -1, true);
  ASSERT_GE(cli.master(), 0);
  ASSERT_TRUE(wait_until([&] { return marker_growing(); })) << "the writer never started";
  // The terminal's line discipline turns ^C into SIGINT for its foreground process group.
  ASSERT_EQ(::write(cli.master(), "\x03", 1), 1);
  const CliResult result = cli.wait();
  EXPECT_TRUE(result.exited_with(128 + SIGINT)) << result.describe();
  EXPECT_LT(result.elapsed, 10s) << result.describe();
  expect_tree_gone();
}

// ---- the deadline against a reader that never reads ------------------------------------------

TEST_P(Lifecycle, AReaderThatNeverReadsCannotDelayTheDeadline) {
  std::array<int, 2> pipe{};
  ASSERT_EQ(::pipe2(pipe.data(), O_CLOEXEC), 0);  // the read end stays open, never read
  Spawned cli(
      Run({"--timeout", "2", "--", "/bin/bash", "-c", escapee("exec -a " + token_ + "-yes yes")}),
      -1, pipe[1]);
  ::close(pipe[1]);
  const CliResult result = cli.wait();
  ::close(pipe[0]);
  EXPECT_TRUE(result.exited_with(124)) << result.describe();
  EXPECT_LT(result.elapsed, 2s + 3s + 2s) << result.describe();  // deadline + grace + slack
  expect_tree_gone();
}

// ---- bounds
// --------------------------------------------------------------------------------------

bool host_can_fork() {
  pid_t pid = 0;
  char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
  if (::posix_spawn(&pid, "/bin/true", nullptr, nullptr, argv, environ) != 0) return false;
  int status = 0;
  return ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST_P(Lifecycle, AForkBombIsBoundedAndLeavesNothing) {
  const string failed_fork = "fork: retry: Resource temporarily unavailable";
  Spawned cli(
      Run({"--timeout", "60", "-c", ": " + token_ + "; b(){ b|b& }; b; sleep 60"}, "read-only"), -1,
      -1);
  // The bomb at its bound: bash says so, live on run's stderr, when fork fails with EAGAIN.
  // 4096 forks of bash take a few seconds on a loaded host.
  EXPECT_TRUE(wait_until([&] { return cli.err_so_far().find(failed_fork) != string::npos; }, 50s))
      << "the bomb never met its bound: " << cli.err_so_far().substr(0, 1000);
  EXPECT_TRUE(host_can_fork()) << "the host could not start a process during the bomb";
  ASSERT_EQ(::kill(cli.pid(), SIGINT), 0);  // and `run` ends the whole bomb
  const CliResult result = cli.wait();
  EXPECT_TRUE(result.exited_with(128 + SIGINT)) << result.describe().substr(0, 1000);
  EXPECT_TRUE(host_can_fork());
  EXPECT_TRUE(wait_until([&] { return live_with(token_).empty(); }, 5s))
      << live_with(token_).size() << " processes of the bomb are alive";
}

// The line of /proc/PID/cgroup for `hierarchy` ("0:" for v2, else a v1 controller's name).
string cgroup_line(pid_t pid, const string& hierarchy) {
  const string text = read_file("/proc/" + std::to_string(pid) + "/cgroup");
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == string::npos) end = text.size();
    const string line = text.substr(start, end - start);
    const std::size_t colon = line.find(':');
    const string rest = colon == string::npos ? "" : line.substr(colon + 1);
    if (hierarchy == "0:"
            ? line.starts_with("0::")
            : rest.starts_with(hierarchy + ":") || rest.starts_with(hierarchy + ",")) {
      return line;
    }
    start = end + 1;
  }
  return "";
}

// Every live process whose argv[0] is `name` (the shell that started it has it in its script).
vector<pid_t> live_named(const string& name) {
  vector<pid_t> found;
  for (const pid_t pid : live_with(name)) {
    const string cmdline = process_cmdline(pid);
    if (cmdline == name || cmdline.starts_with(name + " ")) {
      found.push_back(pid);
    }
  }
  return found;
}

// The command is born in its run's cgroups (cgroup v2: clone3 CLONE_INTO_CGROUP; v1: its `tasks`
// file) and so is everything it forks: a small bound stops a loop of forks, nothing is left
// after the run, and /proc shows the tree inside the run's cgroups while it runs.
TEST_P(Lifecycle, ASmallProcessBoundHoldsForTheWholeTreeInsideTheRunsCgroups) {
  // dash gives up at the first failed fork ("Cannot fork"); bash would retry for half a minute.
  const string child = "bash -c 'exec -a " + token_ + "-a sleep 60' & ";
  const string loop = "i=0; while [ $i -lt 100 ]; do " + child + "i=$((i+1)); echo $i; done";
  const CliResult bombed =
      cli(Run({"--json", "--max-processes", "32", "--", "/usr/bin/dash", "-c", loop}, "read-only"));
  const nlohmann::json facts = parse_json(bombed.out);
  EXPECT_NE(facts["exitCode"], 0) << bombed.describe();
  EXPECT_NE(facts["stderr"].get<string>().find("Cannot fork"), string::npos) << bombed.out;
  // Each line is a fork that succeeded; the shell (and the runner's processes) count as well. As
  // nobody the bound is RLIMIT_NPROC, which counts every process of the user: other tests' take
  // from it too, so the bound is not small.
  const string out = facts["stdout"].get<string>();
  const std::size_t last = out.rfind('\n', out.size() - 2);
  const int forks = std::stoi(out.substr(last == string::npos ? 0 : last + 1));
  EXPECT_GE(forks, 1) << bombed.out;
  EXPECT_LE(forks, 31) << bombed.out;
  EXPECT_TRUE(wait_until([&] { return live_with(token_ + "-a").empty(); }, 5s))
      << live_with(token_ + "-a").size() << " processes of the loop are alive";
  const string processes = facts["bounds"]["processes"]["enforcedBy"].get<string>();
  const string kill = facts["bounds"]["treeKill"].get<string>();
  ASSERT_FALSE(processes.empty()) << bombed.out;

  // From outside, while it runs: every process of the tree is in the run's cgroups.
  const string pair = "bash -c 'exec -a " + token_ + "-b sleep 60' & ";
  Spawned cli(Run({"--max-processes", "64", "--", "/usr/bin/dash", "-c", pair + pair + "wait"},
                  "read-only"),
              -1, -1);
  ASSERT_TRUE(wait_until([&] { return live_named(token_ + "-b").size() == 2; }, 20s));
  for (const pid_t pid : live_named(token_ + "-b")) {
    if (processes == "cgroup1 pids.max") {
      EXPECT_NE(cgroup_line(pid, "pids").find("/dsh-run-"), string::npos)
          << cgroup_line(pid, "pids");
    }
    if (processes == "cgroup2 pids.max" || kill == "cgroup2 cgroup.kill") {
      EXPECT_NE(cgroup_line(pid, "0:").find("/dsh-run-"), string::npos) << cgroup_line(pid, "0:");
    }
  }
  ASSERT_EQ(::kill(cli.pid(), SIGINT), 0);
  EXPECT_TRUE(cli.wait().exited_with(128 + SIGINT));
  EXPECT_TRUE(wait_until([&] { return live_with(token_ + "-b").empty(); }, 5s));
}

TEST_P(Lifecycle, MemoryIsBoundedAndTheFactsSaySo) {
  // tail keeps the current line: 512 MiB without a newline.
  const string hog = "set -o pipefail; head -c 536870912 /dev/zero | tail -n 1 | wc -c";
  const CliResult bounded = cli(Run({"--json", "--max-memory", "64M", "-c", hog}));
  const nlohmann::json object = parse_json(bounded.out);
  EXPECT_NE(object["exitCode"], 0) << bounded.describe();
  EXPECT_NE(object["stdout"], "536870912\n") << bounded.describe();
  EXPECT_EQ(object["bounds"]["memory"]["max"], 64 * 1024 * 1024) << bounded.out;
  EXPECT_TRUE(object["bounds"]["memory"]["enforcedBy"].is_string()) << bounded.out;
  // Control: the same command without the bound completes.
  const CliResult open = cli(Run({"--json", "--max-memory", "unlimited", "-c", hog}));
  const nlohmann::json control = parse_json(open.out);
  EXPECT_EQ(control["exitCode"], 0) << open.describe();
  EXPECT_EQ(control["stdout"], "536870912\n") << open.describe();
  EXPECT_TRUE(control["bounds"]["memory"]["max"].is_null()) << open.out;
  EXPECT_TRUE(control["bounds"]["memory"]["enforcedBy"].is_null()) << open.out;
}

// A tmpfs is no process's data segment: without a cgroup (nobody here) only its size bounds it.
// bwrap's private /tmp and /dev/shm are sized to the bound; on Landlock alone /dev/shm is the
// host's and refused, and /tmp is the host's (a disk here, so a write there is no memory).
TEST_P(Lifecycle, WritesIntoTmpfsCountAgainstTheMemoryBound) {
  const bool bwrap = GetParam() == Backend::kNatural;
  const string name = token_ + "-fill";
  const vector<string> places =
      bwrap ? vector<string>{"/tmp", "/dev/shm"} : vector<string>{"/dev/shm"};
  for (const string& place : places) {
    SCOPED_TRACE(place);
    const string fill = "head -c 209715200 /dev/zero > " + place + "/" + name + " && echo wrote";
    const CliResult result = cli(Run({"--json", "--max-memory", "64M", "-c", fill}));
    const nlohmann::json object = parse_json(result.out);
    EXPECT_NE(object["stdout"], "wrote\n") << result.describe();
    EXPECT_NE(object["exitCode"], 0) << result.describe();
    EXPECT_FALSE(exists(place + "/" + name)) << "the host's " << place << " got the file";
    const string enforced = object["bounds"]["memory"]["enforcedBy"].get<string>();
    EXPECT_EQ(enforced.find("sized to the bound") != string::npos, bwrap) << enforced;
  }
  if (!bwrap) return;
  // Control: the same write fits a bound above it, so the refusal above was the bound's.
  const string fill = "head -c 209715200 /dev/zero > /tmp/" + name + " && echo wrote";
  const CliResult open = cli(Run({"--json", "--max-memory", "1G", "-c", fill}));
  EXPECT_EQ(parse_json(open.out)["stdout"], "wrote\n") << open.describe();
}

// Four processes, each below the bound, together above it. A cgroup holds their sum (its OOM
// killer ends some of them); RLIMIT_DATA holds each alone, so the supervisor sums the tree and
// ends all of it, and says so.
TEST_P(Lifecycle, ProcessesTogetherOverTheMemoryBoundAreEnded) {
  // Each holder keeps 48 MiB resident for 3 s; the leader counts those that lived to the end.
  const string tree = "pids=; for i in 1 2 3 4; do (exec -a " + token_ +
                      "-holder perl -e '$x = \"a\" x (48 << 20); sleep 3') & pids=\"$pids $!\"; "
                      "done; held=0; for p in $pids; do wait $p && held=$((held + 1)); done; "
                      "echo held=$held";
  const CliResult bounded = cli(Run({"--json", "--max-memory", "128M", "-c", tree}));
  const nlohmann::json object = parse_json(bounded.out);
  EXPECT_NE(object["stdout"], "held=4\n") << bounded.describe();
  EXPECT_FALSE(object["timedOut"].get<bool>()) << bounded.out;
  const string enforced = object["bounds"]["memory"]["enforcedBy"].get<string>();
  if (enforced.starts_with("RLIMIT_DATA")) {
    EXPECT_NE(enforced.find("summed by the supervisor"), string::npos) << enforced;
    EXPECT_TRUE(object["bounds"]["memory"]["exceeded"].get<bool>()) << bounded.out;
    EXPECT_EQ(object["signal"], "SIGKILL") << bounded.out;
    EXPECT_TRUE(bounded.exited_with(128 + SIGKILL)) << bounded.describe();
  } else {
    EXPECT_FALSE(object["bounds"]["memory"]["exceeded"].get<bool>()) << bounded.out;
  }
  EXPECT_TRUE(wait_until([&] { return live_with(token_).empty(); }, 5s))
      << "still alive: " << ::testing::PrintToString(live_with(token_));
  // Control: with room for all four, all four hold, and nothing is ended.
  const CliResult open = cli(Run({"--json", "--max-memory", "1G", "-c", tree}));
  const nlohmann::json control = parse_json(open.out);
  EXPECT_EQ(control["stdout"], "held=4\n") << open.describe();
  EXPECT_FALSE(control["bounds"]["memory"]["exceeded"].get<bool>()) << open.out;
}

TEST_P(Lifecycle, BadBoundsAreRefusedAndRunNothing) {
  for (const vector<string>& bad :
       {vector<string>{"--max-processes", "0"}, vector<string>{"--max-processes", "many"},
        vector<string>{"--max-memory", "1X"}, vector<string>{"--max-memory", "1K"},
        vector<string>{"--stdin", "sometimes"}}) {
    SCOPED_TRACE(::testing::PrintToString(bad));
    vector<string> tail = bad;
    tail.insert(tail.end(), {"-c", "touch " + marker_});
    const CliResult result = cli(Run(tail));
    EXPECT_TRUE(result.exited_with(125)) << result.describe();
    EXPECT_EQ(split_lines(result.err).size(), 1U) << result.describe();
    EXPECT_EQ(result.err.rfind("dsh-sandbox: ", 0), 0U) << result.describe();
    EXPECT_FALSE(exists(marker_));
  }
}

// ---- stdin
// ---------------------------------------------------------------------------------------

TEST_P(Lifecycle, StdinIsPassedThroughUnlessClosedOrATerminal) {
  std::array<int, 2> pipe{};
  ASSERT_EQ(::pipe2(pipe.data(), O_CLOEXEC), 0);
  ASSERT_EQ(::write(pipe[1], "hi\n", 3), 3);
  ::close(pipe[1]);
  {
    Spawned cli(Run({"--", "cat"}), pipe[0], -1);
    const CliResult result = cli.wait();
    EXPECT_TRUE(result.exited_with(0)) << result.describe();
    EXPECT_EQ(result.out, "hi\n") << result.describe();
  }
  ::close(pipe[0]);
  ASSERT_EQ(::pipe2(pipe.data(), O_CLOEXEC), 0);
  ASSERT_EQ(::write(pipe[1], "hi\n", 3), 3);
  ::close(pipe[1]);
  {
    Spawned cli(Run({"--stdin", "close", "--", "cat"}), pipe[0], -1);
    const CliResult result = cli.wait();
    EXPECT_TRUE(result.exited_with(0)) << result.describe();
    EXPECT_EQ(result.out, "") << result.describe();
  }
  ::close(pipe[0]);
  // A terminal on stdin: the command reads end-of-file at once, never the terminal.
  {
    Spawned cli(Run({"--", "cat"}), -1, -1, true);
    const CliResult result = cli.wait();
    EXPECT_TRUE(result.exited_with(0)) << result.describe();
    EXPECT_EQ(result.out, "") << result.describe();
  }
  {
    Spawned cli(Run({"--stdin", "inherit", "--", "cat"}), -1, -1, true);
    const CliResult result = cli.wait();
    EXPECT_TRUE(result.exited_with(125)) << result.describe();
    EXPECT_NE(result.err.find("dsh-sandbox: run: --stdin inherit"), string::npos)
        << result.describe();
  }
}

// At a terminal, the notice comes once and only for a command that would wait for a person: a
// shell or a prompt given nothing to run; never for one that runs by itself.
TEST_P(Lifecycle, TheStdinNoticeIsForAShellOrPromptAloneAndComesOnce) {
  for (const vector<string>& quiet :
       {vector<string>{"--", "true"}, vector<string>{"-c", "echo hi"},
        vector<string>{"--", "bash", "-c", "true"}, vector<string>{"--", "cat"}}) {
    Spawned cli(Run(quiet), -1, -1, true);
    const CliResult result = cli.wait();
    EXPECT_TRUE(result.exited_with(0)) << result.describe();
    EXPECT_EQ(result.err.find("dsh-sandbox"), string::npos) << result.describe();
  }
  for (const vector<string>& prompt :
       {vector<string>{"--", "bash"}, vector<string>{"--", "/bin/sh", "-i"}}) {
    Spawned cli(Run(prompt), -1, -1, true);
    const CliResult result = cli.wait();
    EXPECT_TRUE(result.exited_with(0)) << result.describe();
    const std::size_t first = result.err.find("dsh-sandbox: ");
    ASSERT_NE(first, string::npos) << result.describe();
    EXPECT_EQ(result.err.find("dsh-sandbox: ", first + 1), string::npos) << result.describe();
    EXPECT_NE(result.err.find("use `dsh-sandbox shell`"), string::npos) << result.describe();
  }
  // Not on a pipe: the command reads what it was given.
  const CliResult piped = cli(Run({"--", "bash"}));
  EXPECT_TRUE(piped.exited_with(0)) << piped.describe();
  EXPECT_EQ(piped.err, "") << piped.describe();
}

// ---- spill files
// ---------------------------------------------------------------------------------

string spill_dir() { return "/var/tmp/dsh-sandbox-" + std::to_string(::geteuid()); }

vector<string> spills() {
  vector<string> names;
  for (const string& name : list_dir(spill_dir())) {
    if (name.rfind("stdout-", 0) == 0 || name.rfind("stderr-", 0) == 0) names.push_back(name);
  }
  return names;
}

TEST_P(Lifecycle, SpillFilesAreRemovedUnlessTheAgentRenderNamesThem) {
  const string big = "seq 1 100000; seq 1 100000 >&2";
  const vector<string> before = spills();
  for (const vector<string>& form : {vector<string>{"--json"}, vector<string>{}}) {
    vector<string> tail = form;
    tail.insert(tail.end(), {"-c", big});
    const CliResult result = cli(Run(tail));
    EXPECT_TRUE(result.exited_with(0)) << result.describe().substr(0, 500);
    EXPECT_EQ(spills(), before) << "a spill file was left behind";
  }
  const CliResult agent = cli(Run({"--format", "agent", "-c", "seq 1 100000"}));
  EXPECT_TRUE(agent.exited_with(0)) << agent.describe().substr(0, 500);
  const string prefix = "[output truncated; full output: ";
  const std::size_t at = agent.out.find(prefix);
  ASSERT_NE(at, string::npos) << agent.out.substr(agent.out.size() - 300);
  const std::size_t end = agent.out.find(']', at);
  const string path = agent.out.substr(at + prefix.size(), end - at - prefix.size());
  EXPECT_EQ(path.rfind(spill_dir() + "/stdout-", 0), 0U) << path;
  struct stat info {};
  ASSERT_EQ(::lstat(path.c_str(), &info), 0) << path;
  EXPECT_EQ(info.st_mode & 0777, 0600U);
  EXPECT_EQ(info.st_uid, ::geteuid());
  struct stat dir {};
  ASSERT_EQ(::lstat(spill_dir().c_str(), &dir), 0);
  EXPECT_TRUE(S_ISDIR(dir.st_mode));
  EXPECT_EQ(dir.st_mode & 0777, 0700U);
  // It is the caller's to open, outside the sandbox: a later confined command, in either mode,
  // is refused it like another job's output (a kept spill may hold what an earlier run printed).
  EXPECT_EQ(read_file(path).size(), static_cast<std::size_t>(info.st_size));
  for (const string mode : {"workspace-write", "read-only"}) {
    const CliResult next = cli(Run({"--json", "--", "wc", "-c", path}, mode));
    EXPECT_FALSE(next.exited_with(0)) << next.describe();
    const nlohmann::json object = parse_json(next.out);
    EXPECT_EQ(object["stdout"], "") << next.out;
    EXPECT_NE(object["stderr"].get<string>().find("Permission denied"), string::npos) << next.out;
  }
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace dsh::cli_run_it
