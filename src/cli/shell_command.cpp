// SPDX-License-Identifier: Apache-2.0
// `dsh-sandbox shell`: an interactive confined bash for a person, behind a pseudo-terminal of
// ours (src/shell/pty_shell.h). The confined argv is the provider's, as for `run`; inside it,
// util-linux's `setsid --ctty --wait` makes the pty (the inherited stdin) the shell's controlling
// terminal after the runner's own new session (bwrap --new-session), so job control works.
#include <unistd.h>

#include <array>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/jobs_and_shell.h"
#include "cli/run_context.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/roots.h"
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

}  // namespace

int shell(const Options& given) {
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
    const CallContext call = call_context(run);
    const Setup setup = load_setup(run.config_path, call.untrusted);
    const SandboxExecutionPolicy policy = resolve_policy(run, setup, call);
    if (const auto confined = to_confined_mode(policy.mode)) {
      require_trusted_self(call.untrusted, *confined);
    }
    record_writable_workspace(call.workspace, policy.mode, call.untrusted);
    shell::ShellLaunch launch;
    launch.workdir = working_directory();
    launch.argv = run.argv;
    if (const auto sandbox_policy = to_sandbox_policy(policy)) {
      LocalSandboxProvider provider = make_provider(setup.provider);
      ConfinedArgv confined;
      try {
        confined = provider.confine(ConfineRequest{run.argv, *sandbox_policy, launch.workdir});
      } catch (const SandboxUnavailableError&) {
        provider.invalidate_verdict();
        throw;
      }
      launch.argv = confined.argv;
      launch.provided = confined.provided_fds;
    }
    return shell::run_shell(launch, STDIN_FILENO, STDOUT_FILENO);
  } catch (const SandboxError& error) {
    return fail(error.what());
  }
}

}  // namespace dsh::sandbox::cli
