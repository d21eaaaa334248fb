// SPDX-License-Identifier: Apache-2.0
// Test harness for the landlock-run integration suite: the real launcher run through the test
// support's process helper (chosen fds, optionally as uid 0 of a fresh user namespace), a held
// probe to inspect from outside while it runs, and loopback listeners.
#pragma once

#include <gtest/gtest.h>

#include "files.h"
#include "process.h"
#include "temp_dir.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace llrt {

using dsh::testing::execute;
using dsh::testing::exists;
using dsh::testing::read_file;
using dsh::testing::RunResult;
using dsh::testing::SpawnOptions;
using dsh::testing::TempDir;
using dsh::testing::userns_available;
using dsh::testing::write_file;

inline const char* launcher() { return LANDLOCK_RUN_PATH; }
// The test build (landlock-run-testing): the same sources plus the --max-abi cap. Suites that
// never cap the ABI do not build it; a cap there reaches the shipped launcher, which refuses it.
#if defined(LANDLOCK_RUN_TESTING_PATH)
inline const char* testing_launcher() { return LANDLOCK_RUN_TESTING_PATH; }
#else
inline const char* testing_launcher() { return LANDLOCK_RUN_PATH; }
#endif
inline const char* probe_path() { return LL_PROBE_PATH; }

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
  int pid() const { return started_ ? started_->pid() : -1; }
  std::string status() const;                              // /proc/<pid>/status, read by the test
  std::string status_field(const std::string& key) const;  // "NoNewPrivs" -> "1"
  RunResult finish();                                      // close stdin, wait

 private:
  std::unique_ptr<dsh::testing::Started> started_;
  int stdin_ = -1;
  int stdout_ = -1;
  bool ready_ = false;
};

int kernel_abi();   // the kernel's Landlock ABI, <= 0 when unavailable
std::string uid();  // the test's uid as text
inline std::string own_status_field(const std::string& key) {
  return dsh::testing::status_field(0, key);
}

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
