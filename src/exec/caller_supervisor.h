// SPDX-License-Identifier: Apache-2.0
// The caller as its command tree's reaper (Request::caller_supervises): what the forked
// per-run supervisor does, done in the calling process instead, for a process that runs one
// command and has no other children (the CLI). It spares a fork of the caller, that process's
// exit, and the hand-offs between three processes (about 0.2-0.35 ms a run on the project VM).
#pragma once

#include <csignal>
#include <optional>

#include "supervisor.h"

namespace dsh::sandbox::exec::detail {

// Whether the calling process has exactly one thread (/proc/self/status "Threads:").
bool single_threaded();

class CallerSupervisor {
 public:
  CallerSupervisor() = default;
  // Ends whatever is left of the tree, then restores SIGCHLD's disposition and mask and the
  // process's subreaper flag.
  ~CallerSupervisor();
  CallerSupervisor(const CallerSupervisor&) = delete;
  CallerSupervisor& operator=(const CallerSupervisor&) = delete;

  // Makes the process a child subreaper (PR_SET_CHILD_SUBREAPER, Linux 3.4), routes SIGCHLD to
  // a signalfd and spawns the command. Returns kStarted, or kSpawnFailed with nothing left.
  Message start(SpawnPlan& plan);
  // Readable when a child changed state.
  int fd() const { return signal_fd_; }
  // Reaps what has exited. Once the leader has, ends the rest of the tree, as bwrap's PID
  // namespace would, and returns kExited with the leader's wait status; nullopt before that.
  std::optional<Message> collect();
  // kTerminate: SIGTERM to the command's group; kKill: SIGKILL to it (collect() ends the rest).
  void control(char command);

 private:
  Leader leader_;
  int signal_fd_ = -1;
  bool armed_ = false;     // SIGCHLD and the subreaper flag are ours to restore
  bool finished_ = false;  // the tree is gone and reported
  int old_subreaper_ = 0;
  sigset_t old_mask_{};
  struct sigaction old_chld_ {};
};

}  // namespace dsh::sandbox::exec::detail
