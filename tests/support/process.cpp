// SPDX-License-Identifier: Apache-2.0
#include "process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

extern char** environ;

namespace dsh::testing {
namespace {

using Clock = std::chrono::steady_clock;

std::string drain(int fd) {
  std::string text;
  if (fd < 0) return text;
  char buffer[4096];
  ::lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = ::pread(fd, buffer, sizeof(buffer), static_cast<off_t>(text.size()))) > 0;) {
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

int wait_status(pid_t pid) {
  int status = -1;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

bool write_proc_file(const char* path, const char* text) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const auto size = static_cast<ssize_t>(std::strlen(text));
  const bool ok = ::write(fd, text, static_cast<std::size_t>(size)) == size;
  ::close(fd);
  return ok;
}

// Prepared before fork: the child makes only async-signal-safe calls, the suite may have threads.
struct UsernsMaps {
  std::string uid_map;
  std::string gid_map;
};

UsernsMaps userns_maps() {
  return {"0 " + std::to_string(::getuid()) + " 1", "0 " + std::to_string(::getgid()) + " 1"};
}

// In the child: become uid/gid 0 of a new user namespace (full capabilities inside it).
bool enter_userns(const UsernsMaps& maps) {
  if (::unshare(CLONE_NEWUSER) != 0) return false;
  return write_proc_file("/proc/self/setgroups", "deny") &&
         write_proc_file("/proc/self/uid_map", maps.uid_map.c_str()) &&
         write_proc_file("/proc/self/gid_map", maps.gid_map.c_str());
}

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> result;
  result.reserve(strings.size() + 1);
  for (const std::string& s : strings) result.push_back(const_cast<char*>(s.c_str()));
  result.push_back(nullptr);
  return result;
}

}  // namespace

bool RunResult::exited_with(int code) const {
  return WIFEXITED(status) && WEXITSTATUS(status) == code;
}

bool RunResult::killed_by(int signal) const {
  return WIFSIGNALED(status) && WTERMSIG(status) == signal;
}

std::string RunResult::describe() const {
  std::ostringstream text;
  if (WIFEXITED(status)) {
    text << "exit " << WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    text << "signal " << WTERMSIG(status);
  } else {
    text << "status " << status;
  }
  text << " after " << elapsed.count() << " ms\n[stdout]\n" << out << "\n[stderr]\n" << err;
  return text.str();
}

Started::Started(const std::vector<std::string>& argv, const SpawnOptions& options)
    : userns_(options.in_new_userns) {
  int slave = -1;
  if (options.terminal) {
    if (::openpty(&master_, &slave, nullptr, nullptr, nullptr) != 0) {
      ADD_FAILURE() << "openpty: " << std::strerror(errno);
      return;
    }
    ::fcntl(master_, F_SETFD, FD_CLOEXEC);
    ::fcntl(slave, F_SETFD, FD_CLOEXEC);
  }
  if (options.stdout_fd < 0) out_ = ::memfd_create("stdout", MFD_CLOEXEC);
  if (!options.terminal) err_ = ::memfd_create("stderr", MFD_CLOEXEC);
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int stdin_fd = options.terminal ? slave : (options.stdin_fd >= 0 ? options.stdin_fd : null);
  const int stdout_fd = options.stdout_fd >= 0 ? options.stdout_fd : out_;
  const int stderr_fd = options.terminal ? slave : err_;

  std::vector<char*> args = c_strings(argv);
  std::vector<char*> envp;
  if (options.env.empty()) {
    for (char** entry = environ; *entry != nullptr; ++entry) envp.push_back(*entry);
    envp.push_back(nullptr);
  } else {
    envp = c_strings(options.env);
  }
  const UsernsMaps maps = userns_maps();
  std::vector<std::pair<int, int>> fds = options.fds;
  const bool terminal = options.terminal;

  start_ = Clock::now();
  pid_ = ::fork();
  if (pid_ == 0) {
    // Every source moves above the highest target first, so a dup2 never clobbers a source.
    int floor = 64;
    for (auto& [source, target] : fds) source = ::fcntl(source, F_DUPFD_CLOEXEC, floor++);
    const int in = ::fcntl(stdin_fd, F_DUPFD_CLOEXEC, floor++);
    const int out = ::fcntl(stdout_fd, F_DUPFD_CLOEXEC, floor++);
    const int err = ::fcntl(stderr_fd, F_DUPFD_CLOEXEC, floor++);
    if (terminal) {
      ::setsid();
      ::ioctl(in, TIOCSCTTY, 0);
    }
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    for (const auto& [source, target] : fds) ::dup2(source, target);
    if (options.in_new_userns && !enter_userns(maps)) ::_exit(kUsernsSetupFailed);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  if (pid_ < 0) ADD_FAILURE() << "fork: " << std::strerror(errno);
  ::close(null);
  if (slave >= 0) ::close(slave);
}

Started::~Started() {
  if (!waited_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    wait_status(pid_);
  }
  for (const int fd : {out_, err_, master_}) {
    if (fd >= 0) ::close(fd);
  }
}

std::string Started::err_so_far() const { return master_ >= 0 ? transcript_ : drain(err_); }

void Started::read_terminal(int timeout_ms) {
  pollfd ready{master_, POLLIN, 0};
  if (::poll(&ready, 1, timeout_ms) <= 0) return;
  char buffer[1024];
  const ssize_t n = ::read(master_, buffer, sizeof(buffer));
  if (n > 0) transcript_.append(buffer, static_cast<std::size_t>(n));
}

bool Started::wait_for_terminal_text(const std::string& text, std::chrono::milliseconds limit) {
  if (master_ < 0) return false;
  const Clock::time_point deadline = Clock::now() + limit;
  while (transcript_.find(text) == std::string::npos) {
    if (Clock::now() > deadline) return false;
    pollfd ready{master_, POLLIN, 0};
    if (::poll(&ready, 1, 20) <= 0) continue;
    if ((ready.revents & POLLIN) == 0) return false;  // POLLHUP: every holder of it is gone
    const std::size_t before = transcript_.size();
    read_terminal(0);
    if (transcript_.size() == before) return false;  // EIO: likewise
  }
  return true;
}

void Started::type(const std::string& text) const {
  EXPECT_EQ(::write(master_, text.data(), text.size()), static_cast<ssize_t>(text.size()));
}

RunResult Started::wait(std::chrono::milliseconds limit) {
  RunResult result;
  if (pid_ <= 0 || waited_) return result;
  waited_ = true;
  const bool poll = master_ >= 0 || limit > std::chrono::milliseconds::zero();
  const Clock::time_point deadline = Clock::now() + limit;
  bool killed = false;
  while (true) {
    const pid_t done = ::waitpid(pid_, &result.status, poll ? WNOHANG : 0);
    if (done == pid_) break;
    if (done < 0 && errno != EINTR) break;
    if (!killed && limit > std::chrono::milliseconds::zero() && Clock::now() > deadline) {
      ADD_FAILURE() << "still running after " << limit.count()
                    << " ms, killed; stderr so far: " << err_so_far();
      ::kill(pid_, SIGKILL);
      killed = true;
    }
    if (master_ >= 0) {
      read_terminal(20);
    } else if (poll) {
      ::poll(nullptr, 0, 20);
    }
  }
  result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start_);
  if (master_ >= 0) {
    for (std::size_t before = 0; before != transcript_.size();) {
      before = transcript_.size();
      read_terminal(0);
    }
  }
  result.out = drain(out_);
  result.err = master_ >= 0 ? transcript_ : drain(err_);
  if (userns_ && result.exited_with(kUsernsSetupFailed)) {
    ADD_FAILURE() << "user namespace setup failed in the child";
  }
  return result;
}

RunResult execute(const std::vector<std::string>& argv, const SpawnOptions& options) {
  return Started(argv, options).wait();
}

bool userns_available() {
  const UsernsMaps maps = userns_maps();
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(enter_userns(maps) ? 0 : 1);
  const int status = wait_status(pid);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace dsh::testing
