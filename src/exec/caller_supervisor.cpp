// SPDX-License-Identifier: Apache-2.0
#include "caller_supervisor.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <string_view>

namespace dsh::sandbox::exec::detail {

namespace {

Message setup_failure(int error) {
  return {MessageKind::kSpawnFailed, error, static_cast<std::int32_t>(SpawnStage::kSetup)};
}

// Every signal is blocked across the fork so no handler of the caller's runs in the child
// before exec_command resets handlers and mask to what a fresh process expects.
pid_t fork_command(SpawnPlan& plan, const std::array<int, 2>& error_pipe) {
  sigset_t all;
  sigset_t old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(error_pipe[0]);
    exec_command(plan, error_pipe[1]);
  }
  const int error = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = error;
  return pid;
}

}  // namespace

bool single_threaded() {
  const int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::array<char, 4096> text{};
  const ssize_t n = ::read(fd, text.data(), text.size() - 1);
  ::close(fd);
  if (n <= 0) return false;
  const std::string_view status(text.data(), static_cast<std::size_t>(n));
  return status.find("\nThreads:\t1\n") != std::string_view::npos;
}

Message CallerSupervisor::start(SpawnPlan& plan) {
  ::prctl(PR_GET_CHILD_SUBREAPER, &old_subreaper_, 0, 0, 0);
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) return setup_failure(errno);
  // An ignored SIGCHLD would auto-reap: no statuses. Blocked, it reaches only the signalfd.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGCHLD, &dfl, &old_chld_);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  ::pthread_sigmask(SIG_BLOCK, &chld, &old_mask_);
  armed_ = true;
  signal_fd_ = ::signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  std::array<int, 2> error_pipe{-1, -1};
  if (signal_fd_ < 0 || ::pipe2(error_pipe.data(), O_CLOEXEC) != 0) return setup_failure(errno);
  const pid_t pid = fork_command(plan, error_pipe);
  const int fork_error = errno;
  ::close(error_pipe[1]);
  if (pid < 0) {
    ::close(error_pipe[0]);
    return setup_failure(fork_error);
  }
  leader_ = Leader{pid};
  const ExecFailure failure = read_exec_failure(error_pipe[0]);
  ::close(error_pipe[0]);
  if (failure.stage >= 0) {
    end_tree(leader_, signal_fd_);
    finished_ = true;
    return {MessageKind::kSpawnFailed, failure.error, failure.stage};
  }
  return {MessageKind::kStarted, pid, 0};
}

std::optional<Message> CallerSupervisor::collect() {
  if (finished_ || leader_.pid <= 0) return std::nullopt;
  drain_signalfd(signal_fd_);
  reap_exited(leader_);
  if (!leader_.reaped) return std::nullopt;
  end_tree(leader_, signal_fd_);  // what the command left behind dies with it
  finished_ = true;
  return Message{MessageKind::kExited, leader_.status, 0};
}

void CallerSupervisor::control(char command) {
  if (finished_ || leader_.pid <= 0 || leader_.reaped) return;
  ::kill(-leader_.pid, command == kTerminate ? SIGTERM : SIGKILL);
}

CallerSupervisor::~CallerSupervisor() {
  if (!finished_ && leader_.pid > 0) end_tree(leader_, signal_fd_);
  if (signal_fd_ >= 0) ::close(signal_fd_);
  if (!armed_) return;
  ::sigaction(SIGCHLD, &old_chld_, nullptr);
  ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
  ::prctl(PR_SET_CHILD_SUBREAPER, old_subreaper_, 0, 0, 0);
}

}  // namespace dsh::sandbox::exec::detail
