// SPDX-License-Identifier: Apache-2.0
// `dsh-sandbox shell`: an interactive confined bash for a person, behind a pseudo-terminal of
// ours (src/shell/pty_shell.h). The confined argv is the provider's, as for `run`; inside it,
// util-linux's `setsid --ctty --wait` makes the pty (the inherited stdin) the shell's controlling
// terminal after the runner's own new session (bwrap --new-session), so job control works.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/jobs_and_shell.h"
#include "cli/run_context.h"
#include "consumer/render.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/roots.h"
#include "policy/git_guard.h"
#include "shell/pty_shell.h"

namespace dsh::sandbox::cli {

namespace {

// setsid(1) from util-linux, at a fixed path (never the caller's PATH): the first program the
// sandbox runs for the shell. A missing one refuses the shell, nothing runs.
std::string setsid_program() {
  for (const char* path : {"/usr/bin/setsid", "/bin/setsid"}) {
    if (::access(path, X_OK) == 0) return path;
  }
  throw InvalidSandboxInputError(
      "shell: util-linux's setsid (/usr/bin/setsid) is missing; it gives the confined shell its "
      "terminal: install util-linux");
}

// The shell's launch before confinement: where it starts, its argv, bounds and time limit.
shell::ShellLaunch shell_launch(const RunInvocation& run, const SandboxExecutionPolicy& policy,
                                const CallContext& call, double timeout_seconds) {
  shell::ShellLaunch launch;
  launch.workdir = call_workdir(run, policy, call);
  launch.argv = run.argv;
  launch.bounds = run.bounds;
  if (timeout_seconds > 0) {
    launch.timeout =
        std::chrono::milliseconds(static_cast<std::int64_t>(std::min(timeout_seconds, 1e9) * 1000));
  }
  return launch;
}

// One line per shell, as per run: the shell has no evidence channel, so no denial is claimed.
void record_shell(const CallContext& call, SandboxRunEvent event, const shell::ShellEnd& end) {
  if (!call.session) return;
  event.exit_code = end.exit_code;
  if (end.signal) event.signal = consumer::signal_name(*end.signal);
  event.timed_out = end.timed_out;
  try {
    record_run(*call.session, event);
  } catch (const std::exception& error) {
    fmt::print(stderr, "dsh-sandbox: the session log did not record this shell: {}\n",
               error.what());
  }
}

}  // namespace

int shell(const Options& given, double timeout_seconds) {
  std::optional<CallContext> call;
  std::vector<std::string> argv;
  SandboxMode mode = SandboxMode::kReadOnly;
  try {
    if (::isatty(STDIN_FILENO) == 0) {
      throw InvalidSandboxInputError(
          "shell: standard input is not a terminal; the shell is for a person at a terminal "
          "(use run -c COMMAND or start for anything else)");
    }
    Options options = given;
    options.command.clear();
    options.argv = {setsid_program(), "--ctty", "--wait", "bash", "--noprofile", "--norc", "-i"};
    const RunInvocation run = run_invocation(options).value();
    argv = run.argv;
    call = call_context(run);
    const Setup setup = load_setup(run.config_path, call->untrusted);
    const SandboxExecutionPolicy policy = resolve_policy(options, run, setup, *call);
    mode = policy.mode;
    admit(*call, policy);
    shell::ShellLaunch launch = shell_launch(run, policy, *call, timeout_seconds);
    SandboxRunEvent event;
    event.argv = run.argv;
    event.mode = policy.mode;
    event.workspace_root = policy.workspace_root;
    std::optional<policy::GitGuard> git;
    if (const auto sandbox_policy = to_sandbox_policy(policy)) {
      LocalSandboxProvider provider = call_provider(setup, *call);
      ConfinedArgv confined;
      // One walk of the writable roots for the plan and the git check taken before the shell.
      const policy::GitWalkScope walk;
      try {
        confined = provider.confine(ConfineRequest{run.argv, *sandbox_policy, launch.workdir, false,
                                                   true, run.bounds.max_memory_bytes});
      } catch (const SandboxUnavailableError&) {
        provider.invalidate_verdict();
        throw;
      }
      git = policy::GitGuard::for_run(policy);
      launch.argv = confined.argv;
      launch.provided = confined.provided_fds;
      event.backend = confined.backend;
      event.enforcement = std::string(wire_name(confined.enforcement));
    }
    const shell::ShellEnd end = shell::run_shell(launch, STDIN_FILENO, STDOUT_FILENO);
    // After the session's whole tree is gone, as after run (each path is already quoted).
    if (git) {
      for (const std::string& line : git->settle()) {
        fmt::print(stderr, "dsh-sandbox: git state: {}\n", line);
      }
    }
    record_shell(*call, std::move(event), end);
    return end.status;
  } catch (const SandboxError& error) {
    audit_refusal(call ? &*call : nullptr, argv, mode, error);
    return fail(error.what());
  }
}

}  // namespace dsh::sandbox::cli
