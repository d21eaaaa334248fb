// SPDX-License-Identifier: Apache-2.0
// No survivors: a setsid'd grandchild and a double-forked one are ended when
// the command times out, is aborted, is killed in the background or simply exits, and when a
// terminal run's command exits or its caller lets go, checked from outside after the call returns.
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <thread>

#include "exec/terminal.h"
#include "exec_helpers.h"
#include "pseudo_terminal.h"
#include "temp_dir.h"

namespace dsh::sandbox::exec {
namespace {

using dsh::testing::TempDir;
using testing::process_alive;
using testing::read_pid;
using testing::sh;
using testing::wait_for_file;

// Leaves two escapees behind: one in a new session (setsid, so not in the command's group) and
// one double-forked (its parent exits at once, so it is orphaned and reparented). Each writes
// its own pid to a file, then sleeps; the script writes `ready` when both pids are known.
std::string escapees(const TempDir& dir, const std::string& then) {
  const std::string setsid_pid = dir / "setsid.pid";
  const std::string orphan_pid = dir / "orphan.pid";
  return "setsid sh -c 'echo $$ > \"" + setsid_pid +
         "\"; exec sleep 300' </dev/null >/dev/null 2>&1 &\n"
         "( sh -c 'echo $$ > \"" +
         orphan_pid +
         "\"; exec sleep 300' </dev/null >/dev/null 2>&1 & )\n"
         "while [ ! -s '" +
         setsid_pid + "' ] || [ ! -s '" + orphan_pid +
         "' ]; do sleep 0.01; done\n"
         "echo ready\n" +
         then;
}

void expect_both_gone(const TempDir& dir) {
  const pid_t setsid_pid = read_pid(dir / "setsid.pid");
  const pid_t orphan_pid = read_pid(dir / "orphan.pid");
  ASSERT_GT(setsid_pid, 0);
  ASSERT_GT(orphan_pid, 0);
  EXPECT_FALSE(process_alive(setsid_pid)) << "setsid'd grandchild " << setsid_pid << " survived";
  EXPECT_FALSE(process_alive(orphan_pid))
      << "double-forked grandchild " << orphan_pid << " survived";
}

// Foreground runs under the forked per-run supervisor.
class ForegroundSurvivors : public ::testing::Test {
 protected:
  static Request request_for(const std::string& script) { return sh(script); }
};

TEST_F(ForegroundSurvivors, NoneAfterANormalExit) {
  TempDir dir;
  const Completion result = run(request_for(escapees(dir, "exit 0")));
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out.tail, "ready\n");
  expect_both_gone(dir);
}

TEST_F(ForegroundSurvivors, NoneAfterATimeout) {
  TempDir dir;
  Request request = request_for(escapees(dir, "sleep 300"));
  request.timeout_ms = 5'000;  // the escapees start within milliseconds; 5 s is generous
  request.grace_ms = 200;
  const Completion result = run(request);
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.out.tail, "ready\n");
  expect_both_gone(dir);
}

TEST_F(ForegroundSurvivors, NoneAfterAnAbort) {
  TempDir dir;
  auto abort = std::make_shared<AbortSignal>();
  Request request = request_for(escapees(dir, "sleep 300"));
  request.abort = abort;
  request.grace_ms = 200;
  request.on_stdout = [&](std::string_view chunk) {
    if (chunk.find("ready") != std::string_view::npos) abort->abort();
  };
  const Completion result = run(request);
  EXPECT_TRUE(result.aborted);
  expect_both_gone(dir);
}

// A background job whose escapees are both running (their pid files written).
Job start_with_escapees(const TempDir& dir) {
  Request request = sh(escapees(dir, "sleep 300"));
  request.grace_ms = 200;
  Job job = start(request);
  EXPECT_TRUE(wait_for_file(dir / "setsid.pid"));
  EXPECT_TRUE(wait_for_file(dir / "orphan.pid"));
  return job;
}

TEST(Survivors, NoneAfterABackgroundKill) {
  TempDir dir;
  Job job = start_with_escapees(dir);
  job.kill();
  const Completion result = job.wait();
  EXPECT_TRUE(result.aborted);
  expect_both_gone(dir);
}

TEST(Survivors, NoneWhenABackgroundJobIsDroppedUnwaited) {
  TempDir dir;
  { const Job job = start_with_escapees(dir); }
  expect_both_gone(dir);
}

// The terminal mode: the same supervisor, the command on a terminal of the test's, its escapees
// both running (their pid files written).
class TerminalSurvivors : public ::testing::Test {
 protected:
  TerminalRun start_with_escapees(const std::string& then) {
    EXPECT_TRUE(pty_.ok());
    TerminalRequest request;
    request.argv = {"/bin/sh", "-c", escapees(dir_, then)};
    request.workdir = dir_.path();
    request.terminal = pty_.slave();
    TerminalRun run = start_on_terminal(request);
    EXPECT_GT(run.pid(), 0);
    EXPECT_TRUE(wait_for_file(dir_ / "setsid.pid"));
    EXPECT_TRUE(wait_for_file(dir_ / "orphan.pid"));
    return run;
  }

  TempDir dir_;
  const dsh::testing::Pty pty_;
};

TEST_F(TerminalSurvivors, NoneAfterTheCommandExits) {
  TerminalRun run = start_with_escapees("exit 0");
  const TerminalEnd end = run.wait();
  ASSERT_TRUE(end.wait_status.has_value());
  EXPECT_TRUE(WIFEXITED(*end.wait_status) && WEXITSTATUS(*end.wait_status) == 0);
  expect_both_gone(dir_);
}

TEST_F(TerminalSurvivors, NoneWhenTheCallerLetsGo) {
  TerminalRun run = start_with_escapees("sleep 300");
  const pid_t command = run.pid();
  const TerminalEnd end = run.end();
  ASSERT_TRUE(end.wait_status.has_value());
  EXPECT_TRUE(WIFSIGNALED(*end.wait_status) && WTERMSIG(*end.wait_status) == SIGKILL);
  EXPECT_FALSE(process_alive(command));
  expect_both_gone(dir_);
}

TEST(Survivors, TheCallerIsNeverMadeASubreaper) {
  (void)run(sh("true"));
  int flag = -1;
  ASSERT_EQ(::prctl(PR_GET_CHILD_SUBREAPER, &flag), 0);
  EXPECT_EQ(flag, 0);
}

}  // namespace
}  // namespace dsh::sandbox::exec
