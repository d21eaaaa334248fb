// SPDX-License-Identifier: Apache-2.0
#include "wait.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace dsh::testing {

int wait_for_port_file(const std::string& path, std::chrono::milliseconds limit) {
  if (!wait_until([&] { return std::filesystem::exists(path); }, limit)) return 0;
  int port = 0;
  std::ifstream(path) >> port;
  return port;
}

void make_fifo(const std::string& path) {
  ASSERT_EQ(::mkfifo(path.c_str(), 0666), 0) << path << ": " << std::strerror(errno);
  ::chmod(path.c_str(), 0666);
}

int open_fifo_when_read(const std::string& path, std::chrono::milliseconds limit) {
  int fd = -1;
  wait_until(
      [&] {
        fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        return fd >= 0 || errno != ENXIO;
      },
      limit);
  EXPECT_GE(fd, 0) << "nobody opened " << path << " for reading: " << std::strerror(errno);
  return fd;
}

}  // namespace dsh::testing
