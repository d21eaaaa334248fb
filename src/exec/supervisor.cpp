// SPDX-License-Identifier: Apache-2.0
// Why a supervisor process per command, rather than making the caller a subreaper:
// PR_SET_CHILD_SUBREAPER is a property of the whole calling process. Orphans of any descendant
// of any thread would reparent to the caller, and once reparented nothing tells which run they
// came from (a double fork can finish before any /proc walk sees the middle process). A
// supervisor forked per run is the nearest subreaper of exactly one command tree: every orphan
// of that tree reparents to it (kernel: find_new_reaper picks the closest ancestor with
// is_child_subreaper set), it reaps them, and since it is their parent their pids cannot be
// reused before it reaps them, so killing them by pid is race-free. The caller's process keeps
// its own reaping semantics. Where the caller can make a cgroup v2 child, cgroup.kill ends the
// tree at once on top of that; cgroups are not delegated to unprivileged callers on most hosts
// (nobody here), and the supervisor works everywhere /proc is mounted.
//
// The supervisor outlives its caller on purpose: when the caller dies, even by SIGKILL, the
// control pipe reaches EOF and the supervisor ends the tree. It sits in its own process group,
// so neither the terminal's signals nor a kill of the caller's group reach it, and the command
// (the group's leader) gets SIGKILL if the supervisor itself is killed (PR_SET_PDEATHSIG).
#include "exec/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <csignal>

#include "base/io.h"
#include "exec/clone_into.h"
#include "exec/tree_memory.h"

namespace dsh::sandbox::exec::detail {

namespace {

// How often the supervisor lists its children again while ending a tree: the kernel documents
// /proc/<pid>/task/<tid>/children as unreliable while children are being created or exiting.
constexpr int kRelistMs = 20;

// How often the supervisor sums the tree's memory where no cgroup bounds it: a safety bound, not
// an account. Each process is held to the bound by RLIMIT_DATA meanwhile, so between two looks
// the tree passes the bound by at most what its processes allocate in this time.
constexpr int kWatchMs = 100;

// ---- shared helpers (async-signal-safe) ----

void close_quietly(int fd) {
  if (fd >= 0) ::close(fd);
}

void send(int fd, MessageKind kind, int value, int stage = 0) {
  const Message message{kind, value, stage};
  io::write_all(fd, &message, sizeof message);
}

}  // namespace

// Whatever other threads of the caller had open (other runs' pipe ends above all) must not be
// held by this run's processes.
void close_all_except(const std::vector<int>& keep) {
  unsigned first = 0;
  for (const int fd : keep) {
    const auto kept = static_cast<unsigned>(fd);
    if (kept > first) ::close_range(first, kept - 1, 0);
    first = kept + 1;
  }
  ::close_range(first, UINT_MAX, 0);
}

namespace {

// ---- the command, between fork and exec ----

// The command's side runs on the stack spawn_command maps, which ASan does not know. Instrumented
// code calls __asan_handle_no_return before each noreturn call (exec_command, fail_exec, _exit);
// on an unknown stack far from the thread's own, ASan skips the unpoisoning and prints "WARNING:
// ASan is ignoring requested __asan_handle_no_return" (google/sanitizers#189) to fd 2. There the
// supervisor may have its error pipe (it closed the caller's descriptors), so the spawn report it
// read back was that text. These functions end in execve or _exit: nothing needs unpoisoning, so
// they are left uninstrumented. Without a sanitizer the attribute does nothing.
#define DSH_COMMAND_SIDE __attribute__((no_sanitize("address")))

[[noreturn]] DSH_COMMAND_SIDE void fail_exec(int error_fd, SpawnStage stage, int error) {
  const ExecFailure failure{static_cast<std::int32_t>(stage), error};
  io::write_all(error_fd, &failure, sizeof failure);
  ::_exit(127);
}

// The supervisor blocks every signal and the caller may ignore some (SIGPIPE, often): exec keeps
// ignored dispositions and the mask, so both are reset to what a fresh process expects.
void reset_signals() {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);  // EINVAL ones: fine
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);  // NOLINT(concurrency-mt-unsafe): one thread
}

// dup2 in two steps so a source that is also another map's target is never clobbered: first
// every source goes above all targets (close-on-exec), then everything else from 3 up is marked
// close-on-exec (close_range, Linux 5.11), then each lands on its target without the flag.
bool install_fds(SpawnPlan& plan, int& error_fd) {
  int floor = 3;
  for (const FdMapping& map : plan.maps) floor = std::max(floor, map.target + 1);
  const int moved = ::fcntl(error_fd, F_DUPFD_CLOEXEC, floor);
  if (moved < 0) return false;
  error_fd = moved;
  for (std::size_t i = 0; i < plan.maps.size(); ++i) {
    plan.scratch[i] = ::fcntl(plan.maps[i].source, F_DUPFD_CLOEXEC, floor);
    if (plan.scratch[i] < 0) return false;
  }
  if (::close_range(3, UINT_MAX, CLOSE_RANGE_CLOEXEC) != 0) return false;
  for (std::size_t i = 0; i < plan.maps.size(); ++i) {
    if (::dup2(plan.scratch[i], plan.maps[i].target) < 0) return false;
  }
  return true;
}

}  // namespace

// execvp's candidate loop, after chdir so a relative argv[0] is relative to the workdir: go on
// past ENOENT/ENOTDIR-like misses, remember EACCES, stop at anything else.
[[noreturn]] DSH_COMMAND_SIDE void exec_command(SpawnPlan& plan, int error_fd) {
  ::setpgid(0, 0);
  // Into the run's cgroups before anything else runs: every descendant is born inside.
  const std::size_t joined = plan.born_in_cgroup ? 1 : 0;
  for (std::size_t i = joined; i < plan.cgroup_procs.size(); ++i) {
    if (::write(plan.cgroup_procs[i], "0", 1) != 1) fail_exec(error_fd, SpawnStage::kSetup, errno);
  }
  if (plan.has_nproc && ::setrlimit(RLIMIT_NPROC, &plan.nproc) != 0) {
    fail_exec(error_fd, SpawnStage::kSetup, errno);
  }
  if (plan.has_data && ::setrlimit(RLIMIT_DATA, &plan.data) != 0) {
    fail_exec(error_fd, SpawnStage::kSetup, errno);
  }
  // Killed with its supervisor: then nothing could end the tree any more. The supervisor's pid
  // is checked after the prctl, in case it died in between.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || ::getppid() != plan.supervisor) {
    fail_exec(error_fd, SpawnStage::kSetup, ESRCH);
  }
  reset_signals();
  if (!install_fds(plan, error_fd)) fail_exec(error_fd, SpawnStage::kSetup, errno);
  if (!plan.workdir.empty() && ::chdir(plan.workdir.c_str()) != 0) {
    fail_exec(error_fd, SpawnStage::kWorkdir, errno);
  }
  int error = ENOENT;
  bool denied = false;
  for (const char* candidate : plan.candidates) {
    ::execve(candidate, plan.argv.data(), plan.envp.data());
    error = errno;
    if (error == EACCES) {
      denied = true;
    } else if (error != ENOENT && error != ENOTDIR && error != ESTALE && error != ENODEV &&
               error != ETIMEDOUT) {
      break;
    }
  }
  fail_exec(error_fd, SpawnStage::kProgram, denied && error != ENOEXEC ? EACCES : error);
}

// ---- ending the tree ----

namespace {

// SIGKILLs every direct child listed in /proc/thread-self/children (Linux 3.5+ with
// CONFIG_PROC_CHILDREN; the supervisor is single-threaded, so its one thread has them all).
void kill_children() {
  const int fd = ::open("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  std::array<char, 512> buffer{};
  pid_t pid = 0;
  ssize_t n = 0;
  while ((n = ::read(fd, buffer.data(), buffer.size())) > 0) {
    for (ssize_t i = 0; i < n; ++i) {
      const char c = buffer[static_cast<std::size_t>(i)];
      if (c >= '0' && c <= '9') {
        pid = pid * 10 + (c - '0');
      } else if (pid > 0) {
        ::kill(pid, SIGKILL);
        pid = 0;
      }
    }
  }
  if (pid > 0) ::kill(pid, SIGKILL);
  ::close(fd);
}

}  // namespace

bool reap_exited(Leader& leader) {
  while (true) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      if (pid == leader.pid) leader = Leader{pid, true, status};
      continue;
    }
    if (pid < 0 && errno == EINTR) continue;
    return pid < 0 && errno == ECHILD;
  }
}

bool drain_signalfd(int signal_fd) {
  signalfd_siginfo info{};
  bool other = false;
  while (::read(signal_fd, &info, sizeof info) > 0) {
    if (info.ssi_signo != SIGCHLD) other = true;
  }
  return other;
}

void end_tree(Leader& leader, int signal_fd, int kill_fd) {
  if (kill_fd >= 0) (void)!::write(kill_fd, "1", 1);
  while (true) {
    if (!leader.reaped) ::kill(-leader.pid, SIGKILL);
    kill_children();
    if (reap_exited(leader)) return;
    pollfd wake{signal_fd, POLLIN, 0};
    ::poll(&wake, 1, kRelistMs);
    drain_signalfd(signal_fd);
  }
}

// ---- the supervisor ----

namespace {

std::int64_t monotonic_ms() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);  // async-signal-safe
  return static_cast<std::int64_t>(now.tv_sec) * 1000 + now.tv_nsec / 1'000'000;
}

// Whether the tree is over the plan's memory bound; looks at most every kWatchMs.
bool over_memory(SpawnPlan& plan, std::int64_t& next_look) {
  if (plan.watch_memory == 0) return false;
  const std::int64_t now = monotonic_ms();
  if (now < next_look) return false;
  next_look = now + kWatchMs;
  return tree_memory_bytes(plan.watch_queue.get(), plan.watch_capacity) > plan.watch_memory;
}

// Waits for the leader to exit, reaping orphans as they die and obeying control bytes.
void supervise_leader(Leader& leader, SpawnPlan& plan, int signal_fd) {
  bool control_open = true;
  std::int64_t next_look = monotonic_ms() + kWatchMs;
  while (!leader.reaped) {
    std::array<pollfd, 2> fds = {pollfd{control_open ? plan.control_read : -1, POLLIN, 0},
                                 pollfd{signal_fd, POLLIN, 0}};
    if (::poll(fds.data(), fds.size(), plan.watch_memory > 0 ? kWatchMs : -1) < 0) continue;
    // The parent-death signal: the thread waiting for the run is gone.
    const bool orphaned = fds[1].revents != 0 && drain_signalfd(signal_fd);
    reap_exited(leader);
    if (orphaned && !leader.reaped) end_tree(leader, signal_fd, plan.cgroup_kill);
    if (!leader.reaped && over_memory(plan, next_look)) {
      send(plan.status_write, MessageKind::kOverMemory, 0);
      end_tree(leader, signal_fd, plan.cgroup_kill);
      continue;
    }
    if (fds[0].revents == 0 || leader.reaped) continue;
    char command = kKill;
    const ssize_t n = ::read(plan.control_read, &command, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) control_open = false;  // the parent is gone: nobody will ever wait for us
    if (command > 0 && command < NSIG && command != kKill) {
      ::kill(-leader.pid, command);
    } else {
      end_tree(leader, signal_fd, plan.cgroup_kill);
    }
  }
}

struct CommandStart {
  SpawnPlan* plan;
  int error_read;
  int error_write;
};

DSH_COMMAND_SIDE int command_main(void* arg) {
  auto* start = static_cast<CommandStart*>(arg);
  ::close(start->error_read);
  exec_command(*start->plan, start->error_write);
}

// The command shares the supervisor's memory until it execs or exits (CLONE_VM | CLONE_VFORK,
// as posix_spawn does): no copy of the page tables of the caller's image, which a fork would
// make only for execve to drop. The supervisor is suspended meanwhile, and the command touches
// only the plan and its own stack; it has its own descriptor table, signal dispositions, mask,
// rlimits and working directory (no CLONE_FILES, CLONE_SIGHAND or CLONE_FS).
pid_t spawn_command(SpawnPlan& plan, const std::array<int, 2>& error_pipe) {
  constexpr std::size_t kGuard = 4096;
  constexpr std::size_t kStack = std::size_t{64} * 1024;
  void* memory = ::mmap(nullptr, kGuard + kStack, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (memory == MAP_FAILED) return -1;
  ::mprotect(memory, kGuard, PROT_NONE);  // an overflow faults instead of writing our memory
  CommandStart start{&plan, error_pipe[0], error_pipe[1]};
  char* bottom = static_cast<char*>(memory) + kGuard;
  pid_t pid = -1;
  if (plan.cgroup_dir >= 0) {
    // Born in the run's v2 cgroup. Set before: the child reads the plan it shares with us.
    plan.born_in_cgroup = true;
    pid = clone_into_cgroup(command_main, bottom, kStack, &start, plan.cgroup_dir);
    // Refused (see clone_into.h): the command joins through cgroup.procs instead, which holds
    // the same bound; a join that fails runs nothing (exec_command).
    if (pid < 0) plan.born_in_cgroup = false;
  }
  if (pid < 0) {
    char* top = bottom + kStack;  // the stack grows down on x86-64
    pid = ::clone(command_main, top, CLONE_VM | CLONE_VFORK | SIGCHLD, &start);
  }
  const int error = errno;
  ::munmap(memory, kGuard + kStack);
  errno = error;
  return pid;
}

[[noreturn]] void supervise(SpawnPlan& plan) {
  // Every signal is already blocked (fork_supervisor): the caller's handlers never run here.
  // Its own process group: the terminal's SIGINT and a kill of the caller's group miss it. On a
  // terminal its own session (which makes the group too): the caller's controlling terminal is
  // then no terminal of the tree's.
  (void)(plan.new_session ? ::setsid() : ::setpgid(0, 0));
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGCHLD, &dfl, nullptr);  // an ignored SIGCHLD would auto-reap: no statuses
  close_all_except(plan.keep);
  const int status_write = plan.status_write;
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
    send(status_write, MessageKind::kSpawnFailed, errno, static_cast<int>(SpawnStage::kSetup));
    ::_exit(0);
  }
  // SIGHUP is the parent-death signal; blocked, it reaches only the signalfd. The check after
  // the prctl covers a parent that died before it.
  if (plan.parent_death_signal &&
      (::prctl(PR_SET_PDEATHSIG, SIGHUP, 0, 0, 0) != 0 || ::getppid() != plan.parent)) {
    ::_exit(0);
  }
  sigset_t watched;
  sigemptyset(&watched);
  sigaddset(&watched, SIGCHLD);
  sigaddset(&watched, SIGHUP);
  const int signal_fd = ::signalfd(-1, &watched, SFD_CLOEXEC | SFD_NONBLOCK);
  std::array<int, 2> error_pipe{-1, -1};
  if (signal_fd < 0 || ::pipe2(error_pipe.data(), O_CLOEXEC) != 0) {
    send(status_write, MessageKind::kSpawnFailed, errno, static_cast<int>(SpawnStage::kSetup));
    ::_exit(0);
  }
  plan.supervisor = ::getpid();
  const pid_t pid = spawn_command(plan, error_pipe);
  if (pid < 0) {
    send(status_write, MessageKind::kSpawnFailed, errno, static_cast<int>(SpawnStage::kSetup));
    ::_exit(0);
  }
  ::setpgid(pid, pid);  // both sides set it, so no signal can find the group missing
  ::close(error_pipe[1]);
  for (const FdMapping& map : plan.maps) close_quietly(map.source);  // the command has them
  Leader leader{pid};
  const ExecFailure failure = read_exec_failure(error_pipe[0]);
  ::close(error_pipe[0]);
  if (failure.stage >= 0) {
    end_tree(leader, signal_fd, plan.cgroup_kill);
    remove_cgroup_dirs(plan.cgroup_dirs);
    send(status_write, MessageKind::kSpawnFailed, failure.error, failure.stage);
    ::_exit(0);
  }
  send(status_write, MessageKind::kStarted, pid);
  supervise_leader(leader, plan, signal_fd);
  // What the command left behind dies with it, as in a PID namespace; then the cgroups go.
  end_tree(leader, signal_fd, plan.cgroup_kill);
  remove_cgroup_dirs(plan.cgroup_dirs);
  send(status_write, MessageKind::kExited, leader.status);
  ::_exit(0);
}

char* mutable_chars(std::string& text) { return text.data(); }

}  // namespace

ExecFailure read_exec_failure(int error_read) {
  ExecFailure failure{-1, 0};
  const ssize_t n = io::read_some(error_read, &failure, sizeof failure);
  return n == static_cast<ssize_t>(sizeof failure) ? failure : ExecFailure{-1, 0};
}

SpawnPlan::SpawnPlan(const Request& request, std::vector<std::string> env,
                     const std::array<int, 3>& stdio, int control_read_fd, int status_write_fd,
                     const TreeBounds& bounds)
    : argv_storage(request.argv),
      env_storage(std::move(env)),
      workdir(request.workdir),
      control_read(control_read_fd),
      status_write(status_write_fd),
      cgroup_procs(bounds.procs),
      cgroup_dir(bounds.v2_dir),
      cgroup_kill(bounds.kill),
      has_nproc(bounds.nproc.has_value()),
      nproc{bounds.nproc.value_or(0), bounds.nproc.value_or(0)},
      has_data(bounds.data.has_value()),
      data{bounds.data.value_or(0), bounds.data.value_or(0)},
      watch_memory(bounds.watch_memory.value_or(0)),
      parent(::getpid()) {
  if (watch_memory > 0) {
    // One slot per task the tree may have, and room for pids listed twice while they move.
    constexpr std::uint64_t kMostTasks = std::uint64_t{1} << 20;
    watch_capacity = static_cast<std::size_t>(
        std::min(request.bounds.max_processes.value_or(kMostTasks), kMostTasks) * 2);
    watch_queue = std::make_unique_for_overwrite<pid_t[]>(watch_capacity);  // NOLINT(*-c-arrays)
  }
  for (const std::string& dir : bounds.dirs) cgroup_dirs.push_back(dir.c_str());
  std::optional<std::string> path;
  for (const std::string& entry : env_storage) {
    if (entry.starts_with("PATH=")) path = entry.substr(5);
  }
  // A name with a slash is used as given (relative to the workdir); a bare name only through
  // absolute PATH entries: when none is left there is no candidate, and exec fails with ENOENT.
  if (argv_storage[0].find('/') != std::string::npos) {
    candidate_storage.push_back(argv_storage[0]);
  } else {
    candidate_storage = exec_candidates(argv_storage[0], path);
  }
  for (std::string& arg : argv_storage) argv.push_back(mutable_chars(arg));
  argv.push_back(nullptr);
  for (std::string& entry : env_storage) envp.push_back(mutable_chars(entry));
  envp.push_back(nullptr);
  for (const std::string& candidate : candidate_storage) candidates.push_back(candidate.c_str());
  maps = {{stdio[0], 0}, {stdio[1], 1}, {stdio[2], 2}};
  maps.insert(maps.end(), request.fds.begin(), request.fds.end());
  scratch.resize(maps.size());
  keep = {control_read, status_write};
  for (const FdMapping& map : maps) keep.push_back(map.source);
  keep.insert(keep.end(), cgroup_procs.begin(), cgroup_procs.end());
  if (cgroup_dir >= 0) keep.push_back(cgroup_dir);
  if (cgroup_kill >= 0) keep.push_back(cgroup_kill);
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
}

pid_t fork_supervisor(SpawnPlan& plan) {
  // Every signal blocked across the fork: none of the caller's handlers may run in the child.
  sigset_t all;
  sigset_t old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t pid = ::fork();
  if (pid == 0) supervise(plan);
  const int error = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return pid < 0 ? -error : pid;
}

}  // namespace dsh::sandbox::exec::detail
