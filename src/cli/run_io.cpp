// SPDX-License-Identifier: Apache-2.0
#include "cli/run_io.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <climits>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "dsh/sandbox/errors.h"

namespace dsh::sandbox::cli {

namespace {

constexpr std::array<int, 4> kCaught = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

std::atomic<int> caught{0};
std::atomic<exec::AbortSignal*> current_abort{nullptr};
std::array<struct sigaction, kCaught.size()> previous{};

void on_signal(int signal) {
  int none = 0;
  if (!caught.compare_exchange_strong(none, signal)) return;
  if (exec::AbortSignal* abort = current_abort.load()) {
    abort->abort(signal == SIGPIPE ? SIGTERM : signal);
  }
}

}  // namespace

void end_with_parent() {
  const pid_t parent = ::getppid();
  if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) {
    throw InvalidSandboxInputError(
        fmt::format("run: --die-with-parent: the kernel refused PR_SET_PDEATHSIG: {}",
                    std::generic_category().message(errno)));
  }
  if (::getppid() != parent) static_cast<void>(::raise(SIGTERM));
}

Interrupts::Interrupts() : abort_(std::make_shared<exec::AbortSignal>()) {
  caught.store(0);
  current_abort.store(abort_.get());
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  for (std::size_t i = 0; i < kCaught.size(); ++i) ::sigaction(kCaught[i], &action, &previous[i]);
}

Interrupts::~Interrupts() {
  for (std::size_t i = 0; i < kCaught.size(); ++i) ::sigaction(kCaught[i], &previous[i], nullptr);
  current_abort.store(nullptr);
}

int Interrupts::signal() const { return caught.load(); }

void Interrupts::raise(int signal) { on_signal(signal); }

LiveOutput::LiveOutput(int fd, std::chrono::steady_clock::time_point deadline, int abort_fd)
    : fd_(fd), deadline_(deadline), abort_fd_(abort_fd) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    broken_ = true;
    return;
  }
  if (S_ISREG(info.st_mode) || S_ISBLK(info.st_mode)) {
    kind_ = Kind::kNonBlocking;  // never waits for a reader
  } else if (S_ISSOCK(info.st_mode)) {
    kind_ = Kind::kSocket;
  } else {
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    const int own = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (own >= 0) {
      fd_ = own;
      own_ = true;
      kind_ = Kind::kNonBlocking;
    } else if (errno == ENXIO && S_ISFIFO(info.st_mode)) {
      reader_gone_ = true;  // a pipe without a reader: SIGPIPE at the first write, as for anyone
    }
    // Otherwise (no /proc, or not ours to reopen): the shared descriptor, polled before each
    // write of at most PIPE_BUF bytes, which a pipe that polled writable always takes whole.
  }
}

LiveOutput::~LiveOutput() {
  if (own_) ::close(fd_);
}

bool LiveOutput::wait_writable() {
  int timeout = 0;
  if (!gave_up_) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline_ - std::chrono::steady_clock::now());
    timeout = static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 60'000));
  }
  while (true) {
    std::array<pollfd, 2> fds = {pollfd{fd_, POLLOUT, 0}, pollfd{abort_fd_, POLLIN, 0}};
    const int n = ::poll(fds.data(), fds.size(), timeout);
    if (n < 0 && errno == EINTR) {
      continue;  // the handler made the abort descriptor readable: seen on the next round
    }
    if ((fds[0].revents & (POLLERR | POLLHUP)) != 0) {
      broken_ = true;
      Interrupts::raise(SIGPIPE);
      return false;
    }
    if ((fds[0].revents & POLLOUT) != 0) return true;
    if (n == 0 && timeout > 0 &&
        std::chrono::steady_clock::now() < deadline_) {  // the 60 s cap of one poll
      continue;
    }
    gave_up_ = gave_up_ || n == 0 || (fds[1].revents & POLLIN) != 0;
    return false;
  }
}

void LiveOutput::write(std::string_view chunk) {
  if (reader_gone_ && !broken_ && !chunk.empty()) {
    broken_ = true;
    Interrupts::raise(SIGPIPE);
  }
  while (!chunk.empty() && !broken_) {
    if (kind_ == Kind::kPolled && !wait_writable()) return;
    const std::size_t size =
        kind_ == Kind::kPolled ? std::min<std::size_t>(chunk.size(), PIPE_BUF) : chunk.size();
    const ssize_t n = kind_ == Kind::kSocket
                          ? ::send(fd_, chunk.data(), size, MSG_DONTWAIT | MSG_NOSIGNAL)
                          : ::write(fd_, chunk.data(), size);
    if (n > 0) {
      chunk.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EPIPE) {
      broken_ = true;
      Interrupts::raise(SIGPIPE);
      return;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && kind_ != Kind::kPolled) {
      if (!wait_writable()) return;  // dropped from the live stream: the tail keeps it
      continue;
    }
    return;  // a full disk, an I/O error: the live copy is lost, the run goes on
  }
}

}  // namespace dsh::sandbox::cli
