// SPDX-License-Identifier: Apache-2.0
// Probes are bounded and leave nothing behind: no zombie, no stray process, no leaked fd.
#include "local/bounded_run.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "scripts.h"
#include "temp_dir.h"

namespace dsh::sandbox::local {
namespace {

using dsh::testing::TempDir;
using dsh::testing::write_script;

// Alive means running or stopped: a killed process reparented to init stays a zombie until
// init reaps it, which is init's business, not the probe's.
bool process_alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto state = line.find(") ");
  return state != std::string::npos && line[state + 2] != 'Z' && line[state + 2] != 'X';
}

pid_t read_pid(const std::string& path) {
  std::ifstream file(path);
  pid_t pid = 0;
  file >> pid;
  return pid;
}

TEST(RunBounded, CapturesExitCodeStdoutAndStderr) {
  const BoundedRun run = run_bounded({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, 5000);
  EXPECT_EQ(run.spawn_error, 0);
  EXPECT_FALSE(run.timed_out);
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_EQ(run.out, "out\n");
  EXPECT_EQ(run.err, "err\n");
  EXPECT_FALSE(run.succeeded());
}

TEST(RunBounded, MissingProgramIsASpawnErrorNeverAPathSearch) {
  EXPECT_EQ(run_bounded({"/no/such/dsh-probe"}, 1000).spawn_error, ENOENT);
  // A bare or relative name is refused outright: no PATH, no working-directory lookup.
  EXPECT_EQ(run_bounded({"true"}, 1000).spawn_error, EINVAL);
  EXPECT_EQ(run_bounded({"./true"}, 1000).spawn_error, EINVAL);
}

// Nothing of the caller reaches a probe: its environment is PATH=/usr/bin:/bin alone and its
// working directory is /, whatever the caller's are.
TEST(RunBounded, ProbeSeesAFixedEnvironmentAndTheRootAsItsWorkingDirectory) {
  TempDir dir;
  const dsh::testing::ScopedEnv path("PATH", (dir.path() + ":/usr/bin:/bin").c_str());
  const dsh::testing::ScopedEnv preload("DSH_PROBE_LEAK", "1");
  const std::string cwd = std::filesystem::current_path().string();
  std::filesystem::current_path(dir.path());
  const BoundedRun run = run_bounded({"/usr/bin/env"}, 5000);
  const BoundedRun where = run_bounded({"/bin/pwd"}, 5000);
  std::filesystem::current_path(cwd);
  EXPECT_EQ(run.out, "PATH=/usr/bin:/bin\n");
  EXPECT_EQ(where.out, "/\n");
}

TEST(RunBounded, DeathBySignalHasNoExitCode) {
  const BoundedRun run = run_bounded({"/bin/sh", "-c", "kill -9 $$"}, 5000);
  EXPECT_FALSE(run.timed_out);
  EXPECT_EQ(run.exit_code, std::nullopt);
}

TEST(RunBounded, HangingProbeIsKilledWithItsWholeGroupAndReaped) {
  TempDir dir;
  const std::string script =
      write_script(dir / "hang", "sleep 30 & echo $! > " + (dir / "child") + "; echo $$ > " +
                                     (dir / "leader") + "; sleep 30");
  const BoundedRun run = run_bounded({script}, 300);
  EXPECT_TRUE(run.timed_out);
  EXPECT_EQ(run.exit_code, std::nullopt);
  const pid_t leader = read_pid(dir / "leader");
  const pid_t child = read_pid(dir / "child");
  ASSERT_GT(leader, 0);
  ASSERT_GT(child, 0);
  EXPECT_FALSE(std::ifstream("/proc/" + std::to_string(leader) + "/stat").good())
      << "the leader must be reaped, not left a zombie";
  for (int i = 0; i < 100 && process_alive(child); ++i) ::usleep(10000);
  EXPECT_FALSE(process_alive(child)) << "a probe's descendant survived the timeout";
}

TEST(RunBounded, DescendantsLeftBehindByAFinishedProbeAreEnded) {
  TempDir dir;
  const std::string script =
      write_script(dir / "leave", "sleep 30 & echo $! > " + (dir / "child") + "; exit 0");
  const BoundedRun run = run_bounded({script}, 5000);
  EXPECT_TRUE(run.succeeded());
  const pid_t child = read_pid(dir / "child");
  ASSERT_GT(child, 0);
  for (int i = 0; i < 100 && process_alive(child); ++i) ::usleep(10000);
  EXPECT_FALSE(process_alive(child));
}

TEST(RunBounded, NoDescriptorOfTheCallerLeaksIntoTheProbe) {
  const int leaked = ::open("/dev/null", O_RDONLY);  // deliberately without O_CLOEXEC
  ASSERT_GE(leaked, 3);
  const BoundedRun run = run_bounded({"/bin/ls", "/proc/self/fd"}, 5000);
  ::close(leaked);
  ASSERT_TRUE(run.succeeded()) << run.err;
  // ls itself opens one descriptor to read the directory.
  EXPECT_EQ(run.out, "0\n1\n2\n3\n");
}

TEST(RunBounded, OutputIsCappedAtTheCaptureLimit) {
  const BoundedRun run = run_bounded({"/bin/sh", "-c", "head -c 100000 /dev/zero"}, 5000);
  EXPECT_TRUE(run.succeeded());
  EXPECT_EQ(run.out.size(), kCaptureLimit);
}

}  // namespace
}  // namespace dsh::sandbox::local
