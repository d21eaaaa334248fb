// SPDX-License-Identifier: Apache-2.0
#include "harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

extern char** environ;

namespace llrt {
namespace {

constexpr int kUsernsSetupFailed = 121;

std::string drain(int fd) {
  std::string text;
  char buffer[4096];
  lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;) {
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

bool write_proc_file(const char* path, const std::string& text) {
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

// In the child: become uid/gid 0 of a new user namespace (full capabilities inside it).
bool enter_userns() {
  const std::string uid = std::to_string(getuid());
  const std::string gid = std::to_string(getgid());
  if (unshare(CLONE_NEWUSER) != 0) return false;
  return write_proc_file("/proc/self/setgroups", "deny") &&
         write_proc_file("/proc/self/uid_map", "0 " + uid + " 1") &&
         write_proc_file("/proc/self/gid_map", "0 " + gid + " 1");
}

struct ChildSetup {
  std::vector<char*> argv;
  std::vector<char*> envp;
  std::vector<std::pair<int, int>> fds;
  int stdin_fd;
  int stdout_fd;
  int stderr_fd;
  bool userns;
};

// Moves every source fd above the highest target first, so a dup2 never clobbers a source.
[[noreturn]] void exec_child(ChildSetup& setup) {
  int floor = 64;
  for (auto& [source, target] : setup.fds) source = fcntl(source, F_DUPFD_CLOEXEC, floor++);
  const int in = fcntl(setup.stdin_fd, F_DUPFD_CLOEXEC, floor++);
  const int out = fcntl(setup.stdout_fd, F_DUPFD_CLOEXEC, floor++);
  const int err = fcntl(setup.stderr_fd, F_DUPFD_CLOEXEC, floor++);
  dup2(in, 0);
  dup2(out, 1);
  dup2(err, 2);
  for (const auto& [source, target] : setup.fds) dup2(source, target);
  if (setup.userns && !enter_userns()) _exit(kUsernsSetupFailed);
  execve(setup.argv[0], setup.argv.data(), setup.envp.data());
  _exit(127);
}

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (const std::string& s : strings) result.push_back(const_cast<char*>(s.c_str()));
  result.push_back(nullptr);
  return result;
}

int spawn(const std::vector<std::string>& argv, const SpawnOptions& options, int stdin_fd,
          int stdout_fd, int stderr_fd) {
  ChildSetup setup{c_strings(argv), {},        options.fds,          stdin_fd,
                   stdout_fd,       stderr_fd, options.in_new_userns};
  if (options.env.empty()) {
    for (char** e = environ; *e != nullptr; ++e) setup.envp.push_back(*e);
    setup.envp.push_back(nullptr);
  } else {
    setup.envp = c_strings(options.env);
  }
  const pid_t pid = fork();
  if (pid == 0) exec_child(setup);
  return pid;
}

int wait_for(int pid) {
  int status = -1;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

std::vector<std::string> l(const std::vector<std::string>& args) {
  std::vector<std::string> full;
  full.reserve(args.size() + 1);
  full.emplace_back(launcher());
  for (const std::string& arg : args) full.push_back(arg);
  return full;
}

bool RunResult::exited_with(int code) const {
  return WIFEXITED(status) && WEXITSTATUS(status) == code;
}
bool RunResult::killed_by(int signal) const {
  return WIFSIGNALED(status) && WTERMSIG(status) == signal;
}
std::string RunResult::describe() const {
  std::ostringstream text;
  if (WIFEXITED(status))
    text << "exit " << WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    text << "signal " << WTERMSIG(status);
  else
    text << "status " << status;
  text << "; stdout=[" << out << "] stderr=[" << err << "]";
  return text.str();
}

RunResult execute(const std::vector<std::string>& argv, const SpawnOptions& options) {
  const int out = memfd_create("stdout", MFD_CLOEXEC);
  const int err = memfd_create("stderr", MFD_CLOEXEC);
  const int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int pid = spawn(argv, options, options.stdin_fd >= 0 ? options.stdin_fd : null, out, err);
  RunResult result;
  result.status = wait_for(pid);
  result.out = drain(out);
  result.err = drain(err);
  if (options.in_new_userns && result.exited_with(kUsernsSetupFailed)) {
    ADD_FAILURE() << "user namespace setup failed in the child";
  }
  close(out);
  close(err);
  close(null);
  return result;
}

Held::Held(const std::vector<std::string>& argv, const SpawnOptions& options) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) return;
  stderr_ = memfd_create("stderr", MFD_CLOEXEC);
  pid_ = spawn(argv, options, in[0], out[1], stderr_);
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
  if (!finished_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    finish();
  }
}

std::string Held::status() const { return read_file("/proc/" + std::to_string(pid_) + "/status"); }

std::string Held::status_field(const std::string& key) const {
  std::istringstream lines(status());
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(key + ":", 0) == 0) {
      const std::size_t start = line.find_first_not_of(" \t", key.size() + 1);
      return start == std::string::npos ? "" : line.substr(start);
    }
  }
  return "<missing>";
}

RunResult Held::finish() {
  RunResult result;
  if (finished_ || pid_ <= 0) return result;
  finished_ = true;
  close(stdin_);
  result.status = wait_for(pid_);
  result.out = drain(stdout_);
  result.err = drain(stderr_);
  close(stdout_);
  close(stderr_);
  return result;
}

TempDir::TempDir() {
  char pattern[] = "/tmp/llrun-XXXXXX";
  if (mkdtemp(pattern) != nullptr) path_ = pattern;
  EXPECT_FALSE(path_.empty()) << "mkdtemp under /tmp failed: " << std::strerror(errno);
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  const auto remove = [](const char* path, const struct stat*, int, FTW*) {
    umount2(path, MNT_DETACH);  // in case a denial test failed and a mount landed
    chmod(path, 0700);
    return ::remove(path);
  };
  nftw(path_.c_str(), remove, 16, FTW_DEPTH | FTW_PHYS);
}

bool exists(const std::string& path) {
  struct stat info {};
  return lstat(path.c_str(), &info) == 0;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const std::string& path, const std::string& content, int mode) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  ASSERT_GE(fd, 0) << path << ": " << std::strerror(errno);
  ASSERT_EQ(write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
  fchmod(fd, static_cast<mode_t>(mode));
  close(fd);
}

int kernel_abi() { return static_cast<int>(syscall(444, nullptr, 0, 1U)); }

bool userns_available() {
  SpawnOptions options;
  options.in_new_userns = true;
  const pid_t pid = fork();
  if (pid == 0) _exit(enter_userns() ? 0 : 1);
  const int status = wait_for(pid);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string uid() { return std::to_string(getuid()); }

std::string own_status_field(const std::string& key) {
  std::istringstream lines(read_file("/proc/self/status"));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(key + ":", 0) == 0)
      return line.substr(line.find_first_not_of(" \t", key.size() + 1));
  }
  return "<missing>";
}

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
