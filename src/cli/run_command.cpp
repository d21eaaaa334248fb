// SPDX-License-Identifier: Apache-2.0
// `dsh-sandbox run`: the bash consumer as a command. Exit status: the command's own, 128+N for
// a signal, 124 on timeout; 125 with one "dsh-sandbox: " line when the sandbox is unavailable,
// its runner failed, or the input was bad (the command did not run); 128+N when `run` itself
// got SIGINT, SIGTERM, SIGHUP or SIGPIPE (the tree is ended first, and --json still reports).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/text.h"
#include "cli/commands.h"
#include "cli/habits.h"
#include "cli/invocation.h"
#include "cli/network_config.h"
#include "cli/path_rules.h"
#include "cli/run_context.h"
#include "cli/run_io.h"
#include "cli/run_options.h"
#include "cli/setup.h"
#include "consumer/audit.h"
#include "consumer/bash_executor.h"
#include "consumer/denials.h"
#include "consumer/render.h"
#include "consumer/tool_schema.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/escalation.h"
#include "dsh/sandbox/policy_service.h"
#include "dsh/sandbox/roots.h"
#include "dsh/sandbox/trust.h"

namespace dsh::sandbox::cli {

namespace {

using consumer::RunOutcome;
using consumer::RunSpec;
using consumer::RunStatus;
namespace status = consumer::status;

// The session log named by --session: opened when it exists, else created for the workspace.
// Either way it must pass the trust check against `roots`, on every read and append.
// `creating_for` resolves the workspace the new session records as its cwd.
std::optional<SessionLog> open_session(const std::string& path, std::vector<std::string> roots,
                                       const std::function<ResolvedWorkspace()>& creating_for) {
  if (path.empty()) return std::nullopt;
  std::string absolute = path;
  if (!absolute.starts_with('/')) absolute = working_directory() + "/" + absolute;
  const SessionLogOptions options{false, std::move(roots)};
  struct stat info {};
  if (::lstat(absolute.c_str(), &info) == 0) return SessionLog::open(absolute, options);
  return SessionLog::create(absolute, std::filesystem::path(absolute).stem().string(),
                            creating_for().path(), options);
}

}  // namespace

CallContext call_context(const RunInvocation& run) {
  // Before the session says where it worked, its file is checked against the workspace as
  // spelled (and as resolved), /tmp, $TMPDIR and every root the per-user record lists: the
  // workspaces and extra writable roots earlier calls, with or without a session, let confined
  // runs write. Nothing beneath one decides this call (config, session, verdicts, runners), and
  // no symlink there is followed into this call's workspace or path rules.
  const std::vector<std::string> spelled = spelled_workspace_roots(run.workspace);
  const RecordedWorkspaces recorded = recorded_workspaces(spelled);
  std::vector<std::string> before = spelled;
  before.insert(before.end(), recorded.roots.begin(), recorded.roots.end());
  std::optional<SessionLog> session;
  std::vector<std::string> written;
  if (!run.session_path.empty()) {
    session = open_session(run.session_path, untrusted_roots("", before),
                           [&] { return workspace_root(run.workspace, {}, recorded); });
    written = session->written_workspaces();
  }
  const bool from_session = run.workspace.empty() && session && session->cwd();
  ResolvedWorkspace workspace =
      workspace_root(from_session ? *session->cwd() : run.workspace, written, recorded);
  std::vector<std::string> earlier = written;
  earlier.insert(earlier.end(), recorded.roots.begin(), recorded.roots.end());
  std::vector<std::string> untrusted = untrusted_roots(workspace, earlier);
  if (session) {
    // Now that every workspace is known, the session is held to all of them.
    session = SessionLog::open(session->path(), {false, untrusted});
  }
  return {std::move(session), std::move(workspace), std::move(written), std::move(untrusted),
          recorded.roots};
}

namespace {

// The roots earlier confined runs could write: the session's workspaces and the record's. A
// record that cannot be read adds none: the check then holds what it held before the record
// existed, this call's roots, /tmp and $TMPDIR.
std::vector<std::string> earlier_roots(const CallContext& call) {
  std::vector<std::string> roots = call.written;
  roots.insert(roots.end(), call.recorded.begin(), call.recorded.end());
  return roots;
}

}  // namespace

void admit(const CallContext& call, const SandboxExecutionPolicy& policy) {
  const auto confined = to_confined_mode(policy.mode);
  if (!confined) return;
  require_trusted_self(
      chosen_writable_roots(policy.mode, call.workspace.path(), policy.allow_write),
      earlier_roots(call), *confined);
  record_writable_workspace(call.workspace, policy, call.untrusted);
}

std::vector<std::string> state_untrusted_roots(const CallContext& call,
                                               const SandboxExecutionPolicy& policy) {
  std::vector<std::string> roots =
      chosen_writable_roots(policy.mode, call.workspace.path(), policy.allow_write);
  const std::vector<std::string> earlier = earlier_roots(call);
  roots.insert(roots.end(), earlier.begin(), earlier.end());
  return untrusted_roots("", roots);
}

LocalSandboxProvider call_provider(const Setup& setup, const CallContext& call) {
  return make_provider(setup.provider, earlier_roots(call), call.untrusted);
}

// --mode is the approved mode; then the session's last sandbox/mode event; then the config.
SandboxExecutionPolicy resolve_policy(const Options& options, const RunInvocation& run,
                                      const Setup& setup, const CallContext& call) {
  const SandboxPolicyService service(setup.mode, call.workspace);
  SandboxPolicyRequest request;
  if (call.session) request.session = &*call.session;
  request.mode = run.policy.mode;
  request.workspace_root = call.workspace;
  SandboxExecutionPolicy policy = service.resolve(request);
  // Unconfined, the command has the network whatever the default says: only a --network the
  // caller wrote is a request unenforceable_network refuses.
  policy.network = policy.mode == SandboxMode::kDangerFullAccess && !run.policy.network_given
                       ? NetworkPolicy::kInherit
                       : run.policy.network;
  policy.network_allow = run.policy.network_allow;
  add_config_network(policy, run.policy.network_given, setup.network_rules);
  add_path_rules(policy, options, setup.path_rules);
  if (const auto confined = to_sandbox_policy(policy)) {
    std::vector<std::string> roots = untrusted_roots("", call.written);
    roots.insert(roots.end(), call.recorded.begin(), call.recorded.end());
    require_unplanted_rule_paths(*confined, roots);
  }
  return policy;
}

std::string call_workdir(const RunInvocation& run, const SandboxExecutionPolicy& policy,
                         const CallContext& call) {
  std::optional<std::string_view> session_cwd;
  if (call.session && call.session->cwd()) session_cwd = *call.session->cwd();
  return consumer::resolve_tool_workdir(
      policy.workspace_root, session_cwd,
      run.workdir.empty() ? std::nullopt : std::optional<std::string_view>(run.workdir));
}

void audit_refusal(const CallContext* call, const std::vector<std::string>& argv, SandboxMode mode,
                   const SandboxError& error) {
  if (call == nullptr || !call->session) return;
  try {
    record_refusal(*call->session,
                   {argv, mode, call->workspace.path(), std::string(error.code()), error.what()});
  } catch (const std::exception&) {
    // The refusal itself is reported on stderr; a log that cannot take it changes nothing.
  }
}

namespace {

// One audit line per run; a log that cannot take it must not turn a finished run into an error.
void audit_run(const CallContext& call, const RunSpec& spec, const RunOutcome& outcome) {
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

// Unconfined, nothing could enforce a network policy: a --network deny or allow: the caller
// wrote is refused rather than ignored, for a first run and for an approved retry to a wider mode
// alike. The default (no network in confined modes) is no such request: a danger-full-access
// run, or a retry into it, keeps the network it inherently has.
std::optional<std::string> unenforceable_network(SandboxMode mode, NetworkPolicy network,
                                                 bool network_given) {
  if (mode != SandboxMode::kDangerFullAccess || !network_given ||
      network == NetworkPolicy::kInherit) {
    return std::nullopt;
  }
  return fmt::format(
      "run: --network {}: danger-full-access runs the command unconfined, so nothing would "
      "enforce it; use --mode read-only or workspace-write, or drop --network",
      wire_name(network));
}

RunSpec make_spec(const RunInvocation& run, const CallContext& call, SandboxExecutionPolicy policy,
                  const Interrupts& interrupts) {
  RunSpec spec;
  spec.argv = run.argv;
  spec.process.workdir = call_workdir(run, policy, call);
  spec.policy = std::move(policy);
  spec.process.timeout_ms = run.timeout_ms;
  spec.process.abort = interrupts.abort();
  spec.process.stdin_fd = command_stdin(run.stdin_mode);
  spec.process.bounds = run.bounds;
  spec.denial_evidence = run.evidence;
  // Only the agent render hands the spill files' paths on; every other form removes them.
  spec.process.keep_spill = run.agent;
  apply_environment_options(run, spec.process);
  if (auto refused =
          unenforceable_network(spec.policy.mode, spec.policy.network, run.policy.network_given)) {
    throw InvalidSandboxInputError(*refused);
  }
  return spec;
}

// One run; for a person, its output live on run's own stdout and stderr, which no reader can
// make wait past the deadline.
JsonLines& json_lines() {
  static JsonLines lines;
  return lines;
}

RunOutcome run_once(const RunInvocation& run, consumer::SandboxBashExecutor& executor,
                    RunSpec& spec) {
  if (run.json || run.agent) return executor.run(spec);
  if (run.json_lines) {
    json_lines().started(spec);
    spec.process.on_stdout = [](std::string_view chunk) { json_lines().output("stdout", chunk); };
    spec.process.on_stderr = [](std::string_view chunk) { json_lines().output("stderr", chunk); };
    RunOutcome outcome = executor.run(spec);
    spec.process.on_stdout = nullptr;
    spec.process.on_stderr = nullptr;
    return outcome;
  }
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(*spec.process.timeout_ms)));
  LiveOutput out(STDOUT_FILENO, deadline, spec.process.abort->fd());
  LiveOutput err(STDERR_FILENO, deadline, spec.process.abort->fd());
  spec.process.on_stdout = [&out](std::string_view chunk) { out.write(chunk); };
  spec.process.on_stderr = [&err](std::string_view chunk) { err.write(chunk); };
  RunOutcome outcome = executor.run(spec);
  spec.process.on_stdout = nullptr;
  spec.process.on_stderr = nullptr;
  return outcome;
}

// Asks on the terminal; any answer but yes is a rejection. The request's reason comes first,
// made inert; the last line is the sandbox's own question, naming the retry and what it opens,
// so nothing a confined command chose (a file name in the lines above) can stand after it.
class TerminalApprover final : public Approver {
 public:
  explicit TerminalApprover(std::string question) : question_(std::move(question)) {}

  EscalationOutcome request(const ApprovalRequest& request) override {
    fmt::print(stderr, "dsh-sandbox: {}\n{} [y/N] ", text::inert(request.reason), question_);
    (void)std::fflush(stderr);
    std::string answer;
    if (!std::getline(std::cin, answer)) return EscalationOutcome::kCancelled;
    return answer == "y" || answer == "yes" ? EscalationOutcome::kAllowedOnce
                                            : EscalationOutcome::kRejected;
  }

 private:
  std::string question_;
};

// The one retry `--escalate ask` may offer, for that retry only: its mode and the directories
// it adds as writable roots.
struct RetryOffer {
  SandboxMode mode = SandboxMode::kWorkspaceWrite;
  std::vector<std::string> allow_write;
};

// The narrowest change the evidence supports: the refused directories (--allow-write, which
// takes effect under workspace-write), else the next wider mode; danger-full-access only when
// nothing narrower could help. Nothing for refusals no mode lifts (the network, a bound).
std::optional<RetryOffer> retry_offer(const consumer::SandboxFacts& sandbox) {
  if (!consumer::wider_mode_could_help(sandbox)) return std::nullopt;
  if (sandbox.mode != SandboxMode::kDangerFullAccess) {
    if (auto dirs = consumer::allow_write_fix(sandbox, sandbox.workspace_root)) {
      return RetryOffer{SandboxMode::kWorkspaceWrite, std::move(*dirs)};
    }
  }
  const auto wider = wider_modes(sandbox.mode);
  if (wider.empty()) return std::nullopt;
  return RetryOffer{wider.front(), {}};
}

// The question's last line: the retry, and what it opens in plain words.
std::string retry_question(const RetryOffer& offer, SandboxMode current) {
  if (offer.mode == SandboxMode::kDangerFullAccess) {
    return "Retry this command once under danger-full-access (no sandbox: every file and the "
           "network)?";
  }
  const bool one = offer.allow_write.size() == 1;
  const std::string dirs = offer.allow_write.empty()
                               ? ""
                               : fmt::format(" with --allow-write for the {} listed above",
                                             one ? "directory" : "directories");
  const std::string named = one ? "that directory" : "those directories";
  const std::string opens = current == offer.mode ? named + " writable, nothing else"
                            : dirs.empty()        ? "the workspace writable"
                                                  : "the workspace and " + named + " writable";
  return fmt::format("Retry this command once under {}{} ({})?", wire_name(offer.mode), dirs,
                     opens);
}

// What was refused and the directories the retry would add, each on its own line, inert.
void print_evidence(const RunOutcome& outcome, const RetryOffer& offer) {
  for (const std::string& line : consumer::denial_lines(outcome.sandbox)) {
    fmt::print(stderr, "{}\n", line);
  }
  for (const std::string& dir : offer.allow_write) {
    fmt::print(stderr, "dsh-sandbox: --allow-write {}\n", text::inert(dir));
  }
}

// The retry a person at this terminal approves, narrowest first; nullopt otherwise.
std::optional<RetryOffer> approved_retry(const RunInvocation& run, const RunSpec& spec,
                                         const RunOutcome& outcome) {
  // Only on evidence: printed text ("permission denied") never makes the sandbox ask.
  if (run.escalate != Escalation::kAsk || !outcome.sandbox.denied ||
      outcome.sandbox.denial_source != DenialSource::kKernel ||
      outcome.sandbox.denials.records.empty() || ::isatty(STDIN_FILENO) == 0 ||
      ::isatty(STDERR_FILENO) == 0) {
    return std::nullopt;
  }
  std::optional<RetryOffer> offer = retry_offer(outcome.sandbox);
  if (!offer) {
    fmt::print(stderr, "dsh-sandbox: no retry: no wider sandbox mode lifts this refusal\n");
    return std::nullopt;
  }
  // The retry is held to a first run's network check, before anyone is asked: a wider mode
  // that could not enforce this call's --network is never offered.
  if (auto refused =
          unenforceable_network(offer->mode, spec.policy.network, run.policy.network_given)) {
    fmt::print(stderr, "dsh-sandbox: no retry under {}: {}\n", wire_name(offer->mode), *refused);
    return std::nullopt;
  }
  print_evidence(outcome, *offer);
  TerminalApprover approver(retry_question(*offer, outcome.sandbox.mode));
  const std::string reason =
      fmt::format("the sandbox refused what the command did under {} (the lines above)",
                  wire_name(outcome.sandbox.mode));
  if (offer->mode == outcome.sandbox.mode) {
    // The same mode with more writable directories: not an escalation of the mode, asked alike.
    const EscalationOutcome answer = approver.request({"dsh-sandbox", "run", "", reason, {}});
    if (answer == EscalationOutcome::kAllowedOnce) return offer;
    return std::nullopt;
  }
  EscalationRequest request{offer->mode, reason, std::string(wire_name(outcome.sandbox.mode)),
                            "dsh-sandbox"};
  request.tool_name = "run";
  try {
    approve_escalation(request, &approver);
    return offer;
  } catch (const EscalationError& refusal) {
    fmt::print(stderr, "dsh-sandbox: {}\n", refusal.what());
    return std::nullopt;
  }
}

// The effective policy after defaults, as run --json shows it (`policy`).
nlohmann::json run_policy_view(const SandboxExecutionPolicy& policy) {
  if (const auto confined = to_sandbox_policy(policy)) return effective_policy_view(*confined);
  return nlohmann::json{{"mode", wire_name(policy.mode)}, {"workspaceRoot", policy.workspace_root}};
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
    nlohmann::json result = consumer::result_json(outcome, interrupted);
    add_contract_fields(result, spec, outcome);
    result["policy"] = policy_view;
    if (run.json_lines) {
      json_lines().finished(result, outcome);
    } else {
      fmt::print("{}\n", result.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace));
    }
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
    const auto* unavailable = dynamic_cast<const SandboxUnavailableError*>(&error);
    const bool runner_failed = unavailable != nullptr && unavailable->detail();
    RunOutcome not_run;
    not_run.status = status::RunnerFailed{runner_failed ? *unavailable->detail() : ""};
    not_run.sandbox.mode = spec.policy.mode;
    nlohmann::json result = consumer::result_json(not_run, interrupted);
    add_contract_fields(result, spec, not_run);
    if (!runner_failed) {
      result["runnerFailed"] = false;
      result["refusal"] = {{"code", std::string(error.code())}, {"message", error.what()}};
    }
    if (run.json_lines) {
      json_lines().finished(result, not_run);
    } else {
      fmt::print("{}\n", result.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace));
    }
  }
  if (run.json || run.json_lines) set_json_errors(false);  // the result object says it already
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
                                                   const CallContext& call,
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

// The approved retry's policy: its mode (full access inherits the network) and extra roots.
// This one retry only; nothing is persisted.
void apply_retry(RunSpec& spec, RetryOffer& retry) {
  spec.policy.mode = retry.mode;
  if (retry.mode == SandboxMode::kDangerFullAccess) spec.policy.network = NetworkPolicy::kInherit;
  for (std::string& dir : retry.allow_write) spec.policy.allow_write.push_back(dir);
}

}  // namespace

int run(const Options& options) {
  std::optional<CallContext> call;
  std::vector<std::string> argv;
  SandboxMode mode = SandboxMode::kReadOnly;
  try {
    const RunInvocation run = run_invocation(options).value();
    argv = run.argv;
    call = call_context(run);
    const Setup setup = load_setup(run.config_path, call->untrusted);
    const Interrupts interrupts;
    SandboxExecutionPolicy policy = resolve_policy(options, run, setup, *call);
    // Only a JSON result shows it, and it walks the writable roots for their git state.
    const nlohmann::json policy_view =
        run.json || run.json_lines ? run_policy_view(policy) : nlohmann::json();
    RunSpec spec = make_spec(run, *call, std::move(policy), interrupts);
    mode = spec.policy.mode;
    LocalSandboxProvider provider = call_provider(setup, *call);
    consumer::SandboxBashExecutor executor(provider);
    RunOutcome outcome;
    std::optional<SandboxUnavailableError> refused;
    try {
      admit(*call, spec.policy);
      hint_shell(run);
      refused = run_audited(run, *call, executor, spec, outcome);
      std::optional<RetryOffer> retry;
      if (!refused && interrupts.signal() == 0 && !run.learn) {
        retry = approved_retry(run, spec, outcome);
      }
      if (retry && interrupts.signal() == 0) {
        apply_retry(spec, *retry);
        mode = retry->mode;
        admit(*call, spec.policy);
        refused = run_audited(run, *call, executor, spec, outcome);
      }
    } catch (const SandboxUnavailableError& error) {
      refused = error;  // the provider refused: no usable backend, or a runner it cannot trust
    } catch (const InvalidSandboxInputError& error) {
      audit_refusal(&*call, argv, spec.policy.mode, error);  // the caller's own choice
      return not_run(run, spec, error, interrupts.signal());
    }
    if (refused) {
      // A stale cached verdict can only pick a runner that refuses: forget it, probe next time.
      provider.invalidate_verdict();
      audit_refusal(&*call, argv, spec.policy.mode, *refused);
      return not_run(run, spec, *refused, interrupts.signal());
    }
    const int interrupted = interrupts.signal();
    report(run, spec, outcome, interrupted, policy_view);
    if (run.learn) print_learned(outcome);
    return interrupted != 0 ? 128 + interrupted : consumer::exit_status(outcome.status);
  } catch (const SandboxError& error) {
    audit_refusal(call ? &*call : nullptr, argv, mode, error);
    return fail(error.what(), error.code());
  }
}

}  // namespace dsh::sandbox::cli
