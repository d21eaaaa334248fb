// SPDX-License-Identifier: Apache-2.0
#include "local/bounded_run.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>

#include "seam/unique_fd.h"

namespace dsh::sandbox::local {

namespace {

using Clock = std::chrono::steady_clock;

// A probe's verdict decides later runs, so nothing of the caller may change it: a fixed
// environment (no PATH entry, LD_PRELOAD or locale of the caller's) and the root directory as
// its working directory (no program or library found relative to the caller's).
constexpr std::array<const char*, 2> kProbeEnvironment = {"PATH=/usr/bin:/bin", nullptr};

// Spawns argv in a new process group with stdout/stderr on the pipes; returns the pid or -errno.
pid_t spawn(const std::vector<std::string>& argv, Pipe& out, Pipe& err) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));  // NOLINT
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.write.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write.get(), STDERR_FILENO);
  // Descriptors the caller left open without O_CLOEXEC must not reach the probe.
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
  posix_spawn_file_actions_addchdir_np(&actions, "/");  // glibc 2.29
  sigset_t empty;
  sigset_t defaults;
  sigemptyset(&empty);
  sigfillset(&defaults);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  std::array<const char*, 2> environment = kProbeEnvironment;
  // posix_spawn takes char* const[] for historical reasons and never writes through it.
  const int rc = ::posix_spawn(&pid, args[0], &actions, &attr, args.data(),
                               const_cast<char* const*>(environment.data()));  // NOLINT

  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc == 0 ? pid : -rc;
}

void append_capped(std::string& sink, const char* data, ssize_t size) {
  const auto room = kCaptureLimit - std::min(kCaptureLimit, sink.size());
  sink.append(data, std::min(room, static_cast<std::size_t>(size)));
}

void append_available(int fd, std::string& sink, bool& open) {
  std::array<char, 4096> buffer{};
  const ssize_t n = ::read(fd, buffer.data(), buffer.size());
  if (n > 0) {
    append_capped(sink, buffer.data(), n);
  } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    open = false;
  }
}

// The child has exited or must die: end its whole group, then reap the leader.
int end_group_and_reap(pid_t pid) {
  ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

bool leader_exited(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

int remaining_ms(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::max<long long>(0, left));
}

// Reads both pipes until the leader exits (tracked through a pidfd, Linux 5.3+, or by a 10 ms
// tick where pidfds are unavailable) or the deadline passes. Returns true on exit.
bool pump_until_exit(pid_t pid, Pipe& out, Pipe& err, BoundedRun& run, Clock::time_point deadline) {
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  bool out_open = true;
  bool err_open = true;
  while (true) {
    if (leader_exited(pid)) return true;
    const int left = remaining_ms(deadline);
    if (left == 0) return false;
    std::array<pollfd, 3> fds = {pollfd{out_open ? out.read.get() : -1, POLLIN, 0},
                                 pollfd{err_open ? err.read.get() : -1, POLLIN, 0},
                                 pollfd{pidfd.get(), POLLIN, 0}};
    const int wait = pidfd.get() >= 0 ? left : std::min(left, 10);
    if (::poll(fds.data(), fds.size(), wait) < 0 && errno != EINTR) return false;
    if (fds[0].revents != 0) append_available(out.read.get(), run.out, out_open);
    if (fds[1].revents != 0) append_available(err.read.get(), run.err, err_open);
  }
}

// Reads what is left without blocking: a process that left the group (setsid) may still hold
// a write end, and must not stall the caller.
void drain(Pipe& pipe, std::string& sink) {
  ::fcntl(pipe.read.get(), F_SETFL, O_NONBLOCK);
  std::array<char, 4096> buffer{};
  ssize_t n = 0;
  while ((n = ::read(pipe.read.get(), buffer.data(), buffer.size())) > 0) {
    append_capped(sink, buffer.data(), n);
  }
}

}  // namespace

BoundedRun run_bounded(const std::vector<std::string>& argv, double timeout_ms) {
  BoundedRun run;
  // posix_spawn does not search PATH, but a relative name would still be found in the working
  // directory of the spawn: refuse it outright.
  if (argv.empty() || !argv.front().starts_with('/')) {
    run.spawn_error = EINVAL;
    return run;
  }
  Pipe out;
  Pipe err;
  if (!open_pipe(out) || !open_pipe(err)) {
    run.spawn_error = errno;
    return run;
  }
  const auto deadline = Clock::now() + std::chrono::microseconds(
                                           static_cast<long long>(std::ceil(timeout_ms * 1000)));
  const pid_t pid = spawn(argv, out, err);
  if (pid < 0) {
    run.spawn_error = -pid;
    return run;
  }
  out.write.reset();
  err.write.reset();
  run.timed_out = !pump_until_exit(pid, out, err, run, deadline);
  const int status = end_group_and_reap(pid);
  drain(out, run.out);
  drain(err, run.err);
  if (!run.timed_out && WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  return run;
}

}  // namespace dsh::sandbox::local
