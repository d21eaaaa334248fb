// SPDX-License-Identifier: Apache-2.0
// The library's door plans a call as the CLI's does (plan/call_plan.h): a workspace reached
// through a symlink an earlier CLI run planted is refused, a config or session file a confined
// run could have written decides nothing, the session's mode decides the call and its log gets
// the run and the refusal, and a program a writable root would contain is refused before
// anything runs. Every verdict is read from outside: the target directory stays empty, the
// marker never appears, the session's own lines say what was logged.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/executor.h"
#include "dsh/sandbox/local_provider.h"
#include "dsh/sandbox/policy_service.h"
#include "files.h"
#include "must_run.h"
#include "process.h"
#include "temp_dir.h"

namespace dsh::sandbox {
namespace {

using dsh::testing::TempDir;

class ExecutorPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access("/usr/bin/bwrap", X_OK) != 0) DSH_SKIP_OR_FAIL("bwrap is not installed");
    std::filesystem::permissions(dir_.path(), std::filesystem::perms(0755));
    // Root's record lies in /run (private per test case); another user's needs a private
    // runtime directory.
    if (::geteuid() != 0) runtime_.emplace("XDG_RUNTIME_DIR", dir_.mkdir("xdg", 0700).c_str());
  }

  static LocalSandboxHooks hooks() {
    LocalSandboxHooks hooks;
    hooks.launcher_path = LANDLOCK_RUN_PATH;
    return hooks;
  }

  RunRequest request(std::vector<std::string> argv) const {
    RunRequest request;
    request.argv = std::move(argv);
    request.workspace_root = workspace_;
    return request;
  }

  // A CLI workspace-write run of `script` in the workspace; asserts it succeeded.
  void cli_plants(const std::string& script) const {
    const dsh::testing::RunResult planted =
        dsh::testing::execute({DSH_SANDBOX_PATH, "run", "--mode", "workspace-write", "--workspace",
                               workspace_, "--", "/bin/sh", "-c", script});
    ASSERT_TRUE(planted.exited_with(0)) << planted.describe();
  }

  TempDir dir_;
  std::optional<dsh::testing::ScopedEnv> runtime_;
  std::string workspace_ = dir_.mkdir("workspace", 0755);
  LocalSandboxProvider provider_{{}, hooks()};
  SandboxExecutor executor_{provider_};
};

std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

// The message of the `Error` a run throws; "(nothing thrown)" when it ran.
template <typename Error>
std::string thrown_by(SandboxExecutor& executor, const RunRequest& request) {
  try {
    static_cast<void>(executor.run(request));
  } catch (const Error& error) {
    return error.what();
  }
  return "(nothing thrown)";
}

// The CLI plants a symlink in its workspace and a config there; a library call through the
// symlink, or deciding by that config, is refused, and nothing reaches the symlink's target.
TEST_F(ExecutorPlanTest, WhatACliRunPlantedDecidesNoLibraryCall) {
  const std::string target = dir_.mkdir("target", 0777);
  cli_plants("ln -s " + target + " link && echo '{\"mode\": \"workspace-write\"}' > config.json");
  RunRequest through = request({"sh", "-c", "echo planted > f"});
  through.mode = SandboxMode::kWorkspaceWrite;
  through.workspace_root = workspace_ + "/link";
  EXPECT_NE(thrown_by<InvalidSandboxInputError>(executor_, through)
                .find("could have planted that symlink"),
            std::string::npos);
  RunRequest configured = request({"sh", "-c", "echo planted > " + target + "/g"});
  configured.config_path = workspace_ + "/config.json";
  EXPECT_NE(thrown_by<InvalidSandboxInputError>(executor_, configured).find("cannot be trusted"),
            std::string::npos);
  EXPECT_TRUE(std::filesystem::is_empty(target));
  // Control: the same config where no run could write it decides the mode.
  const std::string trusted = dir_ / "config.json";
  dsh::testing::write_file(trusted, "{\"mode\": \"workspace-write\"}\n", 0644);
  RunRequest decided = request({"sh", "-c", "echo ok > f"});
  decided.config_path = trusted;
  const RunResult result = executor_.run(decided);
  EXPECT_EQ(result.exit_code, 0) << result.stderr_tail;
  EXPECT_EQ(dsh::testing::read_file(workspace_ + "/f"), "ok\n");
}

// A session log decides the mode of a library call that names none, gets its run and its
// refusal; a session file inside a recorded workspace is refused.
TEST_F(ExecutorPlanTest, TheSessionDecidesTheModeAndLogsTheRunAndTheRefusal) {
  const std::string path = dir_ / "session.jsonl";
  const SessionLog session = SessionLog::create(path, "s1", workspace_);
  set_sandbox_mode(session, SandboxMode::kReadOnly);
  RunRequest denied = request({"sh", "-c", "echo x > f"});
  denied.session_path = path;
  const RunResult read_only = executor_.run(denied);
  EXPECT_NE(read_only.exit_code, 0);
  EXPECT_FALSE(dsh::testing::exists(workspace_ + "/f"));
  set_sandbox_mode(session, SandboxMode::kWorkspaceWrite);
  const RunResult written = executor_.run(denied);
  EXPECT_EQ(written.exit_code, 0) << written.stderr_tail;
  EXPECT_EQ(dsh::testing::read_file(workspace_ + "/f"), "x\n");
  RunRequest bad = denied;
  bad.mode = SandboxMode::kReadOnly;
  bad.allow_write = {dir_.path()};
  EXPECT_THROW(executor_.run(bad), InvalidSandboxInputError);
  const std::string log = dsh::testing::read_file(path);
  EXPECT_EQ(occurrences(log, "\"type\":\"sandbox/run\""), 2U) << log;
  EXPECT_EQ(occurrences(log, "\"type\":\"sandbox/refused\""), 1U) << log;
  // The workspace was written under the session: a session file planted there decides nothing.
  const std::string planted = workspace_ + "/planted.jsonl";
  const SessionLog copy = SessionLog::create(planted, "s2", workspace_);
  set_sandbox_mode(copy, SandboxMode::kWorkspaceWrite);
  RunRequest steered = request({"sh", "-c", "echo y > g"});
  steered.session_path = planted;
  EXPECT_NE(thrown_by<InvalidSandboxInputError>(executor_, steered).find("planted.jsonl"),
            std::string::npos);
  EXPECT_FALSE(dsh::testing::exists(workspace_ + "/g"));
}

// A workspace-write call whose workspace holds the running program is refused before anything
// runs or is recorded: a confined run could replace the program every later call runs.
TEST_F(ExecutorPlanTest, AWritableRootHoldingTheRunningProgramIsRefused) {
  const std::string program = std::filesystem::read_symlink("/proc/self/exe");
  const std::string marker = dir_ / "marker";
  RunRequest run = request({"touch", marker});
  run.mode = SandboxMode::kWorkspaceWrite;
  run.workspace_root = std::filesystem::path(program).parent_path();
  EXPECT_NE(
      thrown_by<InvalidSandboxInputError>(executor_, run).find("contains the running program"),
      std::string::npos);
  EXPECT_FALSE(dsh::testing::exists(marker));
}

}  // namespace
}  // namespace dsh::sandbox
