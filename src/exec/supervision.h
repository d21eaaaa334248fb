// SPDX-License-Identifier: Apache-2.0
// The caller's side of one supervisor, whatever the mode: the tree's bounds, the fork, and the
// two channels (control bytes to the supervisor, its Messages back). run() and start() give the
// command pipes for its output; the terminal mode gives it a terminal. One supervisor design for
// every process the library starts (supervisor.h).
#pragma once

#include <sys/types.h>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "exec/bounds.h"
#include "exec/exec.h"
#include "exec/supervisor.h"

namespace dsh::sandbox::exec::detail {

// The caller's environment as NAME=VALUE strings. Reading environ races with a concurrent
// setenv in another thread: callers that change their environment while running commands pass
// what they mean in Request::env instead.
std::vector<std::string> ambient_environment();

// How the supervisor is started, beyond its request.
struct SupervisorMode {
  // The calling thread waits for the run, so the supervisor may take that thread's death as its
  // caller's (PR_SET_PDEATHSIG fires when the forking thread exits).
  bool foreground = false;
  // Its own session, not only its own process group (SpawnPlan::new_session).
  bool new_session = false;
};

// A started supervisor, the caller's ends of its channels and the tree's bounds. If the owner
// gives up early (an exception from a callback, a Job destroyed unwaited), closing the control
// channel tells the supervisor to kill the whole tree and the destructor reaps it; the bounds'
// cgroups are removed after that (normally the supervisor has removed them already).
struct Supervision {
  Supervision() : bounds(std::make_unique<TreeBounds>()) {}
  ~Supervision() { let_go(); }
  Supervision(Supervision&& other) noexcept;
  Supervision& operator=(Supervision&&) = delete;
  Supervision(const Supervision&) = delete;
  Supervision& operator=(const Supervision&) = delete;

  // Makes the tree's bounds and forks the supervisor of `request`'s command, with `stdio` as its
  // stdin, stdout and stderr and `env` as its whole environment. A failure is setup_error.
  void start(const Request& request, std::vector<std::string> env, const std::array<int, 3>& stdio,
             SupervisorMode mode);

  int watch_fd() const { return status.get(); }

  // After watch_fd() polled readable (or to block for it): the next message; kLost when the
  // supervisor died without a word.
  std::optional<Message> read_news() const;

  // One control byte: a signal for the command's process group, or kKill for the whole tree.
  void control_tree(char command) const;

  // Closes the control channel (the supervisor ends whatever is left of the tree) and reaps the
  // supervisor; its last messages stay readable.
  void let_go();

  pid_t supervisor = 0;
  UniqueFd control;
  UniqueFd status;
  std::optional<SpawnError> setup_error;
  std::unique_ptr<TreeBounds> bounds;
};

// Why the command of `request` never started, from the supervisor's kSpawnFailed.
SpawnError spawn_error_of(const Request& request, const Message& message);

}  // namespace dsh::sandbox::exec::detail
