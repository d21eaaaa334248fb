// SPDX-License-Identifier: Apache-2.0
// Spawning, descriptors, workdir, environment, output, deadline and abort with real processes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "exec_helpers.h"
#include "scripts.h"
#include "temp_dir.h"

namespace dsh::sandbox::exec {
namespace {

using dsh::testing::ScopedEnv;
using dsh::testing::TempDir;
using dsh::testing::write_script;
using testing::sh;

TEST(Run, ExitCodeStdoutStderrAndDuration) {
  const Completion result = run(sh("echo out; echo err >&2; exit 3"));
  EXPECT_FALSE(result.spawn_error.has_value());
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.signal, std::nullopt);
  EXPECT_EQ(result.out.tail, "out\n");
  EXPECT_EQ(result.err.tail, "err\n");
  EXPECT_FALSE(result.timed_out || result.aborted);
  EXPECT_LT(result.duration, std::chrono::seconds(25));
}

TEST(Run, DeathBySignalIsReportedAsTheSignal) {
  const Completion result = run(sh("kill -SEGV $$"));
  EXPECT_EQ(result.exit_code, std::nullopt);
  EXPECT_EQ(result.signal, SIGSEGV);
}

TEST(Run, StdinIsEmptyAndTheCommandLeadsItsOwnProcessGroup) {
  const Completion result = run(sh("cat; ps -o pgid= -p $$ | tr -d ' '; echo $$"));
  ASSERT_EQ(result.exit_code, 0) << result.err.tail;
  std::istringstream lines(result.out.tail);
  std::string pgid;
  std::string pid;
  lines >> pgid >> pid;
  EXPECT_EQ(pgid, pid);
  EXPECT_NE(pgid, std::to_string(::getpgrp()));
}

TEST(Run, OutputIsStreamedToCallbacksAsWellAsKept) {
  std::string streamed_out;
  std::string streamed_err;
  Request request = sh("printf a; printf b >&2; printf c");
  request.on_stdout = [&](std::string_view chunk) { streamed_out += chunk; };
  request.on_stderr = [&](std::string_view chunk) { streamed_err += chunk; };
  const Completion result = run(request);
  EXPECT_EQ(streamed_out, "ac");
  EXPECT_EQ(streamed_err, "b");
  EXPECT_EQ(result.out.tail, "ac");
}

TEST(Run, ACallbackSeesOutputBeforeTheCommandEnds) {
  TempDir dir;
  const std::string go = dir / "go";
  Request request = sh("echo ready; while [ ! -e '" + go + "' ]; do sleep 0.01; done; echo done");
  request.on_stdout = [&](std::string_view chunk) {
    if (chunk.find("ready") != std::string_view::npos) std::ofstream(go.c_str()) << "1";
  };
  const Completion result = run(request);
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out.tail, "ready\ndone\n");
}

TEST(Run, LargeOutputKeepsTailsAndSpillsPrivately) {
  TempDir dir;
  Request request = sh("seq 1 100000; seq 1 100000 >&2");
  request.spill_root = dir.path();
  request.keep_spill = true;
  const Completion result = run(request);
  ASSERT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out.tail.size(), kDefaultMaxOutputBytes);
  EXPECT_TRUE(result.out.tail.ends_with("99999\n100000\n"));
  EXPECT_TRUE(result.out.truncated && result.err.truncated);
  ASSERT_TRUE(result.out.spill_path && result.err.spill_path);
  EXPECT_EQ(std::filesystem::file_size(*result.out.spill_path), result.out.total_bytes);
  EXPECT_NE(*result.out.spill_path, *result.err.spill_path);
  struct stat file {};
  ASSERT_EQ(::stat(result.out.spill_path->c_str(), &file), 0);
  EXPECT_EQ(file.st_mode & 0777, 0600U);
  EXPECT_EQ(file.st_uid, ::geteuid());
}

TEST(Run, NoDescriptorAboveTwoLeaksUnlessMapped) {
  TempDir dir;
  const std::string leaked_path = dir / "leaked";
  const std::string mapped_path = dir / "mapped";
  // Deliberately without O_CLOEXEC, as a careless caller would leave them.
  const int leaked = ::open(leaked_path.c_str(), O_WRONLY | O_CREAT, 0600);  // NOLINT
  const int mapped = ::open(mapped_path.c_str(), O_WRONLY | O_CREAT, 0600);  // NOLINT
  ASSERT_GE(leaked, 3);
  ASSERT_GE(mapped, 3);
  // ls runs as a child and lists the shell's descriptors: exactly stdio and the mapped one.
  Request request = sh("ls /proc/$$/fd; echo status >&7");
  request.fds = {{mapped, 7}};
  const Completion result = run(request);
  ::close(leaked);
  ::close(mapped);
  ASSERT_EQ(result.exit_code, 0) << result.err.tail;
  EXPECT_EQ(result.out.tail, "0\n1\n2\n7\n");
  std::ifstream status(mapped_path);
  std::string line;
  std::getline(status, line);
  EXPECT_EQ(line, "status");
}

TEST(Run, ASourceThatIsAnotherMappingsTargetIsNotClobbered) {
  TempDir dir;
  const int a = ::open((dir / "a").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  const int b = ::open((dir / "b").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  Request request = sh("echo to-a >&" + std::to_string(b) + "; echo to-b >&" + std::to_string(a));
  request.fds = {{a, b}, {b, a}};  // a swap
  ASSERT_EQ(run(request).exit_code, 0);
  ::close(a);
  ::close(b);
  std::ifstream file_a(dir / "a");
  std::string line;
  std::getline(file_a, line);
  EXPECT_EQ(line, "to-a");
}

TEST(Run, ProgramIsResolvedThroughPathButNeverTheCurrentDirectory) {
  TempDir dir;
  write_script(dir / "dsh-exec-here", "echo ran");
  Request request;
  request.argv = {"dsh-exec-here"};
  request.workdir = dir.path();
  request.env = {{"PATH", ""}};
  Completion result = run(request);
  ASSERT_TRUE(result.spawn_error.has_value());
  EXPECT_EQ(result.spawn_error->stage, SpawnStage::kProgram);
  EXPECT_EQ(result.spawn_error->error, ENOENT);
  EXPECT_EQ(result.spawn_error->path, "dsh-exec-here");
  request.env = {{"PATH", ".:bin::"}};
  result = run(request);
  ASSERT_TRUE(result.spawn_error.has_value()) << result.out.tail;
  EXPECT_EQ(result.spawn_error->error, ENOENT);
  request.env = {{"PATH", "/nonexistent:" + dir.path()}};
  result = run(request);
  EXPECT_FALSE(result.spawn_error.has_value());
  EXPECT_EQ(result.out.tail, "ran\n");
}

TEST(Run, MissingOrNonDirectoryWorkdirIsAWorkdirErrorNotAMissingProgram) {
  TempDir dir;
  Request request;
  request.argv = {"/no/such/program"};
  request.workdir = dir / "missing";
  Completion result = run(request);
  ASSERT_TRUE(result.spawn_error.has_value());
  EXPECT_EQ(result.spawn_error->stage, SpawnStage::kWorkdir);
  EXPECT_EQ(result.spawn_error->error, ENOENT);
  EXPECT_EQ(result.spawn_error->path, dir / "missing");
  std::ofstream(dir / "file") << "x";
  request.workdir = dir / "file";
  result = run(request);
  ASSERT_TRUE(result.spawn_error.has_value());
  EXPECT_EQ(result.spawn_error->stage, SpawnStage::kWorkdir);
  EXPECT_EQ(result.spawn_error->error, ENOTDIR);
}

TEST(Run, MissingOrNonExecutableProgramIsAProgramError) {
  TempDir dir;
  Request request;
  request.argv = {dir / "missing"};
  Completion result = run(request);
  ASSERT_TRUE(result.spawn_error.has_value());
  EXPECT_EQ(result.spawn_error->stage, SpawnStage::kProgram);
  EXPECT_EQ(result.spawn_error->error, ENOENT);
  EXPECT_EQ(result.spawn_error->path, dir / "missing");
  std::ofstream(dir / "plain") << "echo hi\n";
  ::chmod((dir / "plain").c_str(), 0644);
  request.argv = {dir / "plain"};
  result = run(request);
  ASSERT_TRUE(result.spawn_error.has_value());
  EXPECT_EQ(result.spawn_error->error, EACCES);
  EXPECT_EQ(result.spawn_error->message(),
            "spawn " + dir / "plain" + " EACCES (Permission denied)");
}

TEST(Run, RelativeProgramPathIsRelativeToTheWorkdir) {
  TempDir dir;
  write_script(dir / "tool", "pwd");
  Request request;
  request.argv = {"./tool"};
  request.workdir = dir.path();
  const Completion result = run(request);
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out.tail, std::filesystem::canonical(dir.path()).string() + "\n");
}

TEST(Run, EnvironmentIsScrubbedAndMerged) {
  ScopedEnv secret("DSH_EXEC_TEST_API_KEY", "leak");
  ScopedEnv dsh_name("DSH_EXEC_TEST", "leak");
  ScopedEnv term("TERM", "xterm");
  Request request = sh("env");
  request.env = {{"FROM_CALLER", "1"}, {"TERM", "vt100"}};
  request.managed_env = {{"FROM_CALLER", "managed"}};
  const Completion result = run(request);
  EXPECT_EQ(result.out.tail.find("leak"), std::string::npos);
  EXPECT_NE(result.out.tail.find("NO_COLOR=1\n"), std::string::npos);
  EXPECT_NE(result.out.tail.find("GIT_PAGER=cat\n"), std::string::npos);
  EXPECT_NE(result.out.tail.find("TERM=vt100\n"), std::string::npos);
  EXPECT_NE(result.out.tail.find("FROM_CALLER=managed\n"), std::string::npos);
}

TEST(Run, IgnoredSignalsAndTheSignalMaskAreResetForTheCommand) {
  struct sigaction ignore {};
  struct sigaction old {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &old);
  const Completion result = run(sh("grep -E '^(SigIgn|SigBlk)' /proc/self/status"));
  ::sigaction(SIGPIPE, &old, nullptr);
  EXPECT_NE(result.out.tail.find("SigBlk:\t0000000000000000"), std::string::npos)
      << result.out.tail;
  EXPECT_NE(result.out.tail.find("SigIgn:\t0000000000000000"), std::string::npos)
      << result.out.tail;
}

TEST(Run, DeadlineSendsSigtermToTheGroup) {
  Request request = sh("sleep 30");
  request.timeout_ms = 200;
  const Completion result = run(request);
  EXPECT_TRUE(result.timed_out);
  EXPECT_FALSE(result.aborted);
  EXPECT_EQ(result.signal, SIGTERM);
  EXPECT_LT(result.duration, std::chrono::seconds(20));
}

TEST(Run, ACommandIgnoringSigtermIsKilledAfterTheGrace) {
  TempDir dir;
  Request request =
      sh("trap '' TERM; echo $$ > '" + dir / "pid" + "'; while :; do sleep 0.05; done");
  request.timeout_ms = 200;
  request.grace_ms = 300;
  const Completion result = run(request);
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.signal, SIGKILL);
  EXPECT_FALSE(testing::process_alive(testing::read_pid(dir / "pid")));
}

TEST(Run, AbortFromAnotherThreadWinsOverALaterDeadline) {
  auto abort = std::make_shared<AbortSignal>();
  Request request = sh("echo started; sleep 30");
  request.abort = abort;
  request.timeout_ms = 20'000;
  request.on_stdout = [&](std::string_view) { std::thread([abort] { abort->abort(); }).detach(); };
  const Completion result = run(request);
  EXPECT_TRUE(result.aborted);
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.signal, SIGTERM);
}

TEST(Run, AnAbortForwardsItsSignalToTheCommandFirst) {
  auto abort = std::make_shared<AbortSignal>();
  Request request =
      sh("trap 'echo got INT; exit 9' INT; echo started; while :; do sleep 0.05; done");
  request.abort = abort;
  request.on_stdout = [&](std::string_view chunk) {
    if (chunk.find("started") != std::string_view::npos) abort->abort(SIGINT);
  };
  const Completion result = run(request);
  EXPECT_TRUE(result.aborted);
  EXPECT_EQ(result.exit_code, 9);
  EXPECT_EQ(result.out.tail, "started\ngot INT\n");
}

TEST(Run, StdinIsClosedUnlessTheCallerPassesADescriptor) {
  const Completion closed = run(sh("cat; echo eof"));
  EXPECT_EQ(closed.out.tail, "eof\n");
  std::array<int, 2> pipe{};
  ASSERT_EQ(::pipe2(pipe.data(), O_CLOEXEC), 0);
  ASSERT_EQ(::write(pipe[1], "hi\n", 3), 3);
  ::close(pipe[1]);
  Request request = sh("cat");
  request.stdin_fd = pipe[0];
  const Completion passed = run(request);
  ::close(pipe[0]);
  EXPECT_EQ(passed.out.tail, "hi\n");
}

TEST(Run, TheBoundsFactsNameTheirMechanism) {
  const Completion bounded = run(sh("true"));
  EXPECT_EQ(bounded.bounds.processes.limit, kDefaultMaxProcesses);
  EXPECT_EQ(bounded.bounds.memory.limit, default_max_memory_bytes());
  EXPECT_FALSE(bounded.bounds.memory.enforced_by.empty());  // a cgroup, or RLIMIT_DATA
  if (::getuid() != 0) {
    EXPECT_FALSE(bounded.bounds.processes.enforced_by.empty());
  }
  Request open = sh("true");
  open.bounds = {std::nullopt, std::nullopt};
  const Completion unbounded = run(open);
  EXPECT_FALSE(unbounded.bounds.processes.limit.has_value());
  EXPECT_TRUE(unbounded.bounds.processes.enforced_by.empty());
  EXPECT_TRUE(unbounded.bounds.memory.enforced_by.empty());
  // An rlimit, where one is the mechanism, is the command's own.
  Request small = sh("grep 'Max processes' /proc/self/limits");
  small.bounds.max_processes = 77;
  const Completion limited = run(small);
  if (limited.bounds.processes.enforced_by == "RLIMIT_NPROC") {
    EXPECT_NE(limited.out.tail.find(" 77 "), std::string::npos) << limited.out.tail;
  }
}

// The v2 cgroup this process is in, under the usual mount points (pure v2, or the hybrid's
// unified hierarchy).
std::string own_v2_cgroup() {
  std::ifstream file("/proc/self/cgroup");
  for (std::string line; std::getline(file, line);) {
    if (!line.starts_with("0::")) continue;
    const std::string path = line.substr(3) == "/" ? "" : line.substr(3);
    const std::string mount = std::filesystem::exists("/sys/fs/cgroup/unified/cgroup.procs")
                                  ? "/sys/fs/cgroup/unified"
                                  : "/sys/fs/cgroup";
    return mount + path;
  }
  return "";
}

TEST(Run, RunCgroupsAreRemovedAndAStaleOneOfADeadCreatorIsSwept) {
  const std::string parent = own_v2_cgroup();
  const bool writable = !parent.empty() && ::access((parent + "/cgroup.procs").c_str(), W_OK) == 0;
  const Completion first = run(sh("true"));
  if (!writable) {  // no cgroup can be made: the facts say the subreaper ends the tree
    EXPECT_EQ(first.bounds.tree_kill, "subreaper");
    return;
  }
  EXPECT_EQ(first.bounds.tree_kill, "cgroup2 cgroup.kill");
  // pid_max is at most 2^22: this creator never existed, as after a caller and its supervisor
  // were both killed.
  const std::string stale = parent + "/dsh-run-99999999-0";
  ASSERT_EQ(::mkdir(stale.c_str(), 0755), 0) << stale << ": " << std::strerror(errno);
  const Completion second = run(sh("true"));
  EXPECT_EQ(second.exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(stale));
  for (const auto& entry : std::filesystem::directory_iterator(parent)) {
    const std::string name = entry.path().filename().string();
    EXPECT_FALSE(name.starts_with("dsh-run-" + std::to_string(::getpid()) + "-")) << name;
  }
}

// This process's cgroup line for the v2 hierarchy of `pid`, read from outside it.
std::string v2_cgroup_of(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/cgroup");
  for (std::string line; std::getline(file, line);) {
    if (line.starts_with("0::")) return line.substr(3);
  }
  return "";
}

// Makes clone3 fail with ENOSYS in this process from now on, as container runtimes' default
// seccomp profiles do (glibc then falls back to clone). x86-64 only: the syscall number and the
// architecture check below are its; elsewhere the command never tries clone3.
void refuse_clone3() {
#if defined(__x86_64__)
  std::array<sock_filter, 6> program = {{
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 435 /* clone3 */, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  }};
  const sock_fprog fprog{static_cast<unsigned short>(program.size()), program.data()};
  ASSERT_EQ(::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
  ASSERT_EQ(::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog), 0) << std::strerror(errno);
#endif
}

// The command is born in its run's v2 cgroup (clone3 CLONE_INTO_CGROUP), or joins it through
// cgroup.procs where clone3 is refused: either way /proc shows it inside from outside, the
// facts say so, and the cgroup is gone after the run.
void expect_born_in_the_runs_cgroup() {
  const std::string parent = own_v2_cgroup();
  const bool writable = !parent.empty() && ::access((parent + "/cgroup.procs").c_str(), W_OK) == 0;
  Request request = sh("exec sleep 30");
  request.grace_ms = 200;
  Job job = start(request);
  ASSERT_GT(job.pid(), 0);
  const std::string inside = v2_cgroup_of(job.pid());
  job.kill();
  const Completion result = job.wait();
  if (!writable) {  // no cgroup can be made: the subreaper ends the tree
    EXPECT_EQ(result.bounds.tree_kill, "subreaper");
    return;
  }
  EXPECT_EQ(result.bounds.tree_kill, "cgroup2 cgroup.kill");
  const std::string own = v2_cgroup_of(::getpid());
  const std::string run_cgroup = (own == "/" ? "" : own) + "/dsh-run-" + std::to_string(::getpid());
  EXPECT_TRUE(inside.starts_with(run_cgroup + "-")) << inside << " against " << run_cgroup;
  const std::string mount = parent.substr(0, parent.size() - (own == "/" ? 0 : own.size()));
  EXPECT_FALSE(std::filesystem::exists(mount + inside)) << "the run's cgroup was left behind";
}

TEST(Start, TheCommandIsBornInItsRunsCgroup) { expect_born_in_the_runs_cgroup(); }

TEST(Start, WhereClone3IsRefusedTheCommandJoinsItsRunsCgroupInstead) {
  refuse_clone3();
  expect_born_in_the_runs_cgroup();
}

TEST(Run, AnAlreadyAbortedSignalRunsNothing) {
  TempDir dir;
  auto abort = std::make_shared<AbortSignal>();
  abort->abort();
  EXPECT_TRUE(abort->aborted());
  Request request = sh("touch '" + dir / "ran" + "'");
  request.abort = abort;
  const Completion result = run(request);
  EXPECT_TRUE(result.aborted);
  EXPECT_FALSE(std::filesystem::exists(dir / "ran"));
}

TEST(Start, BackgroundJobRunsWaitsAndReportsItsOwnOutput) {
  Job job = start(sh("echo bg; exit 4"));
  EXPECT_GT(job.pid(), 0);
  EXPECT_FALSE(job.spawn_error().has_value());
  const Completion result = job.wait();
  EXPECT_EQ(result.exit_code, 4);
  EXPECT_EQ(result.out.tail, "bg\n");
}

TEST(Start, SpawnFailureIsKnownWhenStartReturns) {
  Request request;
  request.argv = {"/no/such/dsh-runner"};
  Job job = start(request);
  ASSERT_TRUE(job.spawn_error().has_value());
  EXPECT_EQ(job.spawn_error()->stage, SpawnStage::kProgram);
  EXPECT_EQ(job.spawn_error()->error, ENOENT);
  EXPECT_EQ(job.pid(), 0);
  EXPECT_TRUE(job.wait().spawn_error.has_value());
}

TEST(Start, BackgroundHasNoTimeoutAndKillEndsIt) {
  TempDir dir;
  const std::string pid = dir / "pid";
  Request request = sh("echo $$ > '" + pid + "'; exec sleep 30");
  request.timeout_ms = 1;  // ignored: background jobs have no deadline
  request.grace_ms = 200;
  Job job = start(request);
  // Alive after it started and wrote its pid, past its 1 ms would-be deadline.
  ASSERT_TRUE(testing::wait_for_file(pid));
  EXPECT_TRUE(testing::process_alive(testing::read_pid(pid)));
  job.kill();
  const Completion result = job.wait();
  EXPECT_TRUE(result.aborted);
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.signal, SIGTERM);
}

}  // namespace
}  // namespace dsh::sandbox::exec
