// SPDX-License-Identifier: Apache-2.0
// `dsh-sandbox shell`: an interactive confined bash for a person, behind a pseudo-terminal of
// ours (src/shell/pty_shell.h). The confined argv is the provider's, as for `run`; inside it,
// util-linux's `setsid --ctty --wait` makes the pty (the inherited stdin) the shell's controlling
// terminal after the runner's own new session (bwrap --new-session), so job control works.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/call.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "consumer/render.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/roots.h"
#include "policy/git_guard.h"
#include "policy/session_watch.h"
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
shell::ShellLaunch shell_launch(const RunInvocation& run, const plan::CallPlan& call,
                                double timeout_seconds) {
  shell::ShellLaunch launch;
  launch.workdir = call.workdir;
  launch.argv = run.argv;
  launch.bounds = run.bounds;
  if (timeout_seconds > 0) {
    launch.timeout =
        std::chrono::milliseconds(static_cast<std::int64_t>(std::min(timeout_seconds, 1e9) * 1000));
  }
  return launch;
}

// One line per shell, as per run: the shell has no evidence channel, so no denial is claimed.
void record_shell(const plan::CallPlan& call, SandboxRunEvent event, const shell::ShellEnd& end) {
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

// The shell's argv before confinement, for a person at a terminal only.
void check_shell_flags(Options& options) {
  if (options.timeout_given &&
      !(options.shell_timeout_seconds > 0 && std::isfinite(options.shell_timeout_seconds))) {
    throw InvalidSandboxInputError("shell: --timeout must be a positive number of seconds");
  }
  if (::isatty(STDIN_FILENO) == 0) {
    throw InvalidSandboxInputError(
        "shell: standard input is not a terminal; the shell is for a person at a terminal "
        "(use run -c COMMAND or start for anything else)");
  }
  options.command.clear();
  options.argv = {setsid_program(), "--ctty", "--wait", "bash", "--noprofile", "--norc", "-i"};
}

// The shell's argv with its prompt marked as confined: "[sandbox:MODE] " before the caller's own
// PS1 (else user@host:dir$), set through env(1) at a fixed path. bash runs with
// --norc, so no startup file of the person's is read, and none is overridden or changed.
std::vector<std::string> prompted_argv(std::vector<std::string> argv, SandboxMode mode) {
  const char* own = std::getenv("PS1");  // NOLINT(concurrency-mt-unsafe): one thread here
  const std::string prompt = fmt::format("PS1=[sandbox:{}] {}", wire_name(mode),
                                         own != nullptr && *own != '\0' ? own : R"(\u@\h:\w\$ )");
  const auto bash = std::find(argv.begin(), argv.end(), "bash");
  if (bash != argv.end() && ::access("/usr/bin/env", X_OK) == 0) {
    argv.insert(bash, {"/usr/bin/env", prompt});
  }
  return argv;
}

// The confined argv in `launch` (and the backend in `event`); the git state the shell's run
// must leave as it found, taken before the shell starts.
std::optional<policy::GitGuard> confine_shell(const Call& call, shell::ShellLaunch& launch,
                                              SandboxRunEvent& event) {
  const auto sandbox_policy = to_sandbox_policy(call.plan->policy);
  if (!sandbox_policy) return std::nullopt;
  LocalSandboxProvider provider = plan::plan_provider(*call.plan);
  ConfinedArgv confined;
  // One walk of the writable roots for the plan and the git check taken before the shell.
  const policy::GitWalkScope walk;
  try {
    confined = provider.confine(ConfineRequest{call.run.argv, *sandbox_policy, launch.workdir,
                                               false, true, call.run.bounds.max_memory_bytes});
  } catch (const SandboxUnavailableError&) {
    provider.invalidate_verdict();
    throw;
  }
  std::optional<policy::GitGuard> git = policy::GitGuard::for_run(call.plan->policy, confined);
  launch.argv = confined.argv;
  launch.provided = confined.provided_fds;
  event.backend = confined.backend;
  event.enforcement = std::string(wire_name(confined.enforcement));
  return git;
}

// The shell of a session runs only as long as the session allows its mode: the watch of the
// session's log (policy/session_watch.h), asked by the shell's relay.
shell::ShellGuard session_guard(policy::SessionWatch& watch) {
  return {watch.fd(), policy::SessionWatch::kPollInterval, [&watch] {
            const policy::SessionNews news = watch.check();
            return shell::GuardNews{news.ends(),
                                    policy::session_news_text(news, watch.running(), "shell")};
          }};
}

int shell_call(Call& call) {
  plan::admit(*call.plan, call.plan->policy, "dsh-sandbox");
  call.run.argv = prompted_argv(call.run.argv, call.plan->policy.mode);
  shell::ShellLaunch launch =
      shell_launch(call.run, *call.plan, call.options.shell_timeout_seconds);
  // Set up before the shell starts: a session log that cannot be watched refuses the shell.
  std::optional<policy::SessionWatch> watch;
  if (call.plan->session && call.plan->session_start) {
    watch.emplace(*call.plan->session, call.plan->policy.mode, *call.plan->session_start);
    launch.guard = session_guard(*watch);
  }
  SandboxRunEvent event;
  event.argv = call.run.argv;
  event.mode = call.plan->policy.mode;
  event.workspace_root = call.plan->policy.workspace_root;
  const std::optional<policy::GitGuard> git = confine_shell(call, launch, event);
  const shell::ShellEnd end = shell::run_shell(launch, STDIN_FILENO, STDOUT_FILENO);
  // On the person's terminal, its settings restored: why the shell is gone.
  if (end.ended_by) fmt::print(stderr, "dsh-sandbox: {}\n", *end.ended_by);
  // After the session's whole tree is gone, as after run (each path is already quoted).
  if (git) {
    for (const std::string& line : git->settle()) {
      fmt::print(stderr, "dsh-sandbox: git state: {}\n", line);
    }
  }
  record_shell(*call.plan, std::move(event), end);
  return end.status;
}

}  // namespace

int shell(const Options& options) {
  return prepared_call(options, check_shell_flags, shell_call, true);
}

}  // namespace dsh::sandbox::cli
