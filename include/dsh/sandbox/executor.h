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

#include "dsh/sandbox/modes.h"
#include "dsh/sandbox/provider.h"

namespace dsh::sandbox {

struct RunRequest {
  std::vector<std::string> argv;  // exact argv; a shell command is {"bash", "-c", COMMAND}
  SandboxMode mode = SandboxMode::kReadOnly;
  std::string workspace_root;  // absolute; empty: the working directory
  // No network unless the caller opens it (inherit, or an allow-list).
  NetworkPolicy network = NetworkPolicy::kDeny;
  // Where the command starts: empty, the workspace root; relative, against the workspace root
  // (never against the caller's directory); absolute, as given. The CLI's rule too.
  std::string workdir;
  // Set over the caller's environment after the scrub (DSH_*, and names containing KEY,
  // PASSWORD, SECRET or TOKEN, are dropped from the ambient environment, never from this map).
  std::map<std::string, std::string> env;
  std::optional<double> timeout_ms;  // default 120 000, at most 600 000
  // Live output, called on the thread that runs the command, chunk by chunk.
  std::function<void(std::string_view)> on_stdout;
  std::function<void(std::string_view)> on_stderr;
};

enum class RunEnd {
  kExited,        // the command exited; exit_code is set
  kSignalled,     // a signal ended it; signal is set
  kTimedOut,      // the deadline passed and the tree was ended
  kNotStarted,    // the program or the workdir was refused; not_started says why
  kRunnerFailed,  // the runner failed: the command never ran; runner_failure says why
  kAborted,
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
