// SPDX-License-Identifier: Apache-2.0
// `dsh-sandbox run`: the bash consumer as a command. Exit status: the command's own, 128+N for
// a signal, 124 on timeout; 125 with one "dsh-sandbox: " line when the sandbox is unavailable,
// its runner failed, or the input was bad (the command did not run); 128+N when `run` itself
// got SIGINT, SIGTERM, SIGHUP or SIGPIPE (the tree is ended first, and --json still reports).
// With --learn it then prints the narrowest policy that would have allowed what was refused.
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/call.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/run_io.h"
#include "cli/run_retry.h"
#include "consumer/audit.h"
#include "consumer/bash_executor.h"
#include "consumer/denials.h"
#include "consumer/render.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/escalation.h"

namespace dsh::sandbox::cli {

namespace {

using consumer::RunOutcome;
using consumer::RunSpec;
namespace status = consumer::status;

// One audit line per run; a log that cannot take it must not turn a finished run into an error.
void audit_run(const plan::CallPlan& call, const RunSpec& spec, const RunOutcome& outcome) {
  if (!call.session) return;
  const SandboxRunEvent event = consumer::run_event(spec, outcome);
  try {
    record_run(*call.session, event);
  } catch (const std::exception& error) {
    fmt::print(stderr, "dsh-sandbox: the session log did not record this run: {}\n", error.what());
  }
}

// The command's stdin: run's own when it is not a terminal (a pipe, a file), else /dev/null.
// A terminal stays closed: the command runs in its own process group, not the terminal's
// foreground one, so a read would stop it with SIGTTIN until the deadline, and a terminal it
// could read is one it could try to inject into.
int command_stdin(StdinMode mode) {
  if (mode == StdinMode::kClose || ::fcntl(STDIN_FILENO, F_GETFD) < 0) return -1;
  const bool terminal = ::isatty(STDIN_FILENO) != 0;
  if (mode == StdinMode::kInherit && terminal) {
    throw InvalidSandboxInputError(
        "run: --stdin inherit: standard input is a terminal, which a confined command never "
        "reads (it would be stopped by SIGTTIN, and could inject into it); give the input "
        "through a pipe or a file, or use --stdin close");
  }
  return terminal ? -1 : STDIN_FILENO;
}

// A person who typed `run -- python3` at a terminal gets an interpreter that reads /dev/null and
// ends at once: say once where the interactive way is. Not for a harness (--json, --json-lines,
// --format agent), nor for a caller who chose what stdin is (--stdin).
void hint_shell(const RunInvocation& run) {
  if (run.stdin_given || run.json || run.json_lines || run.agent) return;
  if (::isatty(STDIN_FILENO) == 0) return;
  fmt::print(stderr,
             "dsh-sandbox: standard input is a terminal, which a confined command never reads "
             "(it gets /dev/null); for an interactive confined shell use `dsh-sandbox shell`, and "
             "give input to run through a pipe or a file\n");
}

// With --env or --unset-env, the command's whole environment computed here as exec would (the
// scrub and the non-interactive defaults), plus each --env NAME with its value in dsh-sandbox's
// own environment, minus each --unset-env NAME; `process` then inherits nothing else. Throws
// InvalidSandboxInputError for an --env NAME that is not set.
void apply_environment_options(const RunInvocation& run, exec::Request& process) {
  if (run.env_pass.empty() && run.env_unset.empty()) return;
  exec::EnvMap passed;
  for (const std::string& name : run.env_pass) {
    const char* value = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe): one thread
    if (value == nullptr) {
      throw InvalidSandboxInputError(fmt::format(
          "run: --env {0}: {0} is not set in dsh-sandbox's environment; set it, or drop --env {0}",
          name));
    }
    passed.insert_or_assign(name, value);
  }
  std::vector<std::string> ambient;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    ambient.emplace_back(*entry);
  }
  exec::EnvMap whole;
  for (const std::string& entry : exec::build_environment(ambient, passed, process.env)) {
    const std::size_t eq = entry.find('=');
    whole.insert_or_assign(entry.substr(0, eq), entry.substr(eq + 1));
  }
  for (const std::string& name : run.env_unset) whole.erase(name);
  process.env = std::move(whole);
  process.inherit_env = false;
}

RunSpec make_spec(const RunInvocation& run, const plan::CallPlan& call,
                  SandboxExecutionPolicy policy, const Interrupts& interrupts) {
  RunSpec spec;
  spec.argv = run.argv;
  spec.process.workdir = call.workdir;
  spec.policy = std::move(policy);
  spec.process.timeout_ms = run.timeout_ms;
  spec.process.abort = interrupts.abort();
  spec.process.stdin_fd = command_stdin(run.stdin_mode);
  spec.process.bounds = run.bounds;
  spec.denial_evidence = run.evidence;
  // Only the agent render hands the spill files' paths on; every other form removes them.
  spec.process.keep_spill = run.agent;
  apply_environment_options(run, spec.process);
  return spec;
}

// One run; for a person, its output live on run's own stdout and stderr, which no reader can
// make wait past the deadline.
RunOutcome run_once(const RunInvocation& run, consumer::SandboxBashExecutor& executor,
                    RunSpec& spec) {
  if (run.json || run.agent) return executor.run(spec);
  std::optional<LiveOutput> out;
  std::optional<LiveOutput> err;
  if (run.json_lines) {
    print_started(spec);
    spec.process.on_stdout = [](std::string_view chunk) { print_output("stdout", chunk); };
    spec.process.on_stderr = [](std::string_view chunk) { print_output("stderr", chunk); };
  } else {
    const auto deadline =
        std::chrono::steady_clock::now() +
        std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(*spec.process.timeout_ms)));
    out.emplace(STDOUT_FILENO, deadline, spec.process.abort->fd());
    err.emplace(STDERR_FILENO, deadline, spec.process.abort->fd());
    spec.process.on_stdout = [&out](std::string_view chunk) { out->write(chunk); };
    spec.process.on_stderr = [&err](std::string_view chunk) { err->write(chunk); };
  }
  RunOutcome outcome = executor.run(spec);
  spec.process.on_stdout = nullptr;
  spec.process.on_stderr = nullptr;
  return outcome;
}

void report(const RunInvocation& run, const RunSpec& spec, const RunOutcome& outcome,
            int interrupted, const nlohmann::json& policy_view) {
  const std::optional<std::string> failure = consumer::start_failure(outcome);
  if (run.verbose) fmt::print(stderr, "dsh-sandbox: {}\n", backend_explanation(outcome));
  // In every form, before the result: what the run did to git state is the person's to know
  // before their next git command (each path is already quoted).
  for (const std::string& line : outcome.sandbox.git_undone) {
    fmt::print(stderr, "dsh-sandbox: git state: {}\n", line);
  }
  // A person's only sign of why the tree died (its status is SIGKILL's); the other forms carry it.
  if (outcome.bounds.memory.exceeded && !run.json && !run.json_lines && !run.agent) {
    fmt::print(stderr, "dsh-sandbox: {}\n",
               consumer::memory_exceeded_marker(outcome.bounds.memory));
  }
  if (run.json || run.json_lines) {
    print_run_result(run, spec, outcome, interrupted, policy_view);
  } else if (run.agent) {
    const bool advertised = !wider_modes(outcome.sandbox.mode).empty();
    const auto timeout_ms = static_cast<long long>(run.timeout_ms);
    fmt::print("{}\n", failure ? consumer::render_error_for_agent(*failure)
                               : consumer::render_for_agent(outcome, advertised, timeout_ms));
    return;
  }
  // On stderr with --json too, as a runner failure's line is: the object has no field for it.
  if (failure) fmt::print(stderr, "dsh-sandbox: {}\n", *failure);
}

// run --learn, on stderr (stdout is the command's, or the JSON object): the narrowest changes
// that would have allowed what the kernel side recorded.
void print_learned(const RunOutcome& outcome) {
  if (outcome.sandbox.denial_source != DenialSource::kKernel) {
    fmt::print(stderr, "dsh-sandbox: learn: this backend gives no evidence of refusals\n");
    return;
  }
  const std::vector<std::string> changes =
      consumer::narrowest_changes(outcome.sandbox, outcome.sandbox.workspace_root);
  if (changes.empty()) {
    fmt::print(stderr, "dsh-sandbox: learn: nothing was refused; the current policy suffices\n");
    return;
  }
  for (const std::string& change : changes) fmt::print(stderr, "dsh-sandbox: learn: {}\n", change);
}

// For a person: the denial markers right after the command's own stderr, before any question.
void mark_denial(const RunInvocation& run, const RunOutcome& outcome) {
  if (run.json || run.json_lines || run.agent) return;
  for (const std::string& marker : consumer::denial_markers(outcome.sandbox)) {
    fmt::print(stderr, "{}\n", marker);
  }
}

// The command did not run: 125 and one line, plus the machine-readable forms when asked for.
// runnerFailed only when a runner ran and failed; a refusal before anything ran (the caller's
// choice, a backend that cannot honour the call) says so in `refusal` instead.
int not_run(const RunInvocation& run, const RunSpec& spec, const SandboxError& error,
            int interrupted) {
  if (run.agent) fmt::print("{}\n", consumer::render_error_for_agent(error.what()));
  if (run.json || run.json_lines) {
    print_not_run(run, spec, error, interrupted);
    set_json_errors(false);  // the result object says it already
  }
  return fail(error.what(), error.code());
}

// A runner failure as the seam's error, for the refusal's audit line and its message.
std::optional<SandboxUnavailableError> runner_failure(const RunOutcome& outcome) {
  const auto* failed = std::get_if<status::RunnerFailed>(&outcome.status);
  if (failed == nullptr) return std::nullopt;
  return SandboxUnavailableError(*to_confined_mode(outcome.sandbox.mode), failed->detail);
}

// One run of the command into `outcome`: audited and its denial marked, or the runner's failure.
std::optional<SandboxUnavailableError> run_audited(const RunInvocation& run,
                                                   const plan::CallPlan& call,
                                                   consumer::SandboxBashExecutor& executor,
                                                   RunSpec& spec, RunOutcome& outcome) {
  outcome = run_once(run, executor, spec);
  std::optional<SandboxUnavailableError> refused = runner_failure(outcome);
  if (!refused) {
    audit_run(call, spec, outcome);
    mark_denial(run, outcome);
  }
  return refused;
}

// The run, and the one retry a person may approve after it; the runner's failure, if any.
std::optional<SandboxUnavailableError> run_with_retry(Call& call, const Interrupts& interrupts,
                                                      consumer::SandboxBashExecutor& executor,
                                                      RunSpec& spec, RunOutcome& outcome) {
  plan::admit(*call.plan, spec.policy, "dsh-sandbox");
  hint_shell(call.run);
  std::optional<SandboxUnavailableError> refused =
      run_audited(call.run, *call.plan, executor, spec, outcome);
  std::optional<RetryOffer> retry;
  if (!refused && interrupts.signal() == 0 && !call.run.learn) {
    retry = approved_retry(call.run, spec, outcome);
  }
  if (retry && interrupts.signal() == 0) {
    apply_retry(spec, *retry);
    call.audited_mode = retry->mode;
    plan::admit(*call.plan, spec.policy, "dsh-sandbox");
    refused = run_audited(call.run, *call.plan, executor, spec, outcome);
  }
  return refused;
}

int run_call(Call& call) {
  const RunInvocation& run = call.run;
  const Interrupts interrupts;
  // Only a JSON result shows it, and it walks the writable roots for their git state.
  const nlohmann::json policy_view =
      run.json || run.json_lines ? run_policy_view(call.plan->policy) : nlohmann::json();
  RunSpec spec = make_spec(run, *call.plan, call.plan->policy, interrupts);
  LocalSandboxProvider provider = plan::plan_provider(*call.plan);
  consumer::SandboxBashExecutor executor(provider);
  RunOutcome outcome;
  std::optional<SandboxUnavailableError> refused;
  try {
    refused = run_with_retry(call, interrupts, executor, spec, outcome);
  } catch (const SandboxUnavailableError& error) {
    refused = error;  // the provider refused: no usable backend, or a runner it cannot trust
  } catch (const InvalidSandboxInputError& error) {
    plan::audit_refusal(call.plan->session, run.argv, spec.policy.mode, call.plan->workspace.path(),
                        error);  // the caller's own choice
    return not_run(run, spec, error, interrupts.signal());
  }
  if (refused) {
    // A stale cached verdict can only pick a runner that refuses: forget it, probe next time.
    provider.invalidate_verdict();
    plan::audit_refusal(call.plan->session, run.argv, spec.policy.mode, call.plan->workspace.path(),
                        *refused);
    return not_run(run, spec, *refused, interrupts.signal());
  }
  const int interrupted = interrupts.signal();
  report(run, spec, outcome, interrupted, policy_view);
  if (run.learn) print_learned(outcome);
  return interrupted != 0 ? 128 + interrupted : consumer::exit_status(outcome.status);
}

}  // namespace

int run(const Options& options) { return prepared_call(options, nullptr, run_call); }

}  // namespace dsh::sandbox::cli
