// SPDX-License-Identifier: Apache-2.0
// Request::caller_supervises: the calling process reaps the command tree itself (no forked
// supervisor). The same results as a forked supervisor, and the caller's own state (subreaper
// flag, SIGCHLD disposition, signal mask) as it was once the run returns. Survivors of both
// modes are checked in survivors_test.cc.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "exec_helpers.h"
#include "temp_dir.h"

namespace dsh::sandbox::exec {
namespace {

using testing::sh;

Request supervised_here(const std::string& script) {
  Request request = sh(script);
  request.caller_supervises = true;
  return request;
}

TEST(CallerSupervises, ReportsExitCodeOutputAndSignalLikeAForkedSupervisor) {
  const Result exited = run(supervised_here("echo out; echo err >&2; exit 7"));
  EXPECT_EQ(exited.exit_code, 7);
  EXPECT_EQ(exited.out.tail, "out\n");
  EXPECT_EQ(exited.err.tail, "err\n");
  const Result killed = run(supervised_here("kill -TERM $$"));
  EXPECT_EQ(killed.signal, SIGTERM);
  EXPECT_FALSE(killed.exit_code.has_value());
}

TEST(CallerSupervises, SpawnFailuresNameTheirStage) {
  Request missing = supervised_here("true");
  missing.argv = {"/nonexistent/dsh-program"};
  const Result program = run(missing);
  ASSERT_TRUE(program.spawn_error.has_value());
  EXPECT_EQ(program.spawn_error->stage, SpawnStage::kProgram);
  EXPECT_EQ(program.spawn_error->error, ENOENT);

  Request elsewhere = supervised_here("true");
  elsewhere.workdir = "/nonexistent/dsh-workdir";
  const Result workdir = run(elsewhere);
  ASSERT_TRUE(workdir.spawn_error.has_value());
  EXPECT_EQ(workdir.spawn_error->stage, SpawnStage::kWorkdir);
}

TEST(CallerSupervises, TheCallersSubreaperFlagSigchldAndMaskAreRestored) {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction before {};
  ASSERT_EQ(::sigaction(SIGCHLD, &ignore, &before), 0);
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  sigset_t old_mask;
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &usr1, &old_mask), 0);

  // An ignored SIGCHLD would have the kernel reap the command: its status must survive that.
  EXPECT_EQ(run(supervised_here("exit 5")).exit_code, 5);

  int flag = -1;
  ASSERT_EQ(::prctl(PR_GET_CHILD_SUBREAPER, &flag), 0);
  EXPECT_EQ(flag, 0);
  struct sigaction after {};
  ASSERT_EQ(::sigaction(SIGCHLD, &before, &after), 0);
  EXPECT_EQ(after.sa_handler, SIG_IGN);
  sigset_t mask;
  ASSERT_EQ(::pthread_sigmask(SIG_SETMASK, &old_mask, &mask), 0);
  EXPECT_EQ(sigismember(&mask, SIGUSR1), 1);
  EXPECT_EQ(sigismember(&mask, SIGCHLD), 0);
}

TEST(CallerSupervises, IsRefusedForBackgroundJobs) {
  EXPECT_THROW((void)start(supervised_here("true")), InvalidSandboxInputError);
}

TEST(CallerSupervises, IsRefusedWhileAnotherThreadRuns) {
  std::mutex mutex;
  std::condition_variable done;
  bool finished = false;
  std::thread other([&] {
    std::unique_lock lock(mutex);
    done.wait(lock, [&] { return finished; });
  });
  EXPECT_THROW((void)run(supervised_here("true")), InvalidSandboxInputError);
  {
    const std::lock_guard lock(mutex);
    finished = true;
  }
  done.notify_one();
  other.join();
}

}  // namespace
}  // namespace dsh::sandbox::exec
