// SPDX-License-Identifier: Apache-2.0
// An interactive confined program behind a pseudo-terminal the sandbox owns. The person's
// terminal never reaches the sandbox: the program gets the slave side of a fresh pty as its
// stdin, stdout, stderr and (inside the sandbox) its controlling terminal, in a session of its
// own; this process copies bytes between the person's terminal (in raw mode) and the master side,
// so the inner line discipline turns Ctrl-C and Ctrl-Z into signals for the inner foreground job,
// and an injection (TIOCSTI, TIOCLINUX) can only ever reach the inner pty.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dsh/sandbox/confined_argv.h"
#include "exec/exec.h"

namespace dsh::sandbox::shell {

// What a guard's check found: a line for the person (empty: none) and whether the program's
// whole tree must end now.
struct GuardNews {
  bool end = false;
  std::string line;
};

// Asked while the program runs, whenever `fd` polls readable (-1: none) and at least every
// `interval`: the CLI's watch of the shell's session (policy/session_watch.h).
struct ShellGuard {
  int fd = -1;
  std::chrono::milliseconds interval{500};
  std::function<GuardNews()> check;
};

struct ShellLaunch {
  std::vector<std::string> argv;     // absolute argv[0]: the confined argv, or the program
  std::vector<ProvidedFd> provided;  // descriptors the runner reads (bwrap's seccomp program)
  std::string workdir;               // absolute
  // The shell and its whole tree are ended after this (exit kTimedOutExit); nullopt: no bound.
  std::optional<std::chrono::milliseconds> timeout;
  // The tree's processes and memory, bounded as run bounds its command's: a cgroup child the
  // shell joins before it execs, else rlimits on it and the supervisor's watch of the tree.
  exec::ResourceBounds bounds;
  // A guard that may end the tree early: SIGKILL to every process of it at once, no hangup
  // first (the status is then kEndedExit); its other lines are shown on the terminal.
  std::optional<ShellGuard> guard;
};

// How the shell ended.
struct ShellEnd {
  int status = 0;  // what the CLI exits with: the shell's status, 128+N, or kTimedOutExit
  std::optional<int> exit_code;  // the shell exited with this
  std::optional<int> signal;     // a signal ended the shell (or this process, which ended it)
  bool timed_out = false;
  std::optional<std::string> ended_by;  // the guard's line, when it ended the tree
};

inline constexpr int kTimedOutExit = 124;  // as run's timeout
inline constexpr int kEndedExit = 137;     // the guard ended the tree: 128 + SIGKILL

// Runs it on `terminal_in`/`terminal_out` (the person's terminal, put in raw mode while the
// program runs and restored on every exit this process survives); passes window-size changes
// (SIGWINCH) to the inner pty. The status is the program's exit status (128+N for a signal);
// 128+N too when this process got SIGTERM, SIGHUP or SIGINT, after ending the program. Whatever the
// program left behind (a double-forked or setsid'd descendant) is killed before returning, and
// also when this process is SIGKILLed: the program runs in exec's terminal mode (exec/terminal.h),
// under exec's supervisor, the tree's child subreaper, which ends the tree when the program exits
// and when this process lets go of (or loses) its control channel. std::system_error when the
// pty cannot be made; std::runtime_error when the supervisor cannot be started.
ShellEnd run_shell(const ShellLaunch& launch, int terminal_in, int terminal_out);

}  // namespace dsh::sandbox::shell
