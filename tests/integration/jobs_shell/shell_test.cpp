// SPDX-License-Identifier: Apache-2.0
// `dsh-sandbox shell` driven through a pseudo-terminal of the test's, as a person's terminal
// would drive it: a command typed and its output read, a resize seen by `stty size`, Ctrl-C and
// Ctrl-Z reaching the running job, the shell's exit status, the terminal's settings restored,
// and a TIOCSTI attempt that leaves the outer terminal's input queue empty. On the natural chain
// and on Landlock alone, as root and as nobody; every effect checked from outside.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>

#include "cli_run_harness.h"
#include "dsh/sandbox/policy_service.h"
#include "must_run.h"
#include "pseudo_terminal.h"
#include "temp_dir.h"
#include "wait.h"

namespace dsh::cli_run_it {
namespace {

using sandbox::SandboxMode;
using sandbox::SessionLog;
using sandbox::set_sandbox_mode;
using std::string;
using std::vector;
using namespace std::chrono_literals;

// The person's terminal: the test holds the master (and keeps a slave descriptor, to look at the
// input queue); `dsh-sandbox shell` runs with the slave as stdin, stdout, stderr and controlling
// terminal, in a session of its own.
class Terminal {
 public:
  explicit Terminal(const vector<string>& args) {
    if (!pty_.ok()) return;
    ::tcgetattr(pty_.slave(), &initial_);
    pid_ = pty_.spawn(cli_argv(args));
  }
  ~Terminal() {
    if (pid_ > 0 && !status_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;

  pid_t pid() const { return pid_; }
  int slave() const { return pty_.slave(); }
  const termios& initial() const { return initial_; }
  const string& transcript() const { return transcript_; }

  void type(const string& text) const {
    ASSERT_EQ(::write(pty_.master(), text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }

  // Reads until `text` appears after what earlier waits consumed (true), or 60 s passed.
  bool wait_for(const string& text) {
    const auto limit = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < limit) {
      const auto found = transcript_.find(text, consumed_);
      if (found != string::npos) {
        consumed_ = found + text.size();
        return true;
      }
      if (!read_some(100)) break;
    }
    return false;
  }

  // Drains the terminal until the CLI exits (60 s at most); its exit status.
  std::optional<int> exit_status() {
    const auto limit = std::chrono::steady_clock::now() + 60s;
    while (!status_ && std::chrono::steady_clock::now() < limit) {
      int raw = 0;
      if (::waitpid(pid_, &raw, WNOHANG) == pid_) {
        status_ = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
        break;
      }
      read_some(50);
    }
    return status_;
  }

 private:
  bool read_some(int timeout_ms) {
    pollfd ready{pty_.master(), POLLIN, 0};
    if (::poll(&ready, 1, timeout_ms) <= 0) return true;
    char buffer[4096];
    const ssize_t n = ::read(pty_.master(), buffer, sizeof buffer);
    if (n <= 0) return false;
    transcript_.append(buffer, static_cast<std::size_t>(n));
    return true;
  }

  testing::Pty pty_;
  pid_t pid_ = -1;
  termios initial_{};
  string transcript_;
  std::size_t consumed_ = 0;
  std::optional<int> status_;
};

class Shell : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (!host_problem().empty()) DSH_SKIP_OR_FAIL(host_problem());
    ::chmod(dir_.path().c_str(), 0755);
    ws_ = dir_.mkdir("ws", 0755);
    if (!is_root()) xdg_.emplace("XDG_RUNTIME_DIR", dir_.mkdir("xdg", 0700).c_str());
  }

  vector<string> args(const string& mode = "workspace-write") {
    vector<string> result = {"shell", "--mode", mode, "--workspace", ws_};
    if (GetParam() == Backend::kLandlock) {
      const string config = dir_ / "landlock.json";
      if (!exists(config)) write_file(config, R"({"bwrapPath":"/nonexistent/dsh-shell/bwrap"})");
      result.insert(result.end(), {"--config", config});
    }
    return result;
  }

  // args() with a config of these keys instead (and the backend's, on Landlock).
  vector<string> args_with_config(nlohmann::json config) {
    if (GetParam() == Backend::kLandlock) config["bwrapPath"] = "/nonexistent/dsh-shell/bwrap";
    const string path = dir_ / "rules.json";
    write_file(path, config.dump());
    return {"shell", "--mode", "workspace-write", "--workspace", ws_, "--config", path};
  }

  string tag() const {
    return std::to_string(5000 + (::getpid() % 1000) * 2 + static_cast<int>(GetParam()));
  }

  // Waits until a process whose argv starts with `prefix` exists (30 s at most).
  static void appear(const string& prefix) {
    testing::wait_until([&] { return !processes_named(prefix).empty(); }, 30s);
  }

  static bool gone(const string& prefix) {
    return testing::wait_until([&] { return processes_named(prefix).empty(); }, 30s);
  }

  TempDir dir_;
  string ws_;
  std::optional<testing::ScopedEnv> xdg_;
};

TEST_P(Shell, TypeResizeInterruptSuspendExit) {
  Terminal terminal(args());
  // A command typed, its output read; the write lands in the workspace, checked on the host.
  terminal.type("echo AB\"\"CD > " + ws_ + "/typed; cat " + ws_ + "/typed\r");
  ASSERT_TRUE(terminal.wait_for("ABCD")) << terminal.transcript();
  EXPECT_EQ(read_file(ws_ + "/typed"), "ABCD\n");
  // The person's window size changes: the CLI gets SIGWINCH and passes the size on.
  winsize size{33, 77, 0, 0};
  ASSERT_EQ(::ioctl(terminal.slave(), TIOCSWINSZ, &size), 0);
  terminal.type("stty size\r");
  ASSERT_TRUE(terminal.wait_for("33 77")) << terminal.transcript();
  // Ctrl-C is a byte for the inner line discipline: SIGINT to the inner foreground job.
  const string sleeper = "sleep 1" + tag();
  terminal.type(sleeper + "\r");
  appear(sleeper);
  ASSERT_FALSE(processes_named(sleeper).empty()) << terminal.transcript();
  terminal.type("\x03");
  terminal.type("echo after$?\r");
  ASSERT_TRUE(terminal.wait_for("after130")) << terminal.transcript();
  EXPECT_TRUE(gone(sleeper));
  // Ctrl-Z stops the job (job control works: the shell owns its terminal); seen from outside.
  const string stopped = "sleep 2" + tag();
  terminal.type(stopped + "\r");
  appear(stopped);
  ASSERT_FALSE(processes_named(stopped).empty()) << terminal.transcript();
  terminal.type("\x1a");
  ASSERT_TRUE(terminal.wait_for("Stopped")) << terminal.transcript();
  EXPECT_EQ(process_state(processes_named(stopped).front()), 'T');
  terminal.type("kill -9 %1; fg >/dev/null 2>&1; echo back$((40+2))\r");
  ASSERT_TRUE(terminal.wait_for("back42")) << terminal.transcript();
  EXPECT_TRUE(gone(stopped));
  // The shell's status is the CLI's; the person's terminal is as it was.
  terminal.type("exit 7\r");
  EXPECT_EQ(terminal.exit_status(), 7) << terminal.transcript();
  termios after{};
  ASSERT_EQ(::tcgetattr(terminal.slave(), &after), 0);
  EXPECT_EQ(after.c_lflag, terminal.initial().c_lflag);
  EXPECT_EQ(after.c_iflag, terminal.initial().c_iflag);
  EXPECT_EQ(after.c_oflag, terminal.initial().c_oflag);
}

// The prompt says the shell is confined and under which mode, before the person's own prompt
// (their PS1, else user@host:dir$); `exit` still ends it.
TEST_P(Shell, ThePromptSaysTheShellIsConfined) {
  {
    Terminal terminal(args());
    ASSERT_TRUE(terminal.wait_for("[sandbox:workspace-write] ")) << terminal.transcript();
    terminal.type("echo seen$((3*3))\r");
    ASSERT_TRUE(terminal.wait_for("seen9")) << terminal.transcript();
    ASSERT_TRUE(terminal.wait_for("[sandbox:workspace-write] ")) << terminal.transcript();
    terminal.type("exit\r");
    EXPECT_EQ(terminal.exit_status(), 0) << terminal.transcript();
  }
  const testing::ScopedEnv own("PS1", "mine> ");
  Terminal terminal(args("read-only"));
  ASSERT_TRUE(terminal.wait_for("[sandbox:read-only] mine> ")) << terminal.transcript();
  terminal.type("exit 3\r");
  EXPECT_EQ(terminal.exit_status(), 3) << terminal.transcript();
}

// TIOCSTI (and TIOCLINUX) inside can reach only the inner pty: the outer terminal's input queue
// stays empty, and no injected line ever runs.
TEST_P(Shell, TerminalInjectionNeverReachesThePersonsTerminal) {
  Terminal terminal(args("read-only"));
  terminal.type("echo ready$((1+1))\r");
  ASSERT_TRUE(terminal.wait_for("ready2")) << terminal.transcript();
  // perl-base is essential on Debian; 0x5412 is TIOCSTI, 0x541C TIOCLINUX (asm-generic ioctls).
  terminal.type(
      "perl -e 'for my $f (\"/dev/tty\") { open(my $t, \"+<\", $f) or next; "
      "ioctl($t, 0x5412, $_) for split //, \"echo INJ\" . \"ECTED\\n\"; "
      "ioctl($t, 0x541C, pack(\"C\", 3)) }; "
      "ioctl(STDIN, 0x5412, $_) for split //, \"echo INJ\" . \"ECTED\\n\"'; "
      "echo done$((6*7))\r");
  ASSERT_TRUE(terminal.wait_for("done42")) << terminal.transcript();
  int queued = -1;
  ASSERT_EQ(::ioctl(terminal.slave(), FIONREAD, &queued), 0);
  EXPECT_EQ(queued, 0);
  terminal.type("echo end$((7*7))\r");
  ASSERT_TRUE(terminal.wait_for("end49")) << terminal.transcript();
  EXPECT_EQ(terminal.transcript().find("INJECTED"), string::npos) << terminal.transcript();
  EXPECT_EQ(::ioctl(terminal.slave(), FIONREAD, &queued), 0);
  EXPECT_EQ(queued, 0);
  terminal.type("exit\r");
  EXPECT_EQ(terminal.exit_status(), 0) << terminal.transcript();
}

// The CLI ended by a signal: the shell's whole tree ends, the terminal is restored, 128+N.
TEST_P(Shell, SignalEndsTheShellAndRestoresTheTerminal) {
  Terminal terminal(args());
  const string sleeper = "sleep 3" + tag();
  terminal.type("setsid " + sleeper + " & echo started$((2*4))\r");
  ASSERT_TRUE(terminal.wait_for("started8")) << terminal.transcript();
  appear(sleeper);
  ASSERT_FALSE(processes_named(sleeper).empty());
  ASSERT_EQ(::kill(terminal.pid(), SIGTERM), 0);
  EXPECT_EQ(terminal.exit_status(), 128 + SIGTERM) << terminal.transcript();
  EXPECT_TRUE(gone(sleeper));
  termios after{};
  ASSERT_EQ(::tcgetattr(terminal.slave(), &after), 0);
  EXPECT_EQ(after.c_lflag, terminal.initial().c_lflag);
}

// The CLI SIGKILLed (no handler runs, no clean-up of its own): nothing of the shell's tree
// survives it, not a setsid'd job nor one that ignores the hangup; checked in /proc from outside.
TEST_P(Shell, NothingSurvivesTheCliKilled) {
  Terminal terminal(args());
  const string detached = "sleep 4" + tag();
  const string ignoring = "sleep 6" + tag();
  terminal.type("setsid " + detached + " & (trap '' HUP TERM; exec " + ignoring +
                ") & echo started$((2*4))\r");
  ASSERT_TRUE(terminal.wait_for("started8")) << terminal.transcript();
  appear(detached);
  appear(ignoring);
  ASSERT_FALSE(processes_named(detached).empty());
  ASSERT_FALSE(processes_named(ignoring).empty());
  ASSERT_EQ(::kill(terminal.pid(), SIGKILL), 0);
  EXPECT_EQ(terminal.exit_status(), 128 + SIGKILL);
  EXPECT_TRUE(gone(detached)) << process_cmdline(processes_named(detached).front());
  EXPECT_TRUE(gone(ignoring));
}

// The config's path rules and the command line's hold in the shell as in run: a secret the
// config makes unreadable is not shown, a path --deny-write protects stays unwritten (checked on
// the host), while the rest of the workspace is writable.
// The shell is held to the same policy builder as a run: under danger-full-access nothing would
// enforce a --network, so the CLI exits 125 by itself at once, before any shell reads input.
TEST_P(Shell, AnUnenforceableNetworkIsRefusedAndNoShellStarts) {
  for (const string network : {"allow:example.com", "deny"}) {
    vector<string> refused = args("danger-full-access");
    refused.insert(refused.end(), {"--network", network});
    Terminal terminal(refused);
    const std::optional<int> status = terminal.exit_status();
    ASSERT_TRUE(status.has_value()) << "a shell started: " << terminal.transcript();
    EXPECT_EQ(*status, 125) << terminal.transcript();
    EXPECT_NE(terminal.transcript().find("--network " + network.substr(0, network.find(':'))),
              string::npos)
        << terminal.transcript();
    EXPECT_NE(terminal.transcript().find("nothing would enforce it"), string::npos)
        << terminal.transcript();
  }
}

TEST_P(Shell, PathRulesHoldInTheShell) {
  const auto [secret, guarded] = make_rule_targets(dir_, ws_);
  vector<string> with_rules = args_with_config({{"denyRead", {secret}}});
  with_rules.insert(with_rules.end(), {"--deny-write", guarded});
  Terminal terminal(with_rules);
  terminal.type("cat " + secret + "/key; echo x > " + guarded + "/f; echo x > " + ws_ +
                "/free; echo done$((2*4))\r");
  ASSERT_TRUE(terminal.wait_for("done8")) << terminal.transcript();
  terminal.type("exit\r");
  EXPECT_TRUE(terminal.exit_status().has_value()) << terminal.transcript();
  EXPECT_EQ(terminal.transcript().find(kSecret), string::npos) << terminal.transcript();
  // Landlock grants only add access: a read-only carve-out inside a writable root is what it
  // cannot govern (confine names it in `ungoverned`), so only bwrap's is checked.
  if (GetParam() == Backend::kNatural) EXPECT_FALSE(exists(guarded + "/f"));
  EXPECT_TRUE(exists(ws_ + "/free")) << terminal.transcript();
}

// What a workspace-write shell tries to plant for git (a commondir naming a config with
// core.fsmonitor, a post-commit hook) is refused at the call by the launcher's supervisor:
// nothing is undone at the end, and a real, unconfined git status and commit afterwards run
// nothing planted.
TEST_P(Shell, WhatTheShellPlantsForGitRunsNothingLater) {
  const string marker = dir_ / "pwned";
  ASSERT_TRUE(host_git(ws_, "init -q -b main .").exited_with(0));
  ASSERT_TRUE(host_git(ws_, "commit -q --allow-empty -m init").exited_with(0));
  Terminal terminal(args());
  string script = "cd " + ws_ + "\n" + git_plant_script(marker) + "\necho planted$((2*4))\n";
  std::replace(script.begin(), script.end(), '\n', '\r');
  terminal.type(script);
  ASSERT_TRUE(terminal.wait_for("planted8")) << terminal.transcript();
  terminal.type("exit\r");
  EXPECT_EQ(terminal.exit_status(), 0) << terminal.transcript();
  EXPECT_EQ(terminal.transcript().find("git state:"), string::npos) << terminal.transcript();
  EXPECT_FALSE(exists(ws_ + "/.git/commondir")) << terminal.transcript();
  ::unlink(marker.c_str());  // only a git outside may make it
  const CliResult after =
      host_git(ws_, "status; git -C '" + ws_ + "' commit -q --allow-empty -m x");
  EXPECT_FALSE(exists(marker)) << terminal.transcript() << after.describe();
  EXPECT_FALSE(exists(ws_ + "/.git/hooks/post-commit")) << terminal.transcript();
}

// --max-processes bounds the shell's tree as it bounds run's: however many processes the shell
// starts, no more than the bound are ever alive at once (counted in /proc from outside).
TEST_P(Shell, MaxProcessesBoundsTheShellsTree) {
  vector<string> bounded = args();
  bounded.insert(bounded.begin() + 1, {"--max-processes", "40"});
  Terminal terminal(bounded);
  const string sleeper = "sleep 8" + tag();
  // Python stops at the first refused fork (bash would retry each one for seconds).
  terminal.type(
      "python3 -c 'import subprocess\nn = 0\ntry:\n  while n < 100:\n    "
      "subprocess.Popen(\"" +
      sleeper +
      "\".split()); n += 1\nexcept OSError: pass\n"
      "print(\"start\" \"ed\", n)'\r");
  ASSERT_TRUE(terminal.wait_for("started ")) << terminal.transcript();
  const std::size_t alive = processes_named(sleeper).size();
  EXPECT_GT(alive, 0U) << terminal.transcript();
  EXPECT_LE(alive, 40U) << terminal.transcript();
  terminal.type("exit\r");
  EXPECT_EQ(terminal.exit_status(), 0) << terminal.transcript();
  EXPECT_TRUE(gone(sleeper));
}

// Four processes, each below the bound, together above it (Lifecycle's case for run): a cgroup
// holds their sum (its OOM killer ends some of them, the shell lives on and exits 5); where
// RLIMIT_DATA per process is the bound, exec's supervisor sums the tree and ends all of it, the
// shell with it (SIGKILL: 137), as it ends a run's. Either way not all four hold, and nothing of
// the tree is left (counted in /proc from outside). With room for all four, all four hold.
TEST_P(Shell, ProcessesTogetherOverTheMemoryBoundAreEnded) {
  const string holder = "holder" + tag();
  const string tree = "pids=; for i in 1 2 3 4; do (exec -a " + holder +
                      " perl -e '$x = \"a\" x (48 << 20); sleep 3') & pids=\"$pids $!\"; done; "
                      "held=0; for p in $pids; do wait $p && held=$((held + 1)); done; "
                      "echo held=$held; exit 5\r";
  for (const string& bound : {"128M", "1G"}) {
    SCOPED_TRACE(bound);
    vector<string> bounded = args();
    bounded.insert(bounded.begin() + 1, {"--max-memory", bound});
    Terminal terminal(bounded);
    terminal.type(tree);
    const std::optional<int> status = terminal.exit_status();
    EXPECT_TRUE(gone(holder));
    if (bound == "1G") {
      EXPECT_EQ(status, 5) << terminal.transcript();
      EXPECT_NE(terminal.transcript().find("held=4"), string::npos) << terminal.transcript();
      continue;
    }
    EXPECT_EQ(terminal.transcript().find("held=4"), string::npos) << terminal.transcript();
    EXPECT_TRUE(status == 5 || status == 128 + SIGKILL) << terminal.transcript();
  }
}

// With --session, the shell is one sandbox/run line of that log, as a run is: its argv, mode,
// workspace, backend and exit code; read from outside.
TEST_P(Shell, TheSessionLogRecordsTheShell) {
  const string log = dir_ / "session.jsonl";
  vector<string> with_session = args();
  with_session.insert(with_session.begin() + 1, {"--session", log});
  Terminal terminal(with_session);
  terminal.type("exit 3\r");
  EXPECT_EQ(terminal.exit_status(), 3) << terminal.transcript();
  std::optional<nlohmann::json> run_line;
  for (const string& line : split_lines(read_file(log))) {
    const nlohmann::json event = parse_json(line);
    if (event.value("type", "") == "sandbox/run") run_line = event;
  }
  ASSERT_TRUE(run_line.has_value()) << read_file(log);
  const nlohmann::json& payload = (*run_line)["payload"];
  EXPECT_EQ(payload["mode"], "workspace-write");
  EXPECT_EQ(payload["workspace"], ws_);
  EXPECT_EQ(payload["backend"], backend_name(GetParam()));
  EXPECT_EQ(payload["exitCode"], 3);
  EXPECT_EQ(payload["denied"], false);
  EXPECT_EQ(payload["argv"].back(), "-i") << payload;
}

// --timeout bounds the shell as it bounds run: the whole tree ended, exit 124.
TEST_P(Shell, TimeoutEndsTheShellAndItsTree) {
  vector<string> with_timeout = args();
  with_timeout.insert(with_timeout.begin() + 1, {"--timeout", "3"});
  Terminal terminal(with_timeout);
  const string detached = "sleep 7" + tag();
  terminal.type("setsid " + detached + " & echo started$((2*4))\r");
  ASSERT_TRUE(terminal.wait_for("started8")) << terminal.transcript();
  EXPECT_EQ(terminal.exit_status(), 124) << terminal.transcript();
  EXPECT_TRUE(gone(detached));
}

// A session made by the library, as a harness makes it, its cwd the workspace, at `mode`.
SessionLog make_session(const string& path, const string& workspace, SandboxMode mode) {
  SessionLog session = SessionLog::create(path, "s", workspace);
  set_sandbox_mode(session, mode);
  return session;
}

// An open shell of a session runs only as long as the session allows its mode: switched from
// outside (the library's set_sandbox_mode) from workspace-write to read-only, the shell's whole
// tree is SIGKILLed at once (checked in /proc), its terminal says why, the CLI exits 137, and a
// write the shell's tree attempts after the switch never lands (checked on the host).
TEST_P(Shell, ASwitchToANarrowerModeEndsTheShell) {
  const string log = dir_ / "session.jsonl";
  const SessionLog session = make_session(log, ws_, SandboxMode::kWorkspaceWrite);
  vector<string> with_session = args();
  with_session.insert(with_session.begin() + 1, {"--session", log});
  Terminal terminal(with_session);
  terminal.type("echo before > " + ws_ + "/before; echo ready$((2*4))\r");
  ASSERT_TRUE(terminal.wait_for("ready8")) << terminal.transcript();
  EXPECT_EQ(read_file(ws_ + "/before"), "before\n");
  const string late = ws_ + "/late";
  const string sleeper = "sleep 2." + tag();
  terminal.type("(" + sleeper + "; echo late > " + late + ") & echo armed$((2*4))\r");
  ASSERT_TRUE(terminal.wait_for("armed8")) << terminal.transcript();
  appear(sleeper);
  set_sandbox_mode(session, SandboxMode::kReadOnly);
  EXPECT_EQ(terminal.exit_status(), 128 + SIGKILL) << terminal.transcript();
  EXPECT_TRUE(terminal.wait_for(
      "dsh-sandbox: the session's mode changed to read-only; this shell ran under "
      "workspace-write and was ended; start a new shell to work under read-only"))
      << terminal.transcript();
  EXPECT_TRUE(gone(sleeper));
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_FALSE(exists(late)) << terminal.transcript();
  // The session's line of the shell says how it ended.
  const vector<string> lines = split_lines(read_file(log));
  ASSERT_FALSE(lines.empty());
  const nlohmann::json last = parse_json(lines.back());
  EXPECT_EQ(last["type"], "sandbox/run");
  EXPECT_EQ(last["payload"]["signal"], "SIGKILL") << last;
}

// A widening switch leaves the open shell running under its narrower mode (its write still
// refused, checked on the host), with a one-line note that a new shell gets the wider mode.
TEST_P(Shell, AWideningSwitchLeavesTheShellRunning) {
  const string log = dir_ / "session.jsonl";
  const SessionLog session = make_session(log, ws_, SandboxMode::kReadOnly);
  vector<string> with_session = args("read-only");
  with_session.insert(with_session.begin() + 1, {"--session", log});
  Terminal terminal(with_session);
  terminal.type("echo ready$((2*4))\r");
  ASSERT_TRUE(terminal.wait_for("ready8")) << terminal.transcript();
  set_sandbox_mode(session, SandboxMode::kWorkspaceWrite);
  ASSERT_TRUE(terminal.wait_for(
      "dsh-sandbox: the session's mode changed to workspace-write; this shell keeps running "
      "under read-only; a new shell gets workspace-write"))
      << terminal.transcript();
  const string after = ws_ + "/after";
  terminal.type("echo x > " + after + "; echo done$((2*4))\r");
  ASSERT_TRUE(terminal.wait_for("done8")) << terminal.transcript();
  EXPECT_FALSE(exists(after));
  terminal.type("exit 4\r");
  EXPECT_EQ(terminal.exit_status(), 4) << terminal.transcript();
}

// Failing closed: a session log made corrupt while the shell is open ends it, and says why.
TEST_P(Shell, ACorruptSessionLogEndsTheShell) {
  const string log = dir_ / "session.jsonl";
  make_session(log, ws_, SandboxMode::kWorkspaceWrite);
  vector<string> with_session = args();
  with_session.insert(with_session.begin() + 1, {"--session", log});
  Terminal terminal(with_session);
  terminal.type("echo ready$((2*4))\r");
  ASSERT_TRUE(terminal.wait_for("ready8")) << terminal.transcript();
  std::FILE* file = std::fopen(log.c_str(), "a");
  ASSERT_NE(file, nullptr);
  std::fputs("not a json line\n", file);
  std::fclose(file);
  EXPECT_EQ(terminal.exit_status(), 128 + SIGKILL) << terminal.transcript();
  EXPECT_TRUE(
      terminal.wait_for("dsh-sandbox: the session log can no longer be read as this "
                        "session's ("))
      << terminal.transcript();
  EXPECT_TRUE(
      terminal.wait_for("this shell ran under workspace-write and was ended, as the "
                        "sandbox fails closed"))
      << terminal.transcript();
}

INSTANTIATE_TEST_SUITE_P(Backends, Shell, ::testing::Values(Backend::kNatural, Backend::kLandlock),
                         [](const ::testing::TestParamInfo<Backend>& param) {
                           return string(param.param == Backend::kNatural ? "bwrap" : "landlock");
                         });

}  // namespace
}  // namespace dsh::cli_run_it
