// SPDX-License-Identifier: Apache-2.0
// exec's other two modes, checked from outside the processes they start: a run on a terminal (the
// command's stdio is the terminal, it is outside the caller's session and has no controlling
// terminal, its environment is the caller's as it is, signals reach its group) and a detached
// process (outside the caller's session and group, no session leader, no terminal, stdio on
// /dev/null and no descriptor but the kept ones).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "dsh/sandbox/errors.h"
#include "exec/detached.h"
#include "exec/terminal.h"
#include "exec_helpers.h"
#include "files.h"
#include "pseudo_terminal.h"
#include "temp_dir.h"
#include "wait.h"

namespace dsh::sandbox::exec {
namespace {

using dsh::testing::Pty;
using dsh::testing::ScopedEnv;
using dsh::testing::TempDir;
using testing::process_alive;

// What /proc/<pid>/stat says of a process: its process group, session and controlling terminal
// (tty_nr, 0 for none).
struct ProcStat {
  pid_t pgrp = -1;
  pid_t session = -1;
  long tty = -1;
};

ProcStat proc_stat(pid_t pid) {
  const std::string line = dsh::testing::read_file("/proc/" + std::to_string(pid) + "/stat");
  ProcStat stat;
  const auto fields = line.rfind(") ");
  if (fields == std::string::npos) return stat;
  std::istringstream rest(line.substr(fields + 2));
  char state = 0;
  pid_t ppid = 0;
  rest >> state >> ppid >> stat.pgrp >> stat.session >> stat.tty;
  return stat;
}

// The descriptors a process has open, and where each leads.
std::vector<std::pair<int, std::string>> open_descriptors(pid_t pid) {
  std::vector<std::pair<int, std::string>> out;
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  for (const std::string& name : dsh::testing::list_dir(dir)) {
    std::error_code error;
    out.emplace_back(std::stoi(name), std::filesystem::read_symlink(dir + "/" + name, error));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Reads the terminal's master side until `text` has come (true) or 20 s passed.
bool read_terminal(const Pty& pty, const std::string& text, std::string& transcript) {
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (transcript.find(text) == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        limit - std::chrono::steady_clock::now());
    pollfd ready{pty.master(), POLLIN, 0};
    if (left.count() <= 0 || ::poll(&ready, 1, static_cast<int>(left.count())) <= 0) return false;
    std::array<char, 4096> buffer{};
    const ssize_t n = ::read(pty.master(), buffer.data(), buffer.size());
    if (n <= 0) return false;
    transcript.append(buffer.data(), static_cast<std::size_t>(n));
  }
  return true;
}

// A /bin/sh script on a terminal of the test's, in a directory of its own.
class TerminalMode : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(pty_.ok()); }

  TerminalRequest on_terminal(const std::string& script) const {
    TerminalRequest request;
    request.argv = {"/bin/sh", "-c", script};
    request.workdir = dir_.path();
    request.terminal = pty_.slave();
    return request;
  }

  bool read_until(const std::string& text) { return read_terminal(pty_, text, transcript_); }

  TempDir dir_;
  const Pty pty_;
  std::string transcript_;
};

TEST_F(TerminalMode, TheCommandIsOnTheTerminalOutsideTheCallersSessionWithTheCallersEnvironment) {
  // Scrubbed from every run() (a DSH_ name); a person's shell gets the environment as it is.
  const ScopedEnv env("DSH_TERMINAL_RUN_PROBE", "as-is");
  TerminalRun run = start_on_terminal(
      on_terminal("echo \"ready-$DSH_TERMINAL_RUN_PROBE\"; read line; echo \"got-$line\"; "
                  "exit 3"));
  ASSERT_GT(run.pid(), 0);
  ASSERT_TRUE(read_until("ready-as-is")) << transcript_;

  const ProcStat command = proc_stat(run.pid());
  EXPECT_EQ(command.pgrp, run.pid());  // its own process group, as every run's command
  EXPECT_NE(command.session, ::getsid(0));
  EXPECT_NE(command.session, run.pid());  // the supervisor's session: no leader, no terminal
  EXPECT_EQ(command.tty, 0) << "the command has a controlling terminal";
  const std::string terminal =
      std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(pty_.slave()));
  for (const auto& [fd, target] : open_descriptors(run.pid())) {
    if (fd <= 2) {
      EXPECT_EQ(target, terminal) << "descriptor " << fd;
    }
  }

  const std::string line = "hello\n";
  ASSERT_EQ(::write(pty_.master(), line.data(), line.size()), static_cast<ssize_t>(line.size()));
  EXPECT_TRUE(read_until("got-hello")) << transcript_;
  const TerminalEnd end = run.wait();
  ASSERT_TRUE(end.wait_status.has_value());
  EXPECT_TRUE(WIFEXITED(*end.wait_status) && WEXITSTATUS(*end.wait_status) == 3);
  EXPECT_FALSE(end.spawn_error.has_value());
}

TEST_F(TerminalMode, ASignalReachesTheCommandsProcessGroup) {
  TerminalRun run =
      start_on_terminal(on_terminal("trap 'exit 7' HUP; echo ready; sleep 300 & wait"));
  ASSERT_TRUE(read_until("ready")) << transcript_;
  run.signal(SIGHUP);
  const TerminalEnd end = run.wait();
  ASSERT_TRUE(end.wait_status.has_value());
  EXPECT_TRUE(WIFEXITED(*end.wait_status) && WEXITSTATUS(*end.wait_status) == 7);
}

TEST_F(TerminalMode, AMissingProgramIsASpawnErrorAndARelativeOneIsRefused) {
  TerminalRequest request = on_terminal("true");
  request.argv = {dir_ / "missing"};
  TerminalRun run = start_on_terminal(request);
  EXPECT_EQ(run.pid(), 0);
  const TerminalEnd end = run.wait();
  ASSERT_TRUE(end.spawn_error.has_value());
  EXPECT_EQ(end.spawn_error->stage, SpawnStage::kProgram);
  EXPECT_EQ(end.spawn_error->error, ENOENT);
  EXPECT_FALSE(end.wait_status.has_value());

  request.argv = {"sh", "-c", "true"};
  EXPECT_THROW((void)start_on_terminal(request), InvalidSandboxInputError);
}

TEST(DetachedMode, TheBodyRunsOutsideTheCallersSessionWithOnlyItsKeptDescriptors) {
  std::array<int, 2> report{};
  std::array<int, 2> go{};
  ASSERT_EQ(::pipe2(report.data(), O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(go.data(), O_CLOEXEC), 0);
  // Open in the caller, inheritable, not kept: the detached process must not hold it.
  const int stray = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(stray, 0);
  const std::array<int, 2> keep = {report[1], go[0]};
  const int error = start_detached(
      [&] {
        const pid_t self = ::getpid();
        (void)!::write(report[1], &self, sizeof self);
        char byte = 0;
        while (::read(go[0], &byte, 1) > 0) {
        }
        ::_exit(0);
      },
      keep);
  ::close(stray);
  ::close(report[1]);
  ::close(go[0]);
  ASSERT_EQ(error, 0);
  pid_t body = 0;
  ASSERT_EQ(::read(report[0], &body, sizeof body), static_cast<ssize_t>(sizeof body));
  ::close(report[0]);

  // start_detached returned while the body still runs (it waits for `go`).
  EXPECT_TRUE(process_alive(body));
  const ProcStat stat = proc_stat(body);
  EXPECT_NE(stat.session, ::getsid(0));
  EXPECT_NE(stat.pgrp, ::getpgrp());
  EXPECT_NE(stat.session, body) << "the detached process is a session leader";
  EXPECT_EQ(stat.tty, 0);
  const std::vector<std::pair<int, std::string>> expected = {
      {0, "/dev/null"}, {1, "/dev/null"}, {2, "/dev/null"}};
  std::vector<std::pair<int, std::string>> seen = open_descriptors(body);
  ASSERT_EQ(seen.size(), 5U) << "stdio and the two kept descriptors, nothing else";
  EXPECT_EQ(std::vector(seen.begin(), seen.begin() + 3), expected);
  EXPECT_EQ(seen[3].first, std::min(keep[0], keep[1]));
  EXPECT_EQ(seen[4].first, std::max(keep[0], keep[1]));

  ::close(go[1]);
  EXPECT_TRUE(dsh::testing::wait_until([body] { return !process_alive(body); }));
}

}  // namespace
}  // namespace dsh::sandbox::exec
