// SPDX-License-Identifier: Apache-2.0
// Harness of the `dsh-sandbox run` integration suite: spawns the real CLI (build/bin, beside the
// real landlock-run) on the real kernel, optionally with stdin and stderr on a fresh pseudo-
// terminal (the escalation question), and judges every effect from outside: files on the host,
// /proc of the processes the command left behind.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "text.h"
#include "work_dir.h"

namespace dsh::cli_run_it {

inline const char* dsh_sandbox() { return DSH_SANDBOX_PATH; }

// One finished CLI call: raw wait status plus everything it wrote.
struct CliResult {
  int status = -1;
  std::string out;
  std::string err;  // on a terminal run: the terminal transcript (stderr, echoed input)
  std::chrono::milliseconds elapsed{0};
  bool exited_with(int code) const;
  std::string describe() const;
};

// A started `dsh-sandbox ARGS...`, stdin /dev/null, stdout and stderr captured.
class Started {
 public:
  explicit Started(const std::vector<std::string>& args);
  ~Started();
  Started(const Started&) = delete;
  Started& operator=(const Started&) = delete;
  pid_t pid() const { return pid_; }
  CliResult wait();

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  int err_ = -1;
  std::chrono::steady_clock::time_point start_;
  bool waited_ = false;
};

// `dsh-sandbox ARGS...` to completion, stdin /dev/null.
CliResult cli(const std::vector<std::string>& args);

// `dsh-sandbox ARGS...` with stdin and stderr on a pseudo-terminal (its controlling terminal)
// and stdout captured apart. When the transcript shows the "[y/N] " question, `answer` is typed.
// Killed after 30 s so a hang fails instead of blocking the suite.
CliResult cli_on_terminal(const std::vector<std::string>& args, const std::string& answer);

using testing::is_root;
using testing::unique;
using testing::WorkDir;

bool exists(const std::string& path);
std::string read_file(const std::string& path);  // "" when absent
void write_file(const std::string& path, const std::string& content, int mode = 0644);
std::vector<std::string> list_dir(const std::string& path);  // sorted names, no . or ..
using testing::split_lines;
nlohmann::json parse_json(const std::string& text);  // fails the test (null) when not JSON

// Whether this host can run the suite: Landlock enforced, bwrap able to create its sandbox,
// bash and script present. Empty when it can.
std::string missing_host_feature();
// MissingHostFeature(), computed once per process (it runs the real CLI's probe).
const std::string& host_problem();

// The two backends a suite is parameterised over: the host's natural chain (bwrap+landlock
// here) and Landlock alone (bwrap pointed at a missing path), and the name `run` reports.
enum class Backend { kNatural, kLandlock };
std::string backend_name(Backend backend);

// Processes whose /proc/<pid>/cmdline starts with `prefix`, and the state letter of a pid from
// /proc/<pid>/stat ('\0' when gone).
std::vector<pid_t> processes_named(const std::string& prefix);
std::string process_cmdline(pid_t pid);  // argv joined by spaces, "" when gone
char process_state(pid_t pid);

}  // namespace dsh::cli_run_it
