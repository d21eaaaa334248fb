// SPDX-License-Identifier: Apache-2.0
// SandboxBashExecutor: confines `bash -c COMMAND` (or any argv) through the
// provider, spawns the confined argv directly (no shell in front, so BASH_ENV runs only inside
// the sandbox), and tells three outcomes apart without guessing: the command failed on its own;
// the sandbox denied it (a wider mode would help); the runner failed (the command never ran,
// thrown as SANDBOX_UNAVAILABLE). Runner failure is checked before denial, always.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/provider.h"
#include "exec/exec.h"

namespace dsh::sandbox::consumer {

struct RunSpec {
  std::vector<std::string> argv;  // e.g. {"bash", "-c", COMMAND}
  SandboxExecutionPolicy policy;  // resolved by the caller (policy service, CLI)
  exec::Request process;          // workdir, env, timeout, callbacks, abort; argv is ignored
};

// What the sandbox did to one run. enforcement and backend are absent under
// danger-full-access, which never reaches the provider.
struct SandboxFacts {
  SandboxMode mode = SandboxMode::kReadOnly;
  bool denied = false;
  bool runner_failed = false;  // background only: the foreground throws instead
  std::optional<SandboxEnforcement> enforcement;
  std::string backend;
};

struct RunOutcome {
  // The command's result. When a runner reports that the kernel refused to execute the command
  // itself (the sandbox in place), exit_code is a shell's 127 (not found) or 126, not the
  // runner's own status (docs/consumer.md).
  exec::Result process;
  SandboxFacts sandbox;
};

struct StatusPipes;  // the pipes of the wrap's status channels (bash_executor.cpp)

// A background command with its own wrap's facts, so overlapping jobs under different policies
// or backends each classify against their own dialect, never the latest one.
class BackgroundJob {
 public:
  BackgroundJob(exec::Job job, SandboxMode mode, std::optional<ConfinedArgv> confined,
                std::unique_ptr<StatusPipes> status);
  BackgroundJob(BackgroundJob&&) noexcept;
  BackgroundJob& operator=(BackgroundJob&&) noexcept;
  ~BackgroundJob();

  pid_t pid() const { return job_.pid(); }
  void kill() { job_.kill(); }
  // Blocks until settled. A runner failure is a fact here (runner_failed), not an exception:
  // a background job has no caller waiting to catch it.
  RunOutcome wait();

 private:
  exec::Job job_;
  SandboxMode mode_;
  std::optional<ConfinedArgv> confined_;  // absent under danger-full-access
  std::unique_ptr<StatusPipes> status_;
};

class SandboxBashExecutor {
 public:
  explicit SandboxBashExecutor(SandboxProvider& provider) : provider_(provider) {}

  // Foreground. Throws what the provider throws (SandboxUnavailableError, invalid input)
  // unchanged, and SandboxUnavailableError when the runner cannot be spawned or failed.
  RunOutcome run(const RunSpec& spec);

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

}  // namespace dsh::sandbox::consumer
