// SPDX-License-Identifier: Apache-2.0
// Probes are bounded and leave nothing behind: no zombie, no stray process, no leaked fd, not
// even when the caller is killed mid-probe.
#include "local/probes.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "scripts.h"
#include "temp_dir.h"
#include "wait.h"

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

// Waits for `pid` to exit (a pidfd polls readable then, Linux 5.3+; a zombie has exited).
bool exits_within(pid_t pid, int timeout_ms) {
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return errno == ESRCH;
  pollfd exited{fd, POLLIN, 0};
  const bool done = ::poll(&exited, 1, timeout_ms) == 1;
  ::close(fd);
  return done;
}

// The first line written to the FIFO at `path`, within `timeout_ms`: the probe's word that it
// has started everything it starts.
std::string read_fifo_line(const std::string& path, int timeout_ms) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "";
  std::string line;
  pollfd readable{fd, POLLIN, 0};
  while (line.find('\n') == std::string::npos && ::poll(&readable, 1, timeout_ms) == 1) {
    char c = 0;
    const ssize_t n = ::read(fd, &c, 1);
    if (n == 1) line += c;
    if (n == 0) break;  // the writer closed without a newline
  }
  ::close(fd);
  return line;
}

// The children of `pid`'s main thread (/proc/PID/task/PID/children, Linux 3.5+).
std::vector<pid_t> children_of(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> out;
  for (pid_t child = 0; file >> child;) out.push_back(child);
  return out;
}

TEST(RunProbe, CapturesExitCodeStdoutAndStderr) {
  const ProbeRun run = run_probe({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, 5000);
  EXPECT_EQ(run.spawn_error, 0);
  EXPECT_FALSE(run.timed_out);
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_EQ(run.out, "out\n");
  EXPECT_EQ(run.err, "err\n");
  EXPECT_FALSE(run.succeeded());
}

TEST(RunProbe, MissingProgramIsASpawnErrorNeverAPathSearch) {
  EXPECT_EQ(run_probe({"/no/such/dsh-probe"}, 1000).spawn_error, ENOENT);
  // A bare or relative name is refused outright: no PATH, no working-directory lookup.
  EXPECT_EQ(run_probe({"true"}, 1000).spawn_error, EINVAL);
  EXPECT_EQ(run_probe({"./true"}, 1000).spawn_error, EINVAL);
}

// Nothing of the caller reaches a probe: its environment is PATH=/usr/bin:/bin alone and its
// working directory is /, whatever the caller's are.
TEST(RunProbe, ProbeSeesAFixedEnvironmentAndTheRootAsItsWorkingDirectory) {
  TempDir dir;
  const dsh::testing::ScopedEnv path("PATH", (dir.path() + ":/usr/bin:/bin").c_str());
  const dsh::testing::ScopedEnv preload("DSH_PROBE_LEAK", "1");
  const std::string cwd = std::filesystem::current_path().string();
  std::filesystem::current_path(dir.path());
  const ProbeRun run = run_probe({"/usr/bin/env"}, 5000);
  const ProbeRun where = run_probe({"/bin/pwd"}, 5000);
  std::filesystem::current_path(cwd);
  EXPECT_EQ(run.out, "PATH=/usr/bin:/bin\n");
  EXPECT_EQ(where.out, "/\n");
}

TEST(RunProbe, DeathBySignalHasNoExitCode) {
  const ProbeRun run = run_probe({"/bin/sh", "-c", "kill -9 $$"}, 5000);
  EXPECT_FALSE(run.timed_out);
  EXPECT_EQ(run.exit_code, std::nullopt);
}

TEST(RunProbe, HangingProbeIsKilledWithItsWholeGroupAndReaped) {
  TempDir dir;
  const std::string script =
      write_script(dir / "hang", "sleep 30 & echo $! > " + (dir / "child") + "; echo $$ > " +
                                     (dir / "leader") + "; sleep 30");
  const ProbeRun run = run_probe({script}, 300);
  EXPECT_TRUE(run.timed_out);
  EXPECT_EQ(run.exit_code, std::nullopt);
  const pid_t leader = read_pid(dir / "leader");
  const pid_t child = read_pid(dir / "child");
  ASSERT_GT(leader, 0);
  ASSERT_GT(child, 0);
  EXPECT_FALSE(std::ifstream("/proc/" + std::to_string(leader) + "/stat").good())
      << "the leader must be reaped, not left a zombie";
  dsh::testing::wait_until([&] { return !process_alive(child); }, std::chrono::seconds(1));
  EXPECT_FALSE(process_alive(child)) << "a probe's descendant survived the timeout";
}

TEST(RunProbe, DescendantsLeftBehindByAFinishedProbeAreEnded) {
  TempDir dir;
  const std::string script =
      write_script(dir / "leave", "sleep 30 & echo $! > " + (dir / "child") + "; exit 0");
  const ProbeRun run = run_probe({script}, 5000);
  EXPECT_TRUE(run.succeeded());
  const pid_t child = read_pid(dir / "child");
  ASSERT_GT(child, 0);
  dsh::testing::wait_until([&] { return !process_alive(child); }, std::chrono::seconds(1));
  EXPECT_FALSE(process_alive(child));
}

// A descendant in a session of its own is outside the probe's process group: the supervisor, its
// subreaper, still ends it.
TEST(RunProbe, DescendantsThatLeftTheProcessGroupAreEnded) {
  TempDir dir;
  const std::string script = write_script(
      dir / "escape", "setsid /bin/sleep 30 & echo $! > " + (dir / "child") + "; exit 0");
  const ProbeRun run = run_probe({script}, 5000);
  EXPECT_TRUE(run.succeeded()) << run.err;
  const pid_t child = read_pid(dir / "child");
  ASSERT_GT(child, 0);
  EXPECT_TRUE(exits_within(child, 5000)) << "a setsid descendant outlived the probe";
}

// Nothing a probe starts outlives it when its caller is killed mid-probe (SIGKILL: no handler,
// no destructor): the supervisor sees its caller die and ends the tree, then exits itself.
TEST(RunProbe, NothingOutlivesACallerKilledMidProbe) {
  TempDir dir;
  const std::string fifo = dir / "ready";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string script =
      write_script(dir / "slow", "setsid /bin/sleep 30 & echo \"$$ $!\" > " + fifo + "; sleep 30");
  const pid_t caller = ::fork();
  ASSERT_GE(caller, 0);
  if (caller == 0) {
    run_probe({script}, 60000);
    ::_exit(0);
  }
  std::istringstream ready(read_fifo_line(fifo, 10000));
  pid_t leader = 0;
  pid_t escaped = 0;
  ready >> leader >> escaped;
  const std::vector<pid_t> supervisors = children_of(caller);
  ::kill(caller, SIGKILL);
  ::waitpid(caller, nullptr, 0);
  ASSERT_GT(leader, 0) << "the probe never reported";
  ASSERT_GT(escaped, 0);
  ASSERT_EQ(supervisors.size(), 1U);
  EXPECT_TRUE(exits_within(leader, 5000)) << "the probe outlived its killed caller";
  EXPECT_TRUE(exits_within(escaped, 5000)) << "a setsid descendant outlived the killed caller";
  EXPECT_TRUE(exits_within(supervisors.front(), 5000)) << "the supervisor outlived its caller";
}

TEST(RunProbe, NoDescriptorOfTheCallerLeaksIntoTheProbe) {
  const int leaked = ::open("/dev/null", O_RDONLY);  // deliberately without O_CLOEXEC
  ASSERT_GE(leaked, 3);
  const ProbeRun run = run_probe({"/bin/ls", "/proc/self/fd"}, 5000);
  ::close(leaked);
  ASSERT_TRUE(run.succeeded()) << run.err;
  // ls itself opens one descriptor to read the directory.
  EXPECT_EQ(run.out, "0\n1\n2\n3\n");
}

TEST(RunProbe, OutputIsCappedAtTheCaptureLimit) {
  const ProbeRun run = run_probe({"/bin/sh", "-c", "head -c 100000 /dev/zero"}, 5000);
  EXPECT_TRUE(run.succeeded());
  EXPECT_EQ(run.out.size(), kCaptureLimit);
}

}  // namespace
}  // namespace dsh::sandbox::local
