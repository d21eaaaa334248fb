// SPDX-License-Identifier: Apache-2.0
// exec's terminal mode: a command whose stdin, stdout and stderr are a terminal the caller owns
// (the slave side of a pseudo-terminal it proxies), for a person at it. It runs under exec's
// supervisor as every run does: the supervisor is the tree's child subreaper, joins the tree to
// its bounds (cgroups, rlimits, the memory watch), ends the whole tree when the command exits, when
// the caller lets go, and when the caller dies (even by SIGKILL: its control channel closes).
// What differs from run() and start():
// - the supervisor leaves the caller's session (setsid), so the caller's controlling terminal is
//   no terminal of the tree's: the command can make the given terminal its own controlling one
//   only from a session it makes itself;
// - the command's environment is the caller's own, as it is (a person's shell, not a tool's
//   non-interactive run);
// - no output is captured and there is no deadline: the caller reads the terminal and decides
//   when the run is over.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/exec.h"

namespace dsh::sandbox::exec {

struct TerminalRequest {
  std::vector<std::string> argv;  // argv[0]: an absolute program, run as given
  std::string workdir;            // absolute
  int terminal = -1;              // the command's stdin, stdout and stderr
  std::vector<FdMapping> fds;     // further descriptors of the command's, as Request::fds
  ResourceBounds bounds;
};

// How a terminal run ended. Nothing set: the supervisor died without a word (someone killed it;
// the command died with it, PR_SET_PDEATHSIG).
struct TerminalEnd {
  std::optional<int> wait_status;         // the command's, as waitpid(2) gave it
  std::optional<SpawnError> spawn_error;  // the command never started
  bool over_memory = false;               // the supervisor ended the tree for its memory
};

class TerminalRun {
 public:
  TerminalRun();
  ~TerminalRun();  // lets go (end()) when the caller did not: nothing outlives the handle
  TerminalRun(TerminalRun&&) noexcept;
  TerminalRun& operator=(TerminalRun&&) noexcept;
  TerminalRun(const TerminalRun&) = delete;
  TerminalRun& operator=(const TerminalRun&) = delete;

  pid_t pid() const;  // the command's pid and process group id; 0 when it never started
  // Readable when the supervisor has news, then take_news(); -1 when no supervisor started.
  int watch_fd() const;
  // After watch_fd() polled readable: how the run ended, once it has (the whole tree is gone by
  // then), also on every later call; nullopt for news that does not end it. Blocks when nothing
  // is there yet.
  std::optional<TerminalEnd> take_news();
  // Blocks until the run has ended.
  TerminalEnd wait();
  // A signal to the command's process group.
  void signal(int signal) const;
  // Lets go: the supervisor SIGKILLs whatever is left of the tree; returns once it has exited,
  // with how the run ended.
  TerminalEnd end();
  // How the tree's bounds were enforced.
  const BoundsFacts& bounds() const;

  struct State;

 private:
  explicit TerminalRun(std::unique_ptr<State> state);
  friend TerminalRun start_on_terminal(const TerminalRequest& request);
  std::unique_ptr<State> state_;
};

// Starts the command. Throws InvalidSandboxInputError for an argv that does not start with an
// absolute program, a terminal that is no descriptor or a bad bound or mapping; every failure to
// start it (the supervisor's setup included) is the run's TerminalEnd::spawn_error instead, known
// when this returns.
TerminalRun start_on_terminal(const TerminalRequest& request);

}  // namespace dsh::sandbox::exec
