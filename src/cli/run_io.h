// SPDX-License-Identifier: Apache-2.0
// What `dsh-sandbox run` does around the run itself: catching the signals that end it, and
// writing the command's output live without ever letting a reader that stops reading hold up
// the run's deadline or its end.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string_view>

#include "exec/exec.h"

namespace dsh::sandbox::cli {

// SIGINT, SIGTERM, SIGHUP and SIGPIPE, caught while the object lives (no SA_RESTART, so a
// blocking read such as the escalation question returns). The first one is recorded and aborts
// the run: the command's process group gets the same signal (SIGTERM for SIGPIPE: the command
// writes to our pipe, not to the broken one), SIGKILL to the whole tree after the grace, and
// `run` reports and exits 128+N.
class Interrupts {
 public:
  Interrupts();
  ~Interrupts();
  Interrupts(const Interrupts&) = delete;
  Interrupts& operator=(const Interrupts&) = delete;

  const std::shared_ptr<exec::AbortSignal>& abort() const { return abort_; }
  int signal() const;             // 0 while none came
  static void raise(int signal);  // as if `signal` had been caught (a live write met EPIPE)

 private:
  std::shared_ptr<exec::AbortSignal> abort_;
};

// --die-with-parent: the kernel sends run SIGTERM when the thread that started it ends
// (PR_SET_PDEATHSIG, Linux 2.1.57), even when its process was SIGKILLed, and run ends the tree as
// for any SIGTERM. Called before anything is spawned: a parent that dies while run asks is seen
// by a second look at the parent's pid, and ends run before it starts anything; one that died
// before run's main() cannot be told from a parent that is a reaper, and is not seen.
void end_with_parent();

// Writes one of run's own descriptors (1 or 2) live. Pipes and terminals are reopened through
// /proc/self/fd with O_NONBLOCK, a file description of our own, so the caller's (shared with a
// shell or a pipeline) keeps its flags; sockets are written with MSG_DONTWAIT. A full pipe or a
// stopped terminal is waited for until the deadline or an interruption, then what does not fit
// at once is dropped from the live stream (the tail and the spill keep everything). A reader
// that left (EPIPE) is an interruption by SIGPIPE.
class LiveOutput {
 public:
  LiveOutput(int fd, std::chrono::steady_clock::time_point deadline, int abort_fd);
  ~LiveOutput();
  LiveOutput(const LiveOutput&) = delete;
  LiveOutput& operator=(const LiveOutput&) = delete;

  void write(std::string_view chunk);

 private:
  enum class Kind { kNonBlocking, kSocket, kPolled };
  bool wait_writable();

  int fd_;
  bool own_ = false;
  Kind kind_ = Kind::kPolled;
  std::chrono::steady_clock::time_point deadline_;
  int abort_fd_;
  bool gave_up_ = false;
  bool broken_ = false;
  bool reader_gone_ = false;
};

}  // namespace dsh::sandbox::cli
