// SPDX-License-Identifier: Apache-2.0
#include "pseudo_terminal.h"

#include <fcntl.h>
#include <pty.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <gtest/gtest.h>

namespace dsh::testing {

Pty::Pty(winsize size) {
  if (::openpty(&master_, &slave_, nullptr, nullptr, &size) != 0) {
    ADD_FAILURE() << "openpty: " << std::strerror(errno);
    master_ = slave_ = -1;
    return;
  }
  // Only the descriptors dup2 places survive an exec: no program keeps the test's copies.
  ::fcntl(master_, F_SETFD, FD_CLOEXEC);
  ::fcntl(slave_, F_SETFD, FD_CLOEXEC);
}

Pty::~Pty() {
  for (const int fd : {master_, slave_}) {
    if (fd >= 0) ::close(fd);
  }
}

pid_t Pty::spawn(const std::vector<std::string>& argv, bool output) const {
  std::vector<char*> raw;
  for (const std::string& arg : argv) raw.push_back(const_cast<char*>(arg.c_str()));
  raw.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::setsid();
  ::ioctl(slave_, TIOCSCTTY, 0);
  ::dup2(slave_, STDIN_FILENO);
  if (output) {
    ::dup2(slave_, STDOUT_FILENO);
    ::dup2(slave_, STDERR_FILENO);
  } else {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
  }
  ::execv(raw.front(), raw.data());
  ::_exit(127);
}

}  // namespace dsh::testing
