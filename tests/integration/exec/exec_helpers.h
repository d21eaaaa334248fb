// SPDX-License-Identifier: Apache-2.0
// Shared by the exec integration tests: a /bin/sh request and process-state checks from outside.
#pragma once

#include <signal.h>

#include <chrono>
#include <fstream>
#include <string>

#include "exec/exec.h"
#include "wait.h"

namespace dsh::sandbox::exec::testing {

inline Request sh(const std::string& script) {
  Request request;
  request.argv = {"/bin/sh", "-c", script};
  request.timeout_ms = 30'000;
  return request;
}

inline pid_t read_pid(const std::string& path) {
  std::ifstream file(path);
  pid_t pid = 0;
  file >> pid;
  return pid;
}

// Gone, or a zombie: a dead process. The tests never reap: reaping is the supervisor's job, and
// nothing the command started is our child, so a zombie here would belong to someone else.
inline bool process_alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto state = line.find(") ");
  return state != std::string::npos && line[state + 2] != 'Z' && line[state + 2] != 'X';
}

inline bool process_exists(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

// Waits (generously) for a pid file the command writes, so tests never race its start.
inline bool wait_for_file(const std::string& path,
                          std::chrono::seconds limit = std::chrono::seconds(20)) {
  return dsh::testing::wait_until([&] { return read_pid(path) > 0; }, limit);
}

}  // namespace dsh::sandbox::exec::testing
