// SPDX-License-Identifier: Apache-2.0
#include "harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace llrt {

std::vector<std::string> l(const std::vector<std::string>& args) {
  std::vector<std::string> full;
  full.reserve(args.size() + 1);
  // Only the test build knows --max-abi (the shipped launcher refuses it): a case that poses as
  // an older kernel runs that build, every other case the shipped binary.
  const bool capped = std::find(args.begin(), args.end(), "--max-abi") != args.end();
  full.emplace_back(capped ? testing_launcher() : launcher());
  for (const std::string& arg : args) full.push_back(arg);
  return full;
}

Held::Held(const std::vector<std::string>& argv, const SpawnOptions& options) {
  int in[2];
  int out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) return;
  SpawnOptions piped = options;
  piped.stdin_fd = in[0];
  piped.stdout_fd = out[1];
  started_ = std::make_unique<dsh::testing::Started>(argv, piped);
  close(in[0]);
  close(out[1]);
  stdin_ = in[1];
  stdout_ = out[0];
  std::string line;
  char c = 0;
  while (ready_poll(stdout_, 5000) > 0 && read(stdout_, &c, 1) == 1 && c != '\n') line += c;
  ready_ = line == "ready";
}

Held::~Held() {
  if (stdin_ >= 0) close(stdin_);
  if (stdout_ >= 0) close(stdout_);
}

std::string Held::status() const { return read_file("/proc/" + std::to_string(pid()) + "/status"); }

std::string Held::status_field(const std::string& key) const {
  return dsh::testing::status_field(pid(), key);
}

RunResult Held::finish() {
  if (!started_ || stdin_ < 0) return {};
  close(stdin_);
  stdin_ = -1;
  RunResult result = started_->wait();
  char buffer[4096];
  for (ssize_t n; (n = read(stdout_, buffer, sizeof(buffer))) > 0;) {
    result.out.append(buffer, static_cast<std::size_t>(n));
  }
  return result;
}

int kernel_abi() { return static_cast<int>(syscall(444, nullptr, 0, 1U)); }

std::string uid() { return std::to_string(getuid()); }

InetListener::InetListener(int family, int type) : type_(type) {
  fd_ = socket(family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_storage storage{};
  socklen_t size = 0;
  if (family == AF_INET) {
    auto* addr = reinterpret_cast<sockaddr_in*>(&storage);
    addr->sin_family = AF_INET;
    addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    size = sizeof(sockaddr_in);
  } else {
    auto* addr = reinterpret_cast<sockaddr_in6*>(&storage);
    addr->sin6_family = AF_INET6;
    addr->sin6_addr = in6addr_loopback;
    size = sizeof(sockaddr_in6);
  }
  EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&storage), size), 0) << std::strerror(errno);
  if (type == SOCK_STREAM) {
    EXPECT_EQ(listen(fd_, 8), 0);
  }
  EXPECT_EQ(getsockname(fd_, reinterpret_cast<sockaddr*>(&storage), &size), 0);
  port_ = ntohs(family == AF_INET ? reinterpret_cast<sockaddr_in*>(&storage)->sin_port
                                  : reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port);
}

InetListener::~InetListener() { close(fd_); }

bool InetListener::received() const {
  if (ready_poll(fd_, 200) <= 0) return false;
  if (type_ == SOCK_STREAM) {
    const int connection = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection >= 0) close(connection);
    return connection >= 0;
  }
  char byte;
  return recv(fd_, &byte, 1, 0) >= 0;
}

int ready_poll(int fd, int timeout_ms) {
  pollfd entry{fd, POLLIN, 0};
  return poll(&entry, 1, timeout_ms);
}

}  // namespace llrt
