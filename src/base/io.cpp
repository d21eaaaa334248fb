// SPDX-License-Identifier: Apache-2.0
#include "base/io.h"

#include <unistd.h>

#include <array>
#include <cerrno>

namespace dsh::sandbox::io {

std::size_t write_all(int fd, const void* data, std::size_t size) noexcept {
  const auto* bytes = static_cast<const char*>(data);
  std::size_t written = 0;
  while (written < size) {
    const ssize_t n = ::write(fd, bytes + written, size - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  return written;
}

ssize_t read_some(int fd, void* data, std::size_t size) noexcept {
  ssize_t n = 0;
  while ((n = ::read(fd, data, size)) < 0 && errno == EINTR) {
  }
  return n;
}

ReadEnd read_all(int fd, std::string& out, std::size_t limit) {
  std::array<char, 65536> buffer;  // NOLINT(cppcoreguidelines-pro-type-member-init): read fills it
  const std::size_t start = out.size();
  for (;;) {
    const ssize_t n = read_some(fd, buffer.data(), buffer.size());
    if (n < 0) return {errno, false};
    if (n == 0) return {};
    if (out.size() - start + static_cast<std::size_t>(n) > limit) return {0, true};
    out.append(buffer.data(), static_cast<std::size_t>(n));
  }
}

}  // namespace dsh::sandbox::io
