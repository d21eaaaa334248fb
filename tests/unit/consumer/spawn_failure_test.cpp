// SPDX-License-Identifier: Apache-2.0
// The consumer's two stateless judgements, case by case as the reference's consumer tests give
// them: whether a spawn error means the runner itself could not start, and whether a settled
// run was denied by this backend's own signatures.
#include "consumer/bash_executor.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <optional>
#include <string>
#include <vector>

namespace dsh::sandbox::consumer {
namespace {

constexpr const char* kRunner = "/opt/dsh/runner";
constexpr const char* kUsable = "/";  // a directory anyone can enter
constexpr const char* kMissing = "/nonexistent/dsh-unit/workdir";

exec::SpawnError program_error(int error, std::string path = kRunner) {
  return {exec::SpawnStage::kProgram, error, std::move(path)};
}

TEST(RunnerSpawnFailure, AMissingOrNonExecutableRunnerWithAUsableWorkdir) {
  EXPECT_TRUE(is_runner_spawn_failure(program_error(ENOENT), kRunner, kUsable));
  EXPECT_TRUE(is_runner_spawn_failure(program_error(EACCES), kRunner, kUsable));
}

TEST(RunnerSpawnFailure, EveryOtherCodeStaysOrdinary) {
  for (const int error : {ENOEXEC, ENOTDIR, EPERM, EMFILE, ENOMEM, 0}) {
    EXPECT_FALSE(is_runner_spawn_failure(program_error(error), kRunner, kUsable)) << error;
  }
}

// A missing or non-directory workdir gives the same codes: an ordinary start failure.
TEST(RunnerSpawnFailure, AnUnusableWorkdirStaysOrdinary) {
  for (const char* workdir : {kMissing, "/dev/null"}) {
    EXPECT_FALSE(is_runner_spawn_failure(program_error(ENOENT), kRunner, workdir)) << workdir;
    EXPECT_FALSE(is_runner_spawn_failure(program_error(EACCES), kRunner, workdir)) << workdir;
  }
  const exec::SpawnError chdir{exec::SpawnStage::kWorkdir, ENOENT, kMissing};
  EXPECT_FALSE(is_runner_spawn_failure(chdir, kRunner, kUsable));
}

TEST(RunnerSpawnFailure, OnlyTheRunnersOwnPath) {
  EXPECT_FALSE(is_runner_spawn_failure(program_error(ENOENT, "/opt/dsh/other"), kRunner, kUsable));
  EXPECT_FALSE(is_runner_spawn_failure(program_error(ENOENT, ""), kRunner, kUsable));
  EXPECT_FALSE(is_runner_spawn_failure(program_error(ENOENT, ""), "", kUsable));
  const std::string spaced = "/opt/dsh sandbox/runner";
  EXPECT_TRUE(is_runner_spawn_failure(program_error(ENOENT, spaced), spaced, kUsable));
}

TEST(RunnerSpawnFailure, TheDetailIsTheReferencesSpawnErrorText) {
  EXPECT_EQ(runner_spawn_failure_detail(program_error(ENOENT), kRunner),
            "Error: spawn /opt/dsh/runner ENOENT");
  EXPECT_EQ(runner_spawn_failure_detail(program_error(EACCES), kRunner),
            "Error: spawn /opt/dsh/runner EACCES");
}

// The reference's classifyDenial cases: the Unix set is both Linux dialects (the operator's
// runner), bwrap's set is its one dialect, Seatbelt's its own.
TEST(MatchesSignature, NeedsANonzeroExitAndOneOfThisBackendsSignatures) {
  const std::vector<std::string> unix_set = {"read-only file system", "permission denied"};
  const std::vector<std::string> bwrap_set = {"read-only file system"};
  const std::vector<std::string> seatbelt_set = {"operation not permitted"};
  const std::string erofs = "sh: /x: Read-only file system\n";
  EXPECT_FALSE(matches_signature(0, erofs, unix_set));
  EXPECT_FALSE(matches_signature(std::nullopt, erofs, unix_set));  // death by a signal
  EXPECT_TRUE(matches_signature(1, erofs, unix_set));
  const std::string eacces = "sh: /x: Permission denied\n";
  EXPECT_TRUE(matches_signature(1, eacces, unix_set));
  EXPECT_FALSE(matches_signature(1, eacces, bwrap_set));
  const std::string eperm = "mount: Operation not permitted\n";
  EXPECT_FALSE(matches_signature(1, eperm, unix_set));
  EXPECT_TRUE(matches_signature(1, eperm, seatbelt_set));
  EXPECT_FALSE(matches_signature(1, "ls: /x: No such file or directory\n", unix_set));
}

}  // namespace
}  // namespace dsh::sandbox::consumer
