// SPDX-License-Identifier: Apache-2.0
// SandboxBashExecutor: confines `bash -c COMMAND` (or any argv) through the
// provider, spawns the confined argv directly (no shell in front, so BASH_ENV runs only inside
// the sandbox), and tells the outcomes apart without guessing: the command failed on its own;
// the sandbox denied it (a wider mode would help); the runner failed (the command never ran; a
// RunnerFailed status, thrown as SANDBOX_UNAVAILABLE by run_or_throw). Runner failure is checked
// before denial, always. Foreground and background runs return the same RunOutcome.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "dsh/sandbox/denial.h"
#include "dsh/sandbox/provider.h"
#include "exec/exec.h"
#include "policy/git_guard.h"

namespace dsh::sandbox::consumer {

struct RunSpec {
  std::vector<std::string> argv;  // e.g. {"bash", "-c", COMMAND}
  SandboxExecutionPolicy policy;  // resolved by the caller (policy service, CLI)
  exec::Request process;          // workdir, env, timeout, callbacks, abort; argv is ignored
  // Kernel evidence of refusals where the backend gives it (docs/evidence-and-network.md); off:
  // stderr inference only, for callers who want the last microsecond.
  bool denial_evidence = true;
  // The roots earlier confined runs could write (ConfineRequest::earlier_writable_roots); unset:
  // the provider's own.
  std::optional<std::vector<std::string>> earlier_writable_roots;
};

// What the sandbox did to one run. enforcement and backend are absent under
// danger-full-access, which never reaches the provider.
struct SandboxFacts {
  SandboxMode mode = SandboxMode::kReadOnly;
  bool denied = false;  // a wider mode would help (never with a runner failure or a non-start)
  // Where `denied` came from (absent when nothing was classified: danger-full-access, a runner
  // failure, a non-start), and the refusals the kernel side recorded.
  std::optional<DenialSource> denial_source;
  DenialEvidence denials;
  std::string workspace_root;  // the policy's, for naming the narrowest change
  // The policy's network allow-list entries (empty without one): learn proposes them with the
  // refused names added.
  std::vector<std::string> network_allow;
  std::optional<SandboxEnforcement> enforcement;  // ConfinedArgv::enforcement, the contract's
  // ConfinedArgv::strict_enforcement and ::ungoverned: the strict reading and its gaps.
  std::optional<SandboxEnforcement> strict_enforcement;
  std::vector<std::string> ungoverned;
  std::string backend;              // for JSON: the label of `layers`
  std::vector<RunnerLayer> layers;  // the runners that confined it, outermost first
  // What the check after a workspace-write run undid in the git state, or named (a repository
  // the run created), one line each, paths quoted (policy/git_guard.h).
  std::vector<std::string> git_undone;
};

// How one run ended: exactly one of these.
namespace status {
// The command exited with `code`. When a runner reports that the kernel refused to execute the
// command itself (the sandbox in place), the code is a shell's 127 (not found) or 126, not the
// runner's own status (docs/contract.md).
struct Exited {
  int code = 0;
  bool operator==(const Exited&) const = default;
};
// A signal ended the command.
struct Signalled {
  int signal = 0;
  bool operator==(const Signalled&) const = default;
};
// The deadline passed and the tree was ended; how the command itself ended, when it did.
struct TimedOut {
  std::optional<int> exit_code;
  std::optional<int> signal;
  bool operator==(const TimedOut&) const = default;
};
// The caller's abort signal ended the run (or came before anything started).
struct Aborted {
  std::optional<int> exit_code;
  std::optional<int> signal;
  bool operator==(const Aborted&) const = default;
};
// The command never ran: the program or the workdir was refused (by exec, or by the runner's
// own view of the filesystem), at `stage` with `error` (an errno).
struct NotStarted {
  exec::SpawnStage stage = exec::SpawnStage::kSetup;
  int error = 0;
  std::string path;
  std::string message() const;  // e.g. "spawn /opt/x ENOENT (No such file or directory)"
  bool operator==(const NotStarted&) const = default;
};
// The runner failed (could not be spawned, or reported its own failure): the command never ran.
struct RunnerFailed {
  std::string detail;  // the runner's line, or the spawn error
  // The runner's own exit code when it ran and exited (a spawn failure has none): the reason a
  // background job shows, rather than the reserved 125.
  std::optional<int> exit_code;
  bool operator==(const RunnerFailed&) const = default;
};
}  // namespace status

using RunStatus = std::variant<status::Exited, status::Signalled, status::TimedOut, status::Aborted,
                               status::NotStarted, status::RunnerFailed>;

// std::visit(Overloaded{[](const status::Exited&) {...}, ...}, status): one lambda per status.
template <typename... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <typename... F>
Overloaded(F...) -> Overloaded<F...>;

// The command's own exit code and the signal that ended it, whatever the status: what the
// session log and `--json` report as exitCode and signal.
std::optional<int> exit_code_of(const RunStatus& status);
std::optional<int> signal_of(const RunStatus& status);

// One run, foreground or background: one status, the command's output and the run's facts.
struct RunOutcome {
  RunStatus status = status::Exited{};
  exec::StreamOutput out;
  exec::StreamOutput err;
  std::chrono::milliseconds duration{0};
  exec::BoundsFacts bounds;
  SandboxFacts sandbox;
};

// The outcome of a settled exec run: `runner_failure`, when set, wins over everything exec
// reported; then a start failure, a timeout, an abort, a signal, an exit.
RunOutcome outcome_of(exec::Completion completion, SandboxFacts sandbox,
                      std::optional<std::string> runner_failure);

struct StatusPipes;  // the pipes of the wrap's status channels (bash_executor.cpp)

// A background command with its own wrap's facts, so overlapping jobs under different policies
// or backends each classify against their own dialect, never the latest one.
class BackgroundJob {
 public:
  BackgroundJob(exec::Job job, SandboxMode mode, std::optional<ConfinedArgv> confined,
                std::unique_ptr<StatusPipes> status, std::optional<policy::GitGuard> git,
                std::string memory_note = {});
  BackgroundJob(BackgroundJob&&) noexcept;
  BackgroundJob& operator=(BackgroundJob&&) noexcept;
  ~BackgroundJob();

  pid_t pid() const { return job_.pid(); }
  void kill() { job_.kill(); }
  // Blocks until settled, then makes the check after a workspace-write run (git_undone), as
  // run() does. A runner failure is a status (RunnerFailed), as in the foreground.
  RunOutcome wait();

 private:
  exec::Job job_;
  SandboxMode mode_;
  std::optional<ConfinedArgv> confined_;  // absent under danger-full-access
  std::unique_ptr<StatusPipes> status_;
  std::optional<policy::GitGuard> git_;  // taken before the job started
  std::string memory_note_;              // what the wrap adds to the memory bound's facts
};

class SandboxBashExecutor {
 public:
  explicit SandboxBashExecutor(SandboxProvider& provider) : provider_(provider) {}

  // Foreground. Throws what the provider throws (SandboxUnavailableError, invalid input)
  // unchanged; a runner that cannot be spawned or failed is the RunnerFailed status.
  RunOutcome run(const RunSpec& spec);

  // run() with the seam's exception contract: a RunnerFailed status is thrown as
  // SandboxUnavailableError carrying the runner's detail; every other status is returned.
  RunOutcome run_or_throw(const RunSpec& spec);

  // Background. Throws what the provider throws, and SandboxUnavailableError when the runner
  // cannot be spawned; any later runner failure is reported by BackgroundJob::wait().
  BackgroundJob start(const RunSpec& spec);

 private:
  SandboxProvider& provider_;
};

// True when the exit is nonzero (not a signal) and the stderr tail contains any signature,
// case-insensitively. A clean exit or a signal death is never a denial.
bool matches_signature(std::optional<int> exit_code, std::string_view stderr_text,
                       std::span<const std::string> signatures);

// on exec's structured error: the runner program itself (or its interpreter) is
// missing or not executable, while the workdir is independently usable.
bool is_runner_spawn_failure(const exec::SpawnError& error, std::string_view runner,
                             const std::string& workdir);

// The runner failure detail of a runner that could not be started, as the reference gives it
// (String() of Node's spawn error): "Error: spawn <runner> <CODE>", e.g.
// "Error: spawn /opt/runner ENOENT".
std::string runner_spawn_failure_detail(const exec::SpawnError& error, std::string_view runner);

}  // namespace dsh::sandbox::consumer
