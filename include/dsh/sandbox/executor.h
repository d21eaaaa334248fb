// SPDX-License-Identifier: Apache-2.0
// SandboxExecutor: the library runs a command, not only confines it. It confines the argv
// through a provider, spawns the confined argv (no shell in front), and reports how the run
// ended, telling a runner failure (the command never ran) from a denial (a wider mode would
// help) from the command's own failure, as `dsh-sandbox run` does. The request and the result
// are plain types of this header: nothing of the internal spawning layer shows through.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/call.h"
#include "dsh/sandbox/modes.h"
#include "dsh/sandbox/provider.h"

namespace dsh::sandbox {

namespace detail {
struct CancellationAccess;  // the executor's way to the run's abort signal
}  // namespace detail

// A cancellation the caller triggers from any thread, or from a signal handler (cancel() is
// async-signal-safe): the run it was given to ends its whole command tree (SIGTERM to the
// command's process group, SIGKILL to every process of the tree after a grace) and returns
// RunEnd::kAborted. Copies share one state; a cancellation is never reset, and one may be shared
// by several runs.
class RunCancellation {
 public:
  RunCancellation();
  void cancel() noexcept;
  bool cancelled() const noexcept;

 private:
  friend struct detail::CancellationAccess;
  struct State;
  std::shared_ptr<State> state_;
};

// The bounds of a run's command tree. Unset: the default (4096 tasks; half of the host's
// memory); kUnbounded: no bound. Memory below 16 MiB is refused as bad input.
inline constexpr std::uint64_t kUnbounded = 0;

// One command to run: the call (dsh/sandbox/call.h: argv, mode, workspace, workdir, network,
// path rules, config, session) and how to run it. With `network` set to an allow-list, the
// entries of `network_allow` are canonicalised here; entries with another policy are
// InvalidSandboxInputError.
struct RunRequest : CallRequest {
  // Set over the caller's environment after the scrub (DSH_*, and names containing KEY,
  // PASSWORD, SECRET or TOKEN, are dropped from the ambient environment, never from this map).
  std::map<std::string, std::string> env;
  std::optional<double> timeout_ms;  // default 120 000, at most 600 000
  // Live output, called on the thread that runs the command, chunk by chunk.
  std::function<void(std::string_view)> on_stdout;
  std::function<void(std::string_view)> on_stderr;
  std::optional<std::uint64_t> max_processes;     // tasks of the tree; kUnbounded: none
  std::optional<std::uint64_t> max_memory_bytes;  // memory of the tree; kUnbounded: none
  // Set to end the run's whole tree early (RunEnd::kAborted).
  std::optional<RunCancellation> cancellation;
};

enum class RunEnd {
  kExited,        // the command exited; exit_code is set
  kSignalled,     // a signal ended it; signal is set
  kTimedOut,      // the deadline passed and the tree was ended
  kNotStarted,    // the program or the workdir was refused; not_started says why
  kRunnerFailed,  // the runner failed: the command never ran; runner_failure says why
  kAborted,       // the request's cancellation fired; the whole tree was ended
};

struct RunResult {
  RunEnd end = RunEnd::kExited;
  std::optional<int> exit_code;
  std::optional<int> signal;
  bool denied = false;  // the sandbox refused a file effect: a wider mode would help
  std::string stdout_tail;
  std::string stderr_tail;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  std::string backend;  // e.g. "bwrap+landlock"; empty under danger-full-access
  // The contract's enforcement (ConfinedArgv::enforcement), and the strict reading with what it
  // finds ungoverned (ConfinedArgv::strict_enforcement, ::ungoverned); unset when unconfined.
  std::optional<SandboxEnforcement> enforcement;
  std::optional<SandboxEnforcement> strict_enforcement;
  std::vector<std::string> ungoverned;
  std::string not_started;     // kNotStarted: the refused program or workdir
  std::string runner_failure;  // kRunnerFailed: the runner's line
  std::chrono::milliseconds duration{0};
  // The bounds the tree ran under (unset: none) and what held each ("cgroup2 pids.max",
  // "RLIMIT_NPROC", ...; empty: nothing did).
  std::optional<std::uint64_t> max_processes;
  std::string max_processes_enforced_by;
  std::optional<std::uint64_t> max_memory_bytes;
  std::string max_memory_enforced_by;
  // The status `dsh-sandbox run` exits with: the code, 128+N, 124, 126/127, or 125.
  int exit_status = 0;
};

class SandboxExecutor {
 public:
  // `provider` must outlive the executor (a LocalSandboxProvider, usually).
  explicit SandboxExecutor(SandboxProvider& provider);
  SandboxExecutor(const SandboxExecutor&) = delete;
  SandboxExecutor& operator=(const SandboxExecutor&) = delete;

  // Runs one command in the foreground. Throws SandboxUnavailableError when no backend can
  // confine a confined mode, InvalidSandboxInputError for bad input (a relative workspace, a
  // network policy under danger-full-access, a timeout above the maximum); every other ending,
  // a runner failure included, is a RunResult.
  RunResult run(const RunRequest& request);

 private:
  SandboxProvider& provider_;
};

}  // namespace dsh::sandbox
