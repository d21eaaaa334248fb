// SPDX-License-Identifier: Apache-2.0
// An owned file descriptor and a close-on-exec pipe, for the components that spawn processes
// (local/ probes, exec/). Internal: no public header exposes a descriptor.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <utility>

namespace dsh::sandbox {

class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

// Both ends close-on-exec, so only what a spawn maps explicitly reaches the child.
inline bool open_pipe(Pipe& pipe) {
  std::array<int, 2> fds{};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) return false;
  pipe.read.reset(fds[0]);
  pipe.write.reset(fds[1]);
  return true;
}

}  // namespace dsh::sandbox
