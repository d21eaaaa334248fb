// SPDX-License-Identifier: Apache-2.0
// The forked side of a run: a per-command supervisor process that is the child subreaper of the
// command's tree, and the command itself. Everything here runs after fork() in a process that
// may have had many threads, so it calls only async-signal-safe functions (and raw syscalls),
// never allocates, and reads only memory the SpawnPlan prepared before the fork.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exec/bounds.h"
#include "exec/exec.h"

namespace dsh::sandbox::exec::detail {

// Supervisor -> parent, over the status pipe. Each is one write of a few bytes (< PIPE_BUF),
// so it arrives whole.
// kLost is never sent: the parent's own note that the status pipe closed without a kExited.
// kOverMemory comes before the kExited of a tree the supervisor ended for its memory.
enum class MessageKind : std::int32_t {
  kStarted = 1,
  kSpawnFailed = 2,
  kExited = 3,
  kLost = 4,
  kOverMemory = 5
};

struct Message {
  MessageKind kind = MessageKind::kExited;
  std::int32_t value = 0;  // kStarted: pid; kSpawnFailed: errno; kExited: wait status
  std::int32_t stage = 0;  // kSpawnFailed: SpawnStage
};

// Parent -> supervisor, one byte over the control channel (a socket pair): a signal number (1..64)
// to send to the command's process group, or kKill. EOF (the parent died or gave up) means kill
// everything.
inline constexpr char kKill = 'K';  // SIGKILL to the group and to every descendant

struct SpawnPlan {
  // `stdio` are the command's stdin, stdout and stderr; the two pipe ends are the supervisor's.
  SpawnPlan(const Request& request, std::vector<std::string> env, const std::array<int, 3>& stdio,
            int control_read, int status_write, const TreeBounds& bounds);

  std::vector<std::string> argv_storage;
  std::vector<std::string> env_storage;
  std::vector<std::string> candidate_storage;  // execvp-like PATH candidates, or argv[0]
  std::vector<char*> argv;
  std::vector<char*> envp;
  std::vector<const char*> candidates;
  std::string workdir;
  std::vector<FdMapping> maps;  // 0, 1, 2 and the caller's mappings
  std::vector<int> scratch;     // one slot per map, used by the command between fork and exec
  std::vector<int> keep;        // sorted descriptors the supervisor keeps open
  int control_read = -1;
  int status_write = -1;
  // The tree's bounds: the files the command joins its cgroups by before exec, cgroup.kill,
  // the directories the supervisor removes, rlimits for what no cgroup bounds.
  std::vector<int> cgroup_procs;
  // The v2 child the command is born in (clone3 CLONE_INTO_CGROUP), or -1; when it was, the
  // command skips cgroup_procs' first entry (that child's cgroup.procs).
  int cgroup_dir = -1;
  bool born_in_cgroup = false;
  int cgroup_kill = -1;
  std::vector<const char*> cgroup_dirs;
  bool has_nproc = false;
  rlimit nproc{};
  bool has_data = false;
  rlimit data{};
  // Where no cgroup bounds memory: the bound the supervisor holds the whole tree to (0: none),
  // and the pid queue it walks the tree with, allocated before the fork.
  std::uint64_t watch_memory = 0;
  std::unique_ptr<pid_t[]> watch_queue;  // NOLINT(*-avoid-c-arrays): raw storage, no allocation
  std::size_t watch_capacity = 0;
  // The caller's pid and whether the supervisor also ends the tree when the forking thread dies
  // (PR_SET_PDEATHSIG; only when that thread is the one waiting for the run).
  pid_t parent = 0;
  bool parent_death_signal = false;
  // The supervisor leaves the caller's session too (setsid), not only its process group: a run
  // on a terminal, whose tree must not share the caller's controlling terminal.
  bool new_session = false;
  pid_t supervisor = 0;  // set by the supervisor before it forks the command
};

// Closes every descriptor not in the sorted `keep` (close_range, Linux 5.9); async-signal-safe.
void close_all_except(const std::vector<int>& keep);

// Forks the supervisor. Returns its pid, or -errno. The supervisor reads control bytes from
// plan.control_read and writes Messages to plan.status_write.
pid_t fork_supervisor(SpawnPlan& plan);

// The command's side, between fork and exec: its own process group, default signals, the fd
// mappings, the workdir, exec. A failure is written to `error_fd` as an ExecFailure, then 127.
[[noreturn]] void exec_command(SpawnPlan& plan, int error_fd);

struct ExecFailure {
  std::int32_t stage;  // SpawnStage, or -1: none
  std::int32_t error;  // errno
};

// The command's start failure from the close-on-exec pipe exec_command writes to, or stage -1
// once exec succeeded and closed it.
ExecFailure read_exec_failure(int error_read);

// The command (its process group's leader) and, once reaped, its wait status.
struct Leader {
  pid_t pid = 0;
  bool reaped = false;
  int status = 0;
};

// Reaps every child of the calling process that has exited. True when none is left (ECHILD).
bool reap_exited(Leader& leader);

// Empties the signalfd; true when it held anything but SIGCHLD (the parent-death signal).
bool drain_signalfd(int signal_fd);

// Ends the whole tree: cgroup.kill when there is one (`kill_fd`), SIGKILL to the leader's group
// while the leader is unreaped (its pgid cannot be reused then), and to every child of the
// calling thread (/proc/thread-self/children); killed processes' children reparent to the
// subreaper and are killed on the next pass. Done when waitpid says no child is left. The
// caller must be a single-threaded child subreaper.
void end_tree(Leader& leader, int signal_fd, int kill_fd);

}  // namespace dsh::sandbox::exec::detail
