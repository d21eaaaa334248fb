// SPDX-License-Identifier: Apache-2.0
#include "cli_run_harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

extern char** environ;

namespace dsh::cli_run_it {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<char*> arg_pointers(std::vector<std::string>& argv) {
  std::vector<char*> pointers;
  for (std::string& arg : argv) pointers.push_back(arg.data());
  pointers.push_back(nullptr);
  return pointers;
}

std::vector<std::string> cli_argv(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {dsh_sandbox()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::string drain(int fd) {
  std::string text;
  ::lseek(fd, 0, SEEK_SET);
  char buffer[4096];
  ssize_t n = 0;
  while ((n = ::read(fd, buffer, sizeof(buffer))) > 0)
    text.append(buffer, static_cast<std::size_t>(n));
  return text;
}

int wait_for(pid_t pid) {
  int status = -1;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

std::chrono::milliseconds since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
}

}  // namespace

bool CliResult::exited_with(int code) const {
  return WIFEXITED(status) && WEXITSTATUS(status) == code;
}

std::string CliResult::describe() const {
  std::ostringstream text;
  if (WIFEXITED(status)) {
    text << "exit " << WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    text << "signal " << WTERMSIG(status);
  } else {
    text << "status " << status;
  }
  text << " after " << elapsed.count() << " ms\n[stdout]\n" << out << "\n[stderr]\n" << err;
  return text.str();
}

Started::Started(const std::vector<std::string>& args) {
  out_ = ::memfd_create("stdout", MFD_CLOEXEC);
  err_ = ::memfd_create("stderr", MFD_CLOEXEC);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_, 1);
  posix_spawn_file_actions_adddup2(&actions, err_, 2);
  std::vector<std::string> argv = cli_argv(args);
  std::vector<char*> pointers = arg_pointers(argv);
  start_ = Clock::now();
  const int error = ::posix_spawn(&pid_, pointers[0], &actions, nullptr, pointers.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    pid_ = -1;
    ADD_FAILURE() << "posix_spawn " << argv[0] << ": " << std::strerror(error);
  }
}

Started::~Started() {
  if (!waited_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    wait_for(pid_);
  }
  ::close(out_);
  ::close(err_);
}

CliResult Started::wait() {
  CliResult result;
  if (pid_ <= 0 || waited_) return result;
  waited_ = true;
  result.status = wait_for(pid_);
  result.elapsed = since(start_);
  result.out = drain(out_);
  result.err = drain(err_);
  return result;
}

CliResult cli(const std::vector<std::string>& args) { return Started(args).wait(); }

CliResult cli_on_terminal(const std::vector<std::string>& args, const std::string& answer) {
  CliResult result;
  int master = -1;
  int slave = -1;
  if (::openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) {
    ADD_FAILURE() << "openpty: " << std::strerror(errno);
    return result;
  }
  ::fcntl(master, F_SETFD, FD_CLOEXEC);
  const int out = ::memfd_create("stdout", MFD_CLOEXEC);
  std::vector<std::string> argv = cli_argv(args);
  std::vector<char*> pointers = arg_pointers(argv);
  const Clock::time_point start = Clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {  // async-signal-safe calls only: the suite may have threads
    ::setsid();
    ::ioctl(slave, TIOCSCTTY, 0);
    ::dup2(slave, 0);
    ::dup2(out, 1);
    ::dup2(slave, 2);
    if (slave > 2) ::close(slave);
    ::execve(pointers[0], pointers.data(), environ);
    ::_exit(127);
  }
  ::close(slave);
  bool answered = false;
  const Clock::time_point deadline = start + std::chrono::seconds(30);
  for (;;) {
    if (Clock::now() > deadline) {
      ADD_FAILURE() << "the CLI on a terminal did not finish in 30 s; transcript: " << result.err;
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd ready{master, POLLIN, 0};
    if (::poll(&ready, 1, 200) <= 0) continue;
    char buffer[1024];
    const ssize_t n = ::read(master, buffer, sizeof(buffer));
    if (n <= 0) break;  // EIO: every holder of the terminal is gone
    result.err.append(buffer, static_cast<std::size_t>(n));
    if (!answered && result.err.find("[y/N] ") != std::string::npos) {
      answered = true;
      const std::string typed = answer + "\n";
      EXPECT_EQ(::write(master, typed.data(), typed.size()), static_cast<ssize_t>(typed.size()));
    }
  }
  result.status = wait_for(pid);
  result.elapsed = since(start);
  result.out = drain(out);
  ::close(out);
  ::close(master);
  return result;
}

bool exists(const std::string& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0;
}

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

void write_file(const std::string& path, const std::string& content, int mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  ASSERT_GE(fd, 0) << path << ": " << std::strerror(errno);
  EXPECT_EQ(::write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
  ::fchmod(fd, static_cast<mode_t>(mode));
  ::close(fd);
}

std::vector<std::string> list_dir(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return names;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

nlohmann::json parse_json(const std::string& text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& error) {
    ADD_FAILURE() << "not JSON (" << error.what() << "): [" << text << "]";
    return nullptr;
  }
}

std::string missing_host_feature() {
  if (::access("/usr/bin/bwrap", X_OK) != 0) return "bubblewrap is not installed";
  if (::access("/bin/bash", X_OK) != 0) return "/bin/bash is missing";
  if (::access(dsh_sandbox(), X_OK) != 0) return std::string(dsh_sandbox()) + " is not executable";
  const CliResult probe = cli({"probe", "--json"});
  const nlohmann::json report = nlohmann::json::parse(probe.out, nullptr, false);
  if (report.is_discarded()) return "dsh-sandbox probe printed no JSON: " + probe.describe();
  // Both backends of the chain must work (the probe's Landlock entry is the kernel's own
  // answer: landlock_create_ruleset's ABI): the suite runs every claim on each of them.
  if (report.value("selected", "") != "bwrap+landlock") return "dsh-sandbox probe: " + probe.out;
  for (const nlohmann::json& backend : report.value("backends", nlohmann::json::array())) {
    if (!backend.value("usable", false)) return "dsh-sandbox probe: " + probe.out;
  }
  return {};
}

std::vector<pid_t> processes_named(const std::string& prefix) {
  std::vector<pid_t> found;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return found;
  while (const dirent* entry = ::readdir(dir)) {
    if (std::isdigit(static_cast<unsigned char>(entry->d_name[0])) == 0) continue;
    const pid_t pid = std::atoi(entry->d_name);
    if (process_cmdline(pid).rfind(prefix, 0) == 0) found.push_back(pid);
  }
  ::closedir(dir);
  return found;
}

std::string process_cmdline(pid_t pid) {
  std::string text = read_file("/proc/" + std::to_string(pid) + "/cmdline");
  std::replace(text.begin(), text.end(), '\0', ' ');
  return text;
}

char process_state(pid_t pid) {
  // /proc/<pid>/stat: "pid (comm) S ..."; comm may hold spaces and parentheses.
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return '\0';
  return stat[close + 2];
}

const std::string& host_problem() {
  static const std::string problem = missing_host_feature();
  return problem;
}

std::string backend_name(Backend backend) {
  return backend == Backend::kNatural ? "bwrap+landlock" : "landlock";
}

}  // namespace dsh::cli_run_it
