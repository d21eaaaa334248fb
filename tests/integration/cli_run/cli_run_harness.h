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

#include "files.h"
#include "json.h"
#include "process.h"
#include "temp_dir.h"
#include "text.h"

namespace dsh::cli_run_it {

inline const char* dsh_sandbox() { return DSH_SANDBOX_PATH; }

// One finished CLI call: raw wait status plus everything it wrote; on a terminal run `err` is
// the terminal transcript (stderr, echoed input).
using CliResult = testing::RunResult;

// The CLI's argv: dsh-sandbox ARGS...
std::vector<std::string> cli_argv(const std::vector<std::string>& args);

// A started `dsh-sandbox ARGS...`, stdin /dev/null, stdout and stderr captured.
class Started : public testing::Started {
 public:
  explicit Started(const std::vector<std::string>& args) : testing::Started(cli_argv(args)) {}
};

// `dsh-sandbox ARGS...` to completion, stdin /dev/null.
CliResult cli(const std::vector<std::string>& args);

// `dsh-sandbox ARGS...` with stdin and stderr on a pseudo-terminal (its controlling terminal)
// and stdout captured apart. When the transcript shows the "[y/N] " question, `answer` is typed.
// Killed after 30 s so a hang fails instead of blocking the suite.
CliResult cli_on_terminal(const std::vector<std::string>& args, const std::string& answer);

using testing::exists;
using testing::is_root;
using testing::list_dir;
using testing::parse_json;
using testing::read_file;
using testing::split_lines;
using testing::TempDir;
using testing::unique;
using testing::write_file;

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

// What a path rule has to protect, made so that only a rule can: `secret`, a directory outside
// the workspace whose file "key" holds kSecret and which the test's user may read, and
// `guarded`, a directory inside the workspace that anyone may write.
inline constexpr const char* kSecret = "TOPSECRET";
struct RuleTargets {
  std::string secret;
  std::string guarded;
};
RuleTargets make_rule_targets(const TempDir& dir, const std::string& workspace);

// A real, unconfined git in `repo` (`git -C REPO ARGS`, stderr with stdout), with a fixed
// identity and neither the system's nor a home's config.
testing::RunResult host_git(const std::string& repo, const std::string& args);

// A shell script, run in a repository's worktree, that plants what the person's next git runs:
// a .git/commondir naming a copy of the repository whose config has core.fsmonitor, and a
// post-commit hook; each touches `marker`. Every step may be refused; the script ends true.
std::string git_plant_script(const std::string& marker);

}  // namespace dsh::cli_run_it
