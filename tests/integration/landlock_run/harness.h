// SPDX-License-Identifier: Apache-2.0
// Test harness for the landlock-run integration suite: spawn the real launcher (or any program)
// with chosen fds, optionally as uid 0 of a fresh user namespace, and inspect the world from
// outside afterwards. Header-only; every helper is small and blocking.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace llrt {

inline const char* launcher() { return LANDLOCK_RUN_PATH; }
inline const char* probe_path() { return LL_PROBE_PATH; }

// One finished process: raw wait status plus everything it wrote.
struct RunResult {
  int status = -1;
  std::string out;
  std::string err;
  bool exited_with(int code) const;
  bool killed_by(int signal) const;
  std::string describe() const;  // for assertion messages
};

struct SpawnOptions {
  std::vector<std::pair<int, int>> fds;  // {parent fd, child fd}, inherited (not CLOEXEC)
  int stdin_fd = -1;                     // default /dev/null
  std::vector<std::string> env;          // empty: inherit the test's environment
  bool in_new_userns = false;            // run as uid 0 of a new user namespace
};

// Runs argv to completion.
RunResult execute(const std::vector<std::string>& argv, const SpawnOptions& options = {});

// `landlock-run ARGS...`
std::vector<std::string> l(const std::vector<std::string>& args);

// A started "ll_probe hold" (possibly under the launcher): waits for its "ready" line, so the
// confined process exists, exec'd, while the test looks at it from outside.
class Held {
 public:
  Held(const std::vector<std::string>& argv, const SpawnOptions& options = {});
  ~Held();
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
  bool ready() const { return ready_; }
  int pid() const { return pid_; }
  std::string status() const;                              // /proc/<pid>/status, read by the test
  std::string status_field(const std::string& key) const;  // "NoNewPrivs" -> "1"
  RunResult finish();                                      // close stdin, wait

 private:
  int pid_ = -1;
  int stdin_ = -1;
  int stdout_ = -1;
  int stderr_ = -1;
  bool ready_ = false;
  bool finished_ = false;
};

// A private directory under /tmp (mkdtemp; nobody has no HOME), removed recursively at the end.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

bool exists(const std::string& path);
std::string read_file(const std::string& path);  // "" when absent
void write_file(const std::string& path, const std::string& content, int mode = 0644);
int kernel_abi();  // the kernel's Landlock ABI, <= 0 when unavailable
bool userns_available();
std::string uid();  // the test's uid as text
std::string own_status_field(const std::string& key);

// An IPv4/IPv6 TCP or UDP socket bound to loopback on an ephemeral port.
class InetListener {
 public:
  InetListener(int family, int type);
  ~InetListener();
  int port() const { return port_; }
  std::string port_text() const { return std::to_string(port_); }
  // True when a connection (TCP) or datagram (UDP) arrived; waits up to 200 ms.
  bool received() const;

 private:
  int fd_ = -1;
  int type_ = 0;
  int port_ = 0;
};

int ready_poll(int fd, int timeout_ms);  // poll(POLLIN) result

}  // namespace llrt
