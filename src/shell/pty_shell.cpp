// SPDX-License-Identifier: Apache-2.0
#include "shell/pty_shell.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "base/io.h"
#include "base/unique_fd.h"
#include "exec/bounds.h"

namespace dsh::sandbox::shell {

namespace {

[[noreturn]] void fail(const char* what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// The signals this process acts on, as bytes on a pipe its loop polls.
int g_signal_pipe = -1;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

void on_signal(int signal) {
  const int saved = errno;
  const auto byte = static_cast<unsigned char>(signal);
  (void)::write(g_signal_pipe, &byte, 1);
  errno = saved;
}

constexpr std::array kHandled = {SIGWINCH, SIGCHLD, SIGTERM, SIGHUP, SIGINT, SIGQUIT};

// The person's terminal in raw mode for as long as it lives; its settings come back on every
// return and exception.
class RawMode {
 public:
  explicit RawMode(int fd) : fd_(fd) {
    if (::tcgetattr(fd, &saved_) != 0) return;  // not a terminal: nothing to change
    termios raw = saved_;
    ::cfmakeraw(&raw);
    if (::tcsetattr(fd, TCSANOW, &raw) == 0) active_ = true;
  }
  ~RawMode() { restore(); }
  RawMode(const RawMode&) = delete;
  RawMode& operator=(const RawMode&) = delete;
  void restore() {
    if (active_) ::tcsetattr(fd_, TCSANOW, &saved_);
    active_ = false;
  }
  const termios* saved() const { return active_ ? &saved_ : nullptr; }

 private:
  int fd_;
  termios saved_{};
  bool active_ = false;
};

// A sealed memfd holding what a runner reads from a descriptor it was told about.
UniqueFd provided_descriptor(const ProvidedFd& wanted) {
  UniqueFd fd(::memfd_create("dsh-sandbox-provided", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (fd.get() < 0) fail("memfd_create");
  if (io::write_all(fd.get(), wanted.content) != wanted.content.size()) fail("write to memfd");
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) !=
          0 ||
      ::lseek(fd.get(), 0, SEEK_SET) != 0) {
    fail("sealing the memfd");
  }
  return fd;
}

// Every descendant this subreaper still has (orphans reparent to it), found through
// /proc/self/task/*/children (Linux 3.5), SIGKILLed and reaped until none is left.
void end_descendants() {
  for (int round = 0; round < 100; ++round) {
    std::vector<pid_t> children;
    if (DIR* tasks = ::opendir("/proc/self/task")) {
      // One directory stream, read by this thread alone.
      while (const dirent* task = ::readdir(tasks)) {  // NOLINT(concurrency-mt-unsafe)
        if (task->d_name[0] == '.') continue;
        std::ifstream list(std::string("/proc/self/task/") + task->d_name + "/children");
        pid_t pid = 0;
        while (list >> pid) children.push_back(pid);
      }
      ::closedir(tasks);
    }
    if (children.empty()) return;
    for (const pid_t pid : children) ::kill(pid, SIGKILL);
    for (const pid_t pid : children) {
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
  }
}

// The keeper's child: the runner on the inner terminal, in the tree's bounds, with the
// descriptors the confined argv expects.
[[noreturn]] void start_runner(const std::vector<char*>& argv, const ShellLaunch& launch, int slave,
                               std::vector<UniqueFd>& provided,
                               const exec::detail::TreeBounds& bounds) {
  // A session of its own, without a controlling terminal: nothing in it can reach the
  // person's terminal, which is not among its descriptors either. Its own terminal is made
  // controlling inside the sandbox (setsid --ctty), after the runner's own setsid.
  ::setsid();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  for (int fd = 0; fd <= 2; ++fd) ::dup2(slave, fd);
  for (std::size_t i = 0; i < provided.size(); ++i) {
    // dup2 clears FD_CLOEXEC on the target; a descriptor already in place keeps its flag.
    const int target = launch.provided[i].fd;
    if (provided[i].get() == target) {
      ::fcntl(target, F_SETFD, 0);
    } else {
      ::dup2(provided[i].get(), target);
    }
  }
  if (::chdir(launch.workdir.c_str()) != 0) ::_exit(126);
  // Into the tree's cgroups before anything runs, so every descendant is born inside; a bound
  // that cannot be put in place runs nothing.
  for (const int procs : bounds.procs) {
    if (::write(procs, "0", 1) != 1) ::_exit(126);
  }
  if (bounds.nproc) {
    const rlimit limit{*bounds.nproc, *bounds.nproc};
    if (::setrlimit(RLIMIT_NPROC, &limit) != 0) ::_exit(126);
  }
  if (bounds.data) {
    const rlimit limit{*bounds.data, *bounds.data};
    if (::setrlimit(RLIMIT_DATA, &limit) != 0) ::_exit(126);
  }
  ::execve(argv.front(), argv.data(), environ);
  ::_exit(errno == ENOENT ? 127 : 126);
}

// The keeper: our process between the CLI and the shell's runner, the child subreaper of the
// whole tree. Orphans (a setsid'd or double-forked job) reparent to it, and it ends them all
// when the CLI lets go of `control`: when the proxy is done, or when the CLI dies without a
// chance to clean up (SIGKILL closes its end too). It sends the runner's pid, then its wait
// status, over `report`. Runs in the forked child of a single-threaded CLI, so it may allocate.
[[noreturn]] void keep(const std::vector<char*>& argv, const ShellLaunch& launch, int slave,
                       std::vector<UniqueFd>& provided, const exec::detail::TreeBounds& bounds,
                       int control, int report) {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  ::setpgid(0, 0);  // out of the person's foreground process group: no terminal signal reaches it
  const pid_t child = ::fork();
  if (child < 0) ::_exit(126);
  if (child == 0) start_runner(argv, launch, slave, provided, bounds);
  // The keeper holds no terminal: neither the person's nor the inner one.
  const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd <= 2 && null >= 0; ++fd) ::dup2(null, fd);
  ::close(slave);
  provided.clear();
  (void)io::write_all(report, &child, sizeof child);
  const UniqueFd child_fd(static_cast<int>(::syscall(SYS_pidfd_open, child, 0)));
  bool reported = false;
  for (;;) {
    std::array<pollfd, 2> fds{{{control, POLLIN, 0}, {reported ? -1 : child_fd.get(), POLLIN, 0}}};
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) break;
    if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) break;  // the CLI let go
    if ((fds[1].revents & POLLIN) != 0) {
      int wait_status = 0;
      while (::waitpid(child, &wait_status, 0) < 0 && errno == EINTR) {
      }
      (void)io::write_all(report, &wait_status, sizeof wait_status);
      reported = true;
    }
  }
  // cgroup.kill (Linux 5.14) reaches every task of the tree at once, whatever it reparented to;
  // then every descendant left is killed and reaped by pid.
  if (bounds.kill >= 0) (void)!::write(bounds.kill, "1", 1);
  end_descendants();
  ::_exit(0);
}

int status_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

// The inner pty pair: the master stays here; the slave is handed down as an inherited
// descriptor, so no process in the sandbox needs to open a path under /dev/pts (Landlock refuses
// the host's, bwrap mounts its own). Its line discipline starts as the person's terminal is
// (erase, intr, ...), sized alike.
UniqueFd open_inner_pty(int terminal_in, UniqueFd& slave) {
  UniqueFd master(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (master.get() < 0 || ::grantpt(master.get()) != 0 || ::unlockpt(master.get()) != 0) {
    fail("posix_openpt");
  }
  std::array<char, 128> name{};
  if (::ptsname_r(master.get(), name.data(), name.size()) != 0) fail("ptsname_r");
  slave = UniqueFd(::open(name.data(), O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (slave.get() < 0) fail("opening the pty's slave side");
  termios settings{};
  if (::tcgetattr(terminal_in, &settings) == 0) ::tcsetattr(slave.get(), TCSANOW, &settings);
  winsize size{};
  if (::ioctl(terminal_in, TIOCGWINSZ, &size) == 0) ::ioctl(master.get(), TIOCSWINSZ, &size);
  return master;
}

// The handled signals as bytes on a pipe the relay polls, from construction until restore().
class SignalRoute {
 public:
  SignalRoute() {
    std::array<int, 2> pipe{};
    if (::pipe2(pipe.data(), O_CLOEXEC | O_NONBLOCK) != 0) fail("pipe2");
    read_ = UniqueFd(pipe[0]);
    write_ = UniqueFd(pipe[1]);
    g_signal_pipe = write_.get();
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    for (std::size_t i = 0; i < kHandled.size(); ++i) {
      ::sigaction(kHandled[i], &action, &previous_[i]);
    }
  }
  SignalRoute(const SignalRoute&) = delete;
  SignalRoute& operator=(const SignalRoute&) = delete;
  ~SignalRoute() = default;

  const UniqueFd& read_end() const { return read_; }
  const UniqueFd& write_end() const { return write_; }
  void restore() {
    for (std::size_t i = 0; i < kHandled.size(); ++i) {
      ::sigaction(kHandled[i], &previous_[i], nullptr);
    }
    g_signal_pipe = -1;
  }

 private:
  UniqueFd read_;
  UniqueFd write_;
  std::array<struct sigaction, kHandled.size()> previous_{};
};

// The relay between the person's terminal and the inner one: what is typed goes to the master,
// what the shell writes comes back. It ends once the shell's status is in and its output
// drained, when every holder of the inner terminal closed it, on a signal that ends the
// session, or at the deadline.
struct Relay {
  int terminal_in;
  int terminal_out;
  int master;
  int report;
  int signal_read;
  std::string to_inner;             // typed, not yet taken by the master
  std::optional<int> child_status;  // the shell's wait status
  int ended_by = 0;
  bool input_open = true;
  bool timed_out = false;
  std::array<char, 16384> buffer{};

  void run(const std::optional<std::chrono::milliseconds>& timeout) {
    const auto started = std::chrono::steady_clock::now();
    for (;;) {
      int wait_ms = -1;
      if (timeout) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            started + *timeout - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
          timed_out = true;
          return;
        }
        wait_ms = static_cast<int>(std::min<std::int64_t>(left.count() + 1, 60'000));
      }
      // The shell has ended: only the output already in the master is left to drain. Waiting
      // would wait for nothing when a process it left holds the terminal open and silent, since
      // its status (read in an earlier round, with output beside it) wakes no poll again.
      if (child_status) wait_ms = 0;
      if (!round(wait_ms)) return;
    }
  }

  // One poll and what it found; false once the relay ends.
  bool round(int wait_ms) {
    std::array<pollfd, 4> fds{
        {{signal_read, POLLIN, 0},
         {master, static_cast<short>(POLLIN | (to_inner.empty() ? 0 : POLLOUT)), 0},
         {input_open ? terminal_in : -1, POLLIN, 0},
         {child_status ? -1 : report, POLLIN, 0}}};
    if (::poll(fds.data(), fds.size(), wait_ms) < 0) {
      if (errno == EINTR) return true;
      fail("poll");
    }
    if ((fds[3].revents & (POLLIN | POLLHUP)) != 0) {
      int wait_status = 0;
      const ssize_t n = io::read_some(report, static_cast<void*>(&wait_status), sizeof wait_status);
      // The keeper gone without a status (killed by someone): the shell is gone with it.
      child_status =
          n == static_cast<ssize_t>(sizeof wait_status) ? wait_status : W_EXITCODE(126, 0);
    }
    if ((fds[0].revents & POLLIN) != 0) take_signals();
    if (ended_by != 0) return false;
    if ((fds[1].revents & POLLIN) != 0) {
      const ssize_t n = ::read(master, buffer.data(), buffer.size());
      if (n > 0) {
        (void)io::write_all(terminal_out, buffer.data(), static_cast<std::size_t>(n));
        return true;  // drain the output before judging the end
      }
    }
    if ((fds[1].revents & POLLOUT) != 0 && !to_inner.empty()) {
      const ssize_t n = ::write(master, to_inner.data(), to_inner.size());
      if (n > 0) to_inner.erase(0, static_cast<std::size_t>(n));
    }
    if ((fds[2].revents & (POLLIN | POLLHUP)) != 0) {
      const ssize_t n = io::read_some(terminal_in, buffer.data(), buffer.size());
      if (n > 0) {
        to_inner.append(buffer.data(), static_cast<std::size_t>(n));
      } else {
        input_open = false;  // the person's side is gone; the shell sees the master's hangup
      }
    }
    // The slave side is closed by every process (EIO or hangup on the master, Linux): the shell
    // and everything that held its terminal are gone.
    if ((fds[1].revents & (POLLHUP | POLLERR)) != 0 && (fds[1].revents & POLLIN) == 0) {
      return false;
    }
    return !(child_status && (fds[1].revents & POLLIN) == 0);
  }

  void take_signals() {
    unsigned char signal = 0;
    while (::read(signal_read, &signal, 1) == 1) {
      if (signal == SIGWINCH) {
        // The kernel sends SIGWINCH to the inner foreground job when the size changes.
        winsize size{};
        if (::ioctl(terminal_in, TIOCGWINSZ, &size) == 0) ::ioctl(master, TIOCSWINSZ, &size);
      } else if (signal == SIGCHLD) {
        // The keeper's; the shell's own status comes over the report pipe.
      } else if (ended_by == 0) {
        ended_by = signal;
      }
    }
  }
};

// A pipe, both ends close-on-exec: {read, write}.
std::array<UniqueFd, 2> cloexec_pipe() {
  std::array<int, 2> fds{};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) fail("pipe2");
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// The tree's end once the relay is over; the shell's wait status. Ended early (a signal, the
// deadline): the shell's group gets SIGHUP, as from a terminal that went away; then the keeper,
// let go (`control` closed), SIGKILLs whatever is left of the tree.
int settle(const Relay& relay, pid_t child, pid_t keeper, UniqueFd& master, UniqueFd& control,
           int report) {
  std::optional<int> child_status = relay.child_status;
  const bool early = relay.ended_by != 0 || relay.timed_out;
  if (!child_status && early) ::kill(-child, SIGHUP);
  master.reset();
  if (!child_status && !early) {
    // Every holder of the inner terminal closed it: the shell has exited, or gets SIGHUP from
    // the closed master; its status comes before the keeper is let go.
    int wait_status = 0;
    if (io::read_some(report, static_cast<void*>(&wait_status), sizeof wait_status) ==
        static_cast<ssize_t>(sizeof wait_status)) {
      child_status = wait_status;
    }
  }
  control.reset();
  int keeper_status = 0;
  while (::waitpid(keeper, &keeper_status, 0) < 0 && errno == EINTR) {
  }
  if (!child_status) {
    int wait_status = 0;
    const ssize_t n = io::read_some(report, static_cast<void*>(&wait_status), sizeof wait_status);
    child_status =
        n == static_cast<ssize_t>(sizeof wait_status) ? wait_status : W_EXITCODE(0, SIGKILL);
  }
  return *child_status;
}

// What the CLI says of the shell: ended by a signal of ours (128+N), by the deadline, or as the
// shell's own status.
ShellEnd shell_end(int child_status, int ended_by, bool timed_out) {
  ShellEnd end;
  if (WIFEXITED(child_status)) end.exit_code = WEXITSTATUS(child_status);
  if (WIFSIGNALED(child_status)) end.signal = WTERMSIG(child_status);
  if (timed_out && ended_by == 0) {
    end.timed_out = true;
    end.status = kTimedOutExit;
  } else if (ended_by != 0) {
    if (!end.exit_code && !end.signal) end.signal = ended_by;
    end.status = 128 + ended_by;
  } else {
    end.status = status_of(child_status);
  }
  return end;
}

}  // namespace

ShellEnd run_shell(const ShellLaunch& launch, int terminal_in, int terminal_out) {
  if (launch.argv.empty() || !launch.argv.front().starts_with('/')) {
    throw std::invalid_argument("the shell's argv must start with an absolute program");
  }
  UniqueFd slave;
  UniqueFd master = open_inner_pty(terminal_in, slave);

  std::vector<UniqueFd> provided;
  for (const ProvidedFd& wanted : launch.provided) provided.push_back(provided_descriptor(wanted));

  SignalRoute signals;
  const UniqueFd& signal_read = signals.read_end();
  const UniqueFd& signal_write = signals.write_end();
  std::vector<char*> argv;
  for (const std::string& arg : launch.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  auto [control_read, control] = cloexec_pipe();
  auto [report, report_write] = cloexec_pipe();
  // Made before the fork and removed (rmdir) when this returns, after the keeper ended the tree.
  exec::detail::TreeBounds bounds;
  exec::detail::make_tree_bounds(launch.bounds, bounds);
  const pid_t keeper = ::fork();
  if (keeper < 0) fail("fork");
  if (keeper == 0) {
    sigset_t none;
    sigemptyset(&none);
    // The forked child of a process whose only other threads are none of ours: signal(2) and
    // sigprocmask(2) act on this process alone.
    for (const int signal : kHandled) (void)::signal(signal, SIG_DFL);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);  // NOLINT(concurrency-mt-unsafe)
    for (const int fd :
         {signal_write.get(), signal_read.get(), master.get(), control.get(), report.get()}) {
      ::close(fd);
    }
    keep(argv, launch, slave.get(), provided, bounds, control_read.get(), report_write.get());
  }
  control_read.reset();
  report_write.reset();
  pid_t child = 0;
  if (io::read_some(report.get(), static_cast<void*>(&child), sizeof child) !=
      static_cast<ssize_t>(sizeof child)) {
    control.reset();
    while (::waitpid(keeper, nullptr, 0) < 0 && errno == EINTR) {
    }
    throw std::runtime_error("the shell could not be started: fork failed");
  }
  slave.reset();
  provided.clear();
  ::fcntl(master.get(), F_SETFL, O_NONBLOCK);

  RawMode raw(terminal_in);
  Relay relay{terminal_in, terminal_out, master.get(), report.get(), signal_read.get()};
  relay.run(launch.timeout);
  const int child_status = settle(relay, child, keeper, master, control, report.get());
  raw.restore();
  signals.restore();
  return shell_end(child_status, relay.ended_by, relay.timed_out);
}

}  // namespace dsh::sandbox::shell
