// SPDX-License-Identifier: Apache-2.0
// exec: spawns a command without a shell for the bash consumer and `dsh-sandbox run`.
// Each command runs in its own process group under a tiny forked supervisor that
// is the command tree's child subreaper, so whatever the command leaves behind (a setsid'd or
// double-forked descendant) is ended when the command exits, times out or is aborted, or when
// the caller dies, as bwrap's PID namespace ends it. The caller's process is never a subreaper.
// The tree is bounded in processes and memory (a cgroup child where the caller can make one,
// rlimits otherwise), and its output beyond the tails spills to a per-user directory.
// exec is the process engine: every process the libraries start is started here, by run() and
// start() below, by the terminal mode (exec/terminal.h, the interactive shell) or by the detached
// mode (exec/detached.h, a background job's supervisor); tests/unit/exec checks that no other
// library code does.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/result.h"

namespace dsh::sandbox::exec {

using EnvMap = std::map<std::string, std::string>;
using OutputCallback = std::function<void(std::string_view chunk)>;

inline constexpr double kDefaultTimeoutMs = 120'000;
inline constexpr double kMaxTimeoutMs = 600'000;
// The longest deadline the CLI takes (run and start --timeout, tool-schema's timeoutMs): a year,
// far inside steady_clock's range; longer work asks for no deadline at all.
inline constexpr double kMaxDeadlineMs = 365.0 * 86'400'000;
inline constexpr double kDefaultGraceMs = 3'000;
inline constexpr std::size_t kDefaultMaxOutputBytes = 64'000;
inline constexpr std::uint64_t kDefaultMaxSpillBytes = std::uint64_t{64} * 1024 * 1024;
// What kept spill files may take per user before the oldest are removed.
inline constexpr std::uint64_t kDefaultKeptSpillBytes = std::uint64_t{256} * 1024 * 1024;
// Tasks (processes and threads) of one run's tree: far above what a build or a JVM needs, far
// below this kind of host's pid_max (32768) and threads-max.
inline constexpr std::uint64_t kDefaultMaxProcesses = 4096;

// Below this not even a runner starts: a smaller memory bound is refused as bad input.
inline constexpr std::uint64_t kMinMemoryBytes = std::uint64_t{16} * 1024 * 1024;
// Half of the host's physical memory (sysinfo): the other half stays the host's.
std::uint64_t default_max_memory_bytes();

// Bounds on one run's command tree; nullopt: no bound. Enforced by a cgroup child when the
// caller can create one (cgroup v2, or the v1 pids and memory hierarchies of a hybrid host),
// else by rlimits on the command (RLIMIT_NPROC, which counts all of the user's tasks and does
// not bind uid 0; RLIMIT_DATA, per process). Completion::bounds says which.
struct ResourceBounds {
  std::optional<std::uint64_t> max_processes = kDefaultMaxProcesses;
  std::optional<std::uint64_t> max_memory_bytes = default_max_memory_bytes();
  // false: no cgroup for the tree at all, not even for cgroup.kill, so the bounds fall to
  // rlimits; the supervisor alone ends the tree. Moving the command into a cgroup is a cgroup
  // migration, which takes milliseconds on a busy host: too much for a run of a few.
  bool use_cgroup = true;
};

// A cancellation the caller can trigger from any thread, or from a signal handler (an eventfd
// the run polls, so a run blocked in poll wakes at once; abort() is async-signal-safe). One
// signal may be shared by several runs; abort() is idempotent and never reset: the first call's
// `forward` is the signal the command's process group gets first (SIGKILL to the whole tree
// follows after the grace); 0: no signal first, SIGKILL to the whole tree at once.
class AbortSignal {
 public:
  AbortSignal();
  ~AbortSignal();
  AbortSignal(const AbortSignal&) = delete;
  AbortSignal& operator=(const AbortSignal&) = delete;

  void abort(int forward = SIGTERM) noexcept;
  bool aborted() const noexcept;
  int forwarded() const noexcept { return forward_.load(); }
  int fd() const noexcept { return fd_; }

 private:
  int fd_;
  std::atomic<int> forward_{0};
  static_assert(std::atomic<int>::is_always_lock_free, "used from signal handlers");
};

// Makes the caller's descriptor `source` the command's descriptor `target` (like
// posix_spawn_file_actions_adddup2). It is the only way a descriptor above 2 reaches the command.
struct FdMapping {
  int source = -1;
  int target = -1;
};

struct Request {
  std::vector<std::string> argv;  // argv[0] is resolved like execvp, never via the current dir
  std::string workdir;            // empty: the caller's current directory
  EnvMap env;                     // the caller's env, over the scrubbed ambient environment
  EnvMap managed_env;             // highest precedence (the managed dshEnv)
  // false: env and managed_env are the whole environment, with nothing of the caller's ambient
  // environment and none of the non-interactive defaults (a probe's verdict must not depend on
  // the caller's environment).
  bool inherit_env = true;
  std::optional<double> timeout_ms;  // foreground only; default 120 s, capped at max_timeout_ms
  double max_timeout_ms = kMaxTimeoutMs;
  bool no_deadline = false;  // foreground only: the caller asked for none; timeout_ms is unused
  double grace_ms = kDefaultGraceMs;  // SIGTERM to the group, then SIGKILL after this
  std::size_t stdout_max_bytes = kDefaultMaxOutputBytes;  // in-memory tail per stream
  std::size_t stderr_max_bytes = kDefaultMaxOutputBytes;
  // Beyond this the spill is discarded; 0: no spill file at all, the tails are all there is.
  std::uint64_t max_spill_bytes = kDefaultMaxSpillBytes;
  // Where the per-user spill directory (dsh-sandbox-<uid>, 0700) goes; empty: /var/tmp, which
  // every mode of both backends shows (bwrap's workspace-write mounts a private /tmp).
  std::string spill_root;
  // Spill files are removed when the run ends unless kept: keep them only when their path is
  // handed on (the agent render names it). Kept ones are bounded per user by kept_spill_bytes,
  // the oldest removed first.
  bool keep_spill = false;
  std::uint64_t kept_spill_bytes = kDefaultKeptSpillBytes;
  // The command's stdin: a caller's descriptor, or -1 for /dev/null (the default: a command
  // never reads what the caller did not mean to give it).
  int stdin_fd = -1;
  std::vector<FdMapping> fds;
  ResourceBounds bounds;
  OutputCallback on_stdout;  // live chunks, on the thread that pumps (run's, or the job's)
  OutputCallback on_stderr;
  std::shared_ptr<AbortSignal> abort;
};

// Which step of starting the command failed, so a missing workdir is never reported as a
// missing program.
enum class SpawnStage { kProgram, kWorkdir, kSetup };

struct SpawnError {
  SpawnStage stage = SpawnStage::kSetup;
  int error = 0;                // errno
  std::string path;             // argv[0] as requested, the workdir, or empty for setup failures
  std::string message() const;  // e.g. "spawn /opt/runner ENOENT (No such file or directory)"
};

struct StreamOutput {
  std::string tail;  // the last max bytes
  std::uint64_t total_bytes = 0;
  bool truncated = false;  // tail lost bytes at its front
  // The full output (up to max_spill_bytes), a 0600 file; only when Request::keep_spill kept it.
  std::optional<std::string> spill_path;
  bool spill_truncated = false;  // the spill hit max_spill_bytes
};

// How one bound was enforced on a run: the limit and the mechanism, empty when none held it.
struct BoundFact {
  std::optional<std::uint64_t> limit;  // nullopt: no bound was asked for
  std::string enforced_by;  // "cgroup2 pids.max", "cgroup1 memory.limit_in_bytes", "RLIMIT_NPROC"
  // The supervisor ended the tree because its memory went over the bound (memory only, and only
  // where no cgroup holds it: a cgroup's OOM killer ends a process, not the tree, and says so as
  // SIGKILL).
  bool exceeded = false;
};

struct BoundsFacts {
  BoundFact processes;
  BoundFact memory;
  // How the whole tree is ended: "cgroup2 cgroup.kill" on top of the supervisor, or "subreaper"
  // (the supervisor alone: every orphan of the tree reparents to it and is killed by pid).
  std::string tree_kill = "subreaper";
};

struct Completion {
  std::optional<int> exit_code;  // set when the command exited
  std::optional<int> signal;     // set when a signal ended it
  bool timed_out = false;        // timed_out and aborted are exclusive: the first cause wins
  bool aborted = false;
  std::optional<SpawnError> spawn_error;  // the command never ran
  StreamOutput out;
  StreamOutput err;
  std::chrono::milliseconds duration{0};
  BoundsFacts bounds;
};

// Runs to completion, deadline or abort. Throws InvalidSandboxInputError for an empty argv or a
// bad timeout; every failure to start the command is a Completion::spawn_error instead.
Completion run(const Request& request);

// A background command: no deadline. Output is pumped (and callbacks run) on the job's thread.
// When its leader exits, whatever it left behind is ended, as in run().
class Job {
 public:
  Job();
  ~Job();  // kills and waits when the caller never did: nothing outlives the handle
  Job(Job&&) noexcept;
  Job& operator=(Job&&) noexcept;
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  pid_t pid() const;  // the command's pid and process group id; 0 when it never started
  const std::optional<SpawnError>& spawn_error() const;  // known when start() returns
  void kill();        // SIGTERM to the group, then SIGKILL to the whole tree after the grace
  Completion wait();  // blocks until settled; call once

  struct State;

 private:
  explicit Job(std::unique_ptr<State> state);
  friend Job start(const Request& request);
  std::unique_ptr<State> state_;
};

Job start(const Request& request);

// Pure pieces, unit-tested.

// The child's environment as NAME=VALUE strings: `ambient` (NAME=VALUE, first one wins) minus
// names matching /KEY|PASSWORD|SECRET|TOKEN/i and every DSH_* name, then, in increasing
// precedence, NO_COLOR=1 TERM=dumb PAGER=cat GIT_PAGER=cat, `caller`, `managed`.
std::vector<std::string> build_environment(const std::vector<std::string>& ambient,
                                           const EnvMap& caller, const EnvMap& managed);
bool is_scrubbed_name(std::string_view name);
// The environment of a request without inherit_env: `caller`, then `managed`, nothing else.
std::vector<std::string> exact_environment(const EnvMap& caller, const EnvMap& managed);

// The foreground deadline: default 120 s, capped at max_ms; non-positive or non-finite is an
// error ("request.timeoutMs must be a positive finite number").
sandbox::Result<std::chrono::milliseconds> resolve_timeout(std::optional<double> timeout_ms,
                                                           double max_ms = kMaxTimeoutMs);
// Checks the whole request (argv, limits, grace, fd mappings) before anything is spawned.
sandbox::Result<void> validate(const Request& request, bool foreground);

// PATH entries execvp would try for `program`: none when it contains '/', and never an empty or
// relative entry (those mean the current directory); an absent or empty PATH means /bin:/usr/bin.
std::vector<std::string> exec_candidates(const std::string& program,
                                         const std::optional<std::string>& path);

}  // namespace dsh::sandbox::exec
