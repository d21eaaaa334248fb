// SPDX-License-Identifier: Apache-2.0
// The one process helper of every suite: start a program with chosen descriptors (optionally as
// uid 0 of a fresh user namespace, or on a fresh pseudo-terminal), capture what it writes, wait,
// and judge the raw wait status from outside.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace dsh::testing {

// One finished process: raw wait status, everything it wrote, and how long it took.
struct RunResult {
  int status = -1;
  std::string out;
  std::string err;  // on a terminal run: the terminal's transcript (stderr, echoed input)
  std::chrono::milliseconds elapsed{0};
  bool exited_with(int code) const;
  bool killed_by(int signal) const;
  std::string describe() const;  // for assertion messages
};

struct SpawnOptions {
  std::vector<std::pair<int, int>> fds;  // {parent fd, child fd}, inherited (not CLOEXEC)
  int stdin_fd = -1;                     // default /dev/null
  int stdout_fd = -1;                    // default: captured into RunResult::out
  std::vector<std::string> env;          // empty: inherit the test's environment
  bool in_new_userns = false;            // run as uid 0 of a new user namespace
  // stdin and stderr on a fresh pseudo-terminal, the child's controlling terminal (in a new
  // session); RunResult::err is then the terminal's transcript.
  bool terminal = false;
};

// The exit status the child reports when it could not enter its user namespace.
inline constexpr int kUsernsSetupFailed = 121;

// A started program. Destroying it unwaited kills it (SIGKILL) and reaps it.
class Started {
 public:
  explicit Started(const std::vector<std::string>& argv, const SpawnOptions& options = {});
  ~Started();
  Started(const Started&) = delete;
  Started& operator=(const Started&) = delete;

  pid_t pid() const { return pid_; }
  int terminal() const { return master_; }  // the terminal's master side, -1 without one
  std::string err_so_far() const;           // what it wrote to its stderr until now

  // Reads the terminal until its transcript holds `text` (true) or the program has closed it,
  // or `limit` passed (false). Only with SpawnOptions::terminal.
  bool wait_for_terminal_text(const std::string& text, std::chrono::milliseconds limit);
  // Types `text` on the terminal.
  void type(const std::string& text) const;

  // Waits for the program to end (draining the terminal meanwhile, so a full buffer never
  // blocks it) and returns what it did. With a `limit`, a program still running after it fails
  // the test and is killed (SIGKILL), so a hang cannot block the suite.
  RunResult wait(std::chrono::milliseconds limit = std::chrono::milliseconds::zero());

 private:
  void read_terminal(int timeout_ms);

  pid_t pid_ = -1;
  int out_ = -1;
  int err_ = -1;
  int master_ = -1;
  bool userns_ = false;
  bool waited_ = false;
  std::string transcript_;
  std::chrono::steady_clock::time_point start_;
};

// Runs argv to completion.
RunResult execute(const std::vector<std::string>& argv, const SpawnOptions& options = {});

// Whether this process may create a user namespace and map itself to uid 0 in it.
bool userns_available();

}  // namespace dsh::testing
