// SPDX-License-Identifier: Apache-2.0
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

#include "exec/exec.h"

namespace dsh::sandbox::exec {

// An eventfd stays readable once written and nothing ever reads it, so every run polling it
// sees the abort, however many share it and whenever they start polling.
AbortSignal::AbortSignal() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
}

AbortSignal::~AbortSignal() { ::close(fd_); }

void AbortSignal::abort(int forward) noexcept {
  int none = 0;
  forward_.compare_exchange_strong(none, forward);  // the first call's signal wins
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t ignored = ::write(fd_, &one, sizeof one);
}

bool AbortSignal::aborted() const noexcept {
  pollfd probe{fd_, POLLIN, 0};
  return ::poll(&probe, 1, 0) == 1 && (probe.revents & POLLIN) != 0;
}

}  // namespace dsh::sandbox::exec
