// SPDX-License-Identifier: Apache-2.0
#include "shell/pty_shell.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
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
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "base/io.h"
#include "base/unique_fd.h"
#include "exec/terminal.h"

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

// The shell's wait status from how its run ended: 127 or 126 when it never started (as a shell
// reports a program it cannot run), `lost` when the supervisor died without a word.
int wait_status_of(const exec::TerminalEnd& end, int lost) {
  if (end.wait_status) return *end.wait_status;
  if (end.spawn_error) {
    const bool missing =
        end.spawn_error->stage == exec::SpawnStage::kProgram && end.spawn_error->error == ENOENT;
    return W_EXITCODE(missing ? 127 : 126, 0);
  }
  return lost;
}

// The relay between the person's terminal and the inner one: what is typed goes to the master,
// what the shell writes comes back. It ends once the shell's status is in and its output
// drained, when every holder of the inner terminal closed it, on a signal that ends the
// session, at the deadline, or when the launch's guard says the tree must end.
struct Relay {
  int terminal_in;
  int terminal_out;
  int master;
  exec::TerminalRun& shell;  // the shell's run, on the inner terminal
  int signal_read;
  const std::optional<ShellGuard>& guard;
  std::string to_inner;                    // typed, not yet taken by the master
  std::optional<std::string> guard_ended;  // the guard's line, when it ended the tree
  std::chrono::steady_clock::time_point guard_due = std::chrono::steady_clock::now();
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
      if (guard) {
        const auto until = std::chrono::duration_cast<std::chrono::milliseconds>(
            guard_due - std::chrono::steady_clock::now());
        const int guard_ms = static_cast<int>(std::max<std::int64_t>(until.count(), 0));
        wait_ms = wait_ms < 0 ? guard_ms : std::min(wait_ms, guard_ms);
      }
      if (!round(wait_ms)) return;
    }
  }

  // One poll and what it found; false once the relay ends.
  bool round(int wait_ms) {
    std::array<pollfd, 5> fds{
        {{signal_read, POLLIN, 0},
         {master, static_cast<short>(POLLIN | (to_inner.empty() ? 0 : POLLOUT)), 0},
         {input_open ? terminal_in : -1, POLLIN, 0},
         {child_status ? -1 : shell.watch_fd(), POLLIN, 0},
         {guard && !child_status ? guard->fd : -1, POLLIN, 0}}};
    if (::poll(fds.data(), fds.size(), wait_ms) < 0) {
      if (errno == EINTR) return true;
      fail("poll");
    }
    // Asked before the shell's output is passed on: once the guard says the tree must end, not
    // another byte of it is relayed.
    if (guard && !child_status &&
        ((fds[4].revents & POLLIN) != 0 || std::chrono::steady_clock::now() >= guard_due)) {
      guard_due = std::chrono::steady_clock::now() + guard->interval;
      const GuardNews news = guard->check();
      if (news.end) {
        guard_ended = news.line;
        return false;
      }
      if (!news.line.empty()) {
        (void)io::write_all(terminal_out, "\r\ndsh-sandbox: " + news.line + "\r\n");
      }
    }
    if ((fds[3].revents & (POLLIN | POLLHUP)) != 0) {
      // The supervisor gone without a status (killed by someone): the shell is gone with it.
      if (const auto end = shell.take_news()) {
        child_status = wait_status_of(*end, W_EXITCODE(126, 0));
      }
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
        // The supervisor's; the shell's own status comes over its status pipe.
      } else if (ended_by == 0) {
        ended_by = signal;
      }
    }
  }
};

// The tree's end once the relay is over; the shell's wait status. Ended early (a signal, the
// deadline): the shell's group gets SIGHUP, as from a terminal that went away; then the run is
// let go, and exec's supervisor SIGKILLs whatever is left of the tree.
int settle(const Relay& relay, exec::TerminalRun& run, UniqueFd& master) {
  if (relay.guard_ended) {
    // The guard's end: the whole tree SIGKILLed before the master closes, so that no process
    // of it gets the hangup and runs a trap of its own first.
    const exec::TerminalEnd end = run.end();
    master.reset();
    return end.wait_status.value_or(W_EXITCODE(0, SIGKILL));
  }
  const bool early = relay.ended_by != 0 || relay.timed_out;
  if (!relay.child_status && early) run.signal(SIGHUP);
  master.reset();
  // Every holder of the inner terminal closed it: the shell has exited, or gets SIGHUP from the
  // closed master; its status comes before the run is let go.
  if (!relay.child_status && !early) (void)run.wait();
  const exec::TerminalEnd end = run.end();
  return relay.child_status.value_or(wait_status_of(end, W_EXITCODE(0, SIGKILL)));
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

// The runner on the inner terminal, with the descriptors the confined argv expects, in the
// tree's bounds (exec's: cgroups it joins before it execs, else rlimits and the memory watch).
exec::TerminalRequest terminal_request(const ShellLaunch& launch, const UniqueFd& slave,
                                       const std::vector<UniqueFd>& provided) {
  exec::TerminalRequest request;
  request.argv = launch.argv;
  request.workdir = launch.workdir;
  request.terminal = slave.get();
  for (std::size_t i = 0; i < provided.size(); ++i) {
    request.fds.push_back({provided[i].get(), launch.provided[i].fd});
  }
  request.bounds = launch.bounds;
  return request;
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
  exec::TerminalRun run = exec::start_on_terminal(terminal_request(launch, slave, provided));
  if (run.pid() == 0) {
    // Nothing ran. Its setup failed: an error; a runner that cannot be executed is the shell's
    // status instead (126, or 127 for a missing one), as in any shell.
    const exec::TerminalEnd end = run.wait();
    if (end.spawn_error && end.spawn_error->stage == exec::SpawnStage::kSetup) {
      throw std::runtime_error("the shell could not be started: " + end.spawn_error->message());
    }
  }
  slave.reset();
  provided.clear();
  ::fcntl(master.get(), F_SETFL, O_NONBLOCK);

  RawMode raw(terminal_in);
  Relay relay{terminal_in, terminal_out, master.get(), run, signals.read_end().get(), launch.guard};
  relay.run(launch.timeout);
  const int child_status = settle(relay, run, master);
  raw.restore();
  signals.restore();
  ShellEnd end = shell_end(child_status, relay.ended_by, relay.timed_out);
  if (relay.guard_ended) {
    end.ended_by = relay.guard_ended;
    end.status = kEndedExit;
  }
  return end;
}

}  // namespace dsh::sandbox::shell
