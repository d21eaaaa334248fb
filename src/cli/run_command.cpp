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
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/run_io.h"
#include "cli/setup.h"
#include "consumer/bash_executor.h"
#include "consumer/render.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/escalation.h"
#include "dsh/sandbox/policy_service.h"
#include "dsh/sandbox/roots.h"
#include "dsh/sandbox/trust.h"

namespace dsh::sandbox::cli {

namespace {

using consumer::RunOutcome;
using consumer::RunSpec;

constexpr int kTimeoutExit = 124;

std::vector<std::string> command_argv(const Options& options) {
  if (options.command.empty() == options.argv.empty()) {
    throw InvalidSandboxInputError(
        "run: give the command either as -c 'COMMAND' or after -- as ARGV..., exactly once");
  }
  if (!options.command.empty()) return {"bash", "-c", options.command};
  return options.argv;
}

// The session log named by --session: opened when it exists, else created for the workspace.
// Either way it must pass the trust check against `roots`, on every read and append.
std::optional<SessionLog> open_session(const std::string& path, std::vector<std::string> roots,
                                       const std::string& workspace) {
  if (path.empty()) return std::nullopt;
  std::string absolute = path;
  if (!absolute.starts_with('/')) absolute = working_directory() + "/" + absolute;
  const SessionLogOptions options{false, std::move(roots)};
  struct stat info {};
  if (::lstat(absolute.c_str(), &info) == 0) return SessionLog::open(absolute, options);
  return SessionLog::create(absolute, std::filesystem::path(absolute).stem().string(), workspace,
                            options);
}

// Where this call's workspace is and what it must not trust. An explicit --workspace wins over
// the session's recorded cwd, which wins over the working directory; the workspace is resolved
// through symlinks only outside /tmp, $TMPDIR, every workspace the session's earlier runs could
// write and every root the per-user record lists.
struct CallContext {
  std::optional<SessionLog> session;
  std::string workspace;
  std::vector<std::string> written;    // the session's earlier writable workspaces
  std::vector<std::string> untrusted;  // untrusted_roots(workspace, written)
};

CallContext call_context(const Options& options) {
  CallContext call;
  // Before the session says where it worked, its file is checked against the workspace as
  // spelled (and as resolved), /tmp and $TMPDIR.
  const std::vector<std::string> spelled = spelled_workspace_roots(options.workspace);
  // The workspaces earlier calls, with or without a session, let confined runs write: only for
  // resolving the workspace. They are not roots for the config, the session or the runners: a
  // home directory once used as a workspace would make every file under it untrusted for as long
  // as the record keeps it, while a file a confined run of this call could write is already
  // refused (it lies beneath this call's workspace).
  const RecordedWorkspaces recorded = recorded_workspaces(options.workspace);
  if (!options.session_path.empty()) {
    const std::string creating_for = workspace_root(options.workspace, {}, recorded);
    call.session = open_session(options.session_path, untrusted_roots("", spelled), creating_for);
    call.written = call.session->written_workspaces();
  }
  const bool from_session = options.workspace.empty() && call.session && call.session->cwd();
  call.workspace = workspace_root(from_session ? *call.session->cwd() : options.workspace,
                                  call.written, recorded);
  call.untrusted = untrusted_roots(call.workspace, call.written);
  if (call.session) {
    // Now that every workspace is known, the session is held to all of them.
    call.session = SessionLog::open(call.session->path(), {false, call.untrusted});
  }
  return call;
}

// --mode is the approved mode; then the session's last sandbox/mode event; then the config.
SandboxExecutionPolicy resolve_policy(const Options& options, const Setup& setup,
                                      const CallContext& call) {
  const SandboxPolicyService service({std::string(wire_name(setup.mode)), call.workspace});
  SandboxPolicyRequest request;
  if (call.session) request.session = &*call.session;
  if (!options.mode.empty()) request.mode = parse_sandbox_mode(options.mode).value();
  request.workspace_root = call.workspace;
  SandboxExecutionPolicy policy = service.resolve(request);
  policy.network = parse_network_policy(options.network).value();
  return policy;
}

// One audit line per run; a log that cannot take it must not turn a finished run into an error.
void audit_run(const CallContext& call, const RunSpec& spec, const RunOutcome& outcome) {
  if (!call.session) return;
  SandboxRunEvent event;
  event.argv = spec.argv;
  event.mode = outcome.sandbox.mode;
  event.workspace_root = spec.policy.workspace_root;
  event.backend = outcome.sandbox.backend;
  if (outcome.sandbox.enforcement) {
    event.enforcement = std::string(wire_name(*outcome.sandbox.enforcement));
  }
  event.exit_code = outcome.process.exit_code;
  if (outcome.process.signal) event.signal = consumer::signal_name(*outcome.process.signal);
  event.timed_out = outcome.process.timed_out;
  event.denied = outcome.sandbox.denied;
  if (event.denied) event.denial = sandbox_denial_marker(outcome.sandbox.mode);
  try {
    record_run(*call.session, event);
  } catch (const std::exception& error) {
    fmt::print(stderr, "dsh-sandbox: the session log did not record this run: {}\n", error.what());
  }
}

void audit_refusal(const CallContext* call, const std::vector<std::string>& argv, SandboxMode mode,
                   const SandboxError& error) {
  if (call == nullptr || !call->session) return;
  try {
    record_refusal(*call->session,
                   {argv, mode, call->workspace, std::string(error.code()), error.what()});
  } catch (const std::exception&) {
    // The refusal itself is reported on stderr; a log that cannot take it changes nothing.
  }
}

// The command's stdin: run's own when it is not a terminal (a pipe, a file), else /dev/null.
// A terminal stays closed: the command runs in its own process group, not the terminal's
// foreground one, so a read would stop it with SIGTTIN until the deadline, and a terminal it
// could read is one it could try to inject into.
int command_stdin(const Options& options) {
  if (options.stdin_mode == "close" || ::fcntl(STDIN_FILENO, F_GETFD) < 0) return -1;
  const bool terminal = ::isatty(STDIN_FILENO) != 0;
  if (options.stdin_mode == "inherit" && terminal) {
    throw InvalidSandboxInputError(
        "run: --stdin inherit: standard input is a terminal, which a confined command never "
        "reads (it would be stopped by SIGTTIN, and could inject into it); give the input "
        "through a pipe or a file, or use --stdin close");
  }
  return terminal ? -1 : STDIN_FILENO;
}

// "unlimited", or a positive count or size: digits with an optional K, M, G or T (powers of
// 1024) for sizes.
std::optional<std::uint64_t> parse_bound(const std::string& text, const std::string& option,
                                         bool size, std::optional<std::uint64_t> fallback) {
  if (text.empty()) return fallback;
  if (text == "unlimited") return std::nullopt;
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  std::uint64_t scale = 1;
  const std::string suffix = text.substr(digits);
  if (size && suffix.size() == 1) {
    const std::string units = "KMGT";
    const std::size_t unit = units.find(static_cast<char>(std::toupper(suffix[0])));
    if (unit != std::string::npos) scale = std::uint64_t{1} << (10 * (unit + 1));
  }
  const bool bad_suffix = !suffix.empty() && scale == 1;
  std::uint64_t value = 0;
  bool overflow = digits > 15;
  if (!overflow && digits > 0) value = std::stoull(text.substr(0, digits));
  overflow = overflow || (value > 0 && scale > UINT64_MAX / value);
  if (digits == 0 || bad_suffix || overflow || value == 0) {
    throw InvalidSandboxInputError(
        fmt::format("run: {} \"{}\": expected {} or unlimited", option, text,
                    size ? "a positive size such as 512M or 4G" : "a positive whole number"));
  }
  return value * scale;
}

exec::ResourceBounds resource_bounds(const Options& options) {
  const exec::ResourceBounds defaults;
  exec::ResourceBounds bounds;
  bounds.max_processes =
      parse_bound(options.max_processes, "--max-processes", false, defaults.max_processes);
  bounds.max_memory_bytes =
      parse_bound(options.max_memory, "--max-memory", true, defaults.max_memory_bytes);
  return bounds;
}

RunSpec make_spec(const Options& options, SandboxExecutionPolicy policy,
                  const Interrupts& interrupts) {
  RunSpec spec;
  spec.argv = command_argv(options);
  spec.policy = std::move(policy);
  spec.process.timeout_ms = options.timeout_seconds * 1000;
  spec.process.abort = interrupts.abort();
  spec.process.stdin_fd = command_stdin(options);
  spec.process.bounds = resource_bounds(options);
  // Only the agent render hands the spill files' paths on; every other form removes them.
  spec.process.keep_spill = options.format == "agent";
  return spec;
}

// One run; for a person, its output live on run's own stdout and stderr, which no reader can
// make wait past the deadline.
RunOutcome run_once(const Options& options, consumer::SandboxBashExecutor& executor,
                    RunSpec& spec) {
  if (options.json || !options.format.empty()) return executor.run(spec);
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

// Asks on the terminal; any answer but yes is a rejection.
class TerminalApprover final : public Approver {
 public:
  EscalationOutcome request(const ApprovalRequest& request) override {
    fmt::print(stderr, "dsh-sandbox: {}. Retry this command once? [y/N] ", request.reason);
    (void)std::fflush(stderr);
    std::string answer;
    if (!std::getline(std::cin, answer)) return EscalationOutcome::kCancelled;
    return answer == "y" || answer == "yes" ? EscalationOutcome::kAllowedOnce
                                            : EscalationOutcome::kRejected;
  }
};

// The narrowest wider mode, when a person at this terminal approves it; nullopt otherwise.
std::optional<SandboxMode> approved_retry(const Options& options, const RunOutcome& outcome) {
  const auto wider = wider_modes(outcome.sandbox.mode);
  if (options.escalate != "ask" || !outcome.sandbox.denied || wider.empty() ||
      ::isatty(STDIN_FILENO) == 0 || ::isatty(STDERR_FILENO) == 0) {
    return std::nullopt;
  }
  TerminalApprover approver;
  EscalationRequest request{wider.front(), "the sandbox denied it under the current mode",
                            std::string(wire_name(outcome.sandbox.mode)), "dsh-sandbox"};
  request.tool_name = "run";
  try {
    return approve_escalation(request, &approver);
  } catch (const EscalationError& refusal) {
    fmt::print(stderr, "dsh-sandbox: {}\n", refusal.what());
    return std::nullopt;
  }
}

int exit_status(const exec::Result& process) {
  if (process.timed_out) return kTimeoutExit;
  if (process.signal) return 128 + *process.signal;
  if (process.spawn_error) return process.spawn_error->error == ENOENT ? 127 : 126;
  return process.exit_code.value_or(kFailureExit);
}

nlohmann::json bound_json(const exec::BoundFact& bound) {
  return {{"max", bound.limit ? nlohmann::json(*bound.limit) : nlohmann::json(nullptr)},
          {"enforcedBy", bound.enforced_by.empty() ? nlohmann::json(nullptr)
                                                   : nlohmann::json(bound.enforced_by)}};
}

nlohmann::json result_json(const RunOutcome& outcome, bool runner_failed, int interrupted) {
  const exec::Result& process = outcome.process;
  const auto optional_int = [](std::optional<int> value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  };
  const exec::BoundsFacts& bounds = process.bounds;
  return {{"mode", wire_name(outcome.sandbox.mode)},
          {"backend", outcome.sandbox.backend.empty() ? nlohmann::json(nullptr)
                                                      : nlohmann::json(outcome.sandbox.backend)},
          {"enforcement", outcome.sandbox.enforcement
                              ? nlohmann::json(wire_name(*outcome.sandbox.enforcement))
                              : nlohmann::json(nullptr)},
          {"exitCode", optional_int(process.exit_code)},
          {"signal", process.signal ? nlohmann::json(consumer::signal_name(*process.signal))
                                    : nlohmann::json(nullptr)},
          {"timedOut", process.timed_out},
          {"denied", outcome.sandbox.denied},
          {"runnerFailed", runner_failed},
          {"stdout", process.out.tail},
          {"stderr", process.err.tail},
          {"durationMs", process.duration.count()},
          {"interrupted", interrupted != 0 ? nlohmann::json(consumer::signal_name(interrupted))
                                           : nlohmann::json(nullptr)},
          {"bounds",
           {{"processes", bound_json(bounds.processes)},
            {"memory", bound_json(bounds.memory)},
            {"treeKill", bounds.tree_kill}}}};
}

// Why the command never started, when it did not: the program or the workdir was refused.
std::optional<std::string> start_failure(const RunOutcome& outcome) {
  const auto& error = outcome.process.spawn_error;
  if (!error) return std::nullopt;
  // A workdir the caller could enter that bwrap cannot: only its own view hides it.
  const bool hidden =
      error->stage == exec::SpawnStage::kWorkdir && outcome.sandbox.backend.starts_with("bwrap");
  return fmt::format("cannot start the command: {}{}", error->message(),
                     hidden ? "; bwrap's view of the filesystem hides that directory (its own "
                              "/dev and /proc, and a private /tmp under workspace-write): run "
                              "from a directory the sandbox shows, such as the workspace"
                            : "");
}

void report(const Options& options, const RunOutcome& outcome, int interrupted) {
  const std::optional<std::string> failure = start_failure(outcome);
  if (options.json) {
    fmt::print("{}\n", result_json(outcome, false, interrupted)
                           .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  } else if (options.format == "agent") {
    const bool advertised = !wider_modes(outcome.sandbox.mode).empty();
    const auto timeout_ms = static_cast<long long>(options.timeout_seconds * 1000);
    fmt::print("{}\n", failure ? consumer::render_error_for_agent(*failure)
                               : consumer::render_for_agent(outcome, advertised, timeout_ms));
    return;
  }
  // On stderr with --json too, as a runner failure's line is: the object has no field for it.
  if (failure) fmt::print(stderr, "dsh-sandbox: {}\n", *failure);
}

// For a person: the denial marker right after the command's own stderr, before any question.
void mark_denial(const Options& options, const RunOutcome& outcome) {
  if (!options.json && options.format.empty() && outcome.sandbox.denied) {
    fmt::print(stderr, "{}\n", sandbox_denial_marker(outcome.sandbox.mode));
  }
}

// The command did not run: 125 and one line, plus the machine-readable forms when asked for.
int runner_failed(const Options& options, SandboxMode mode, const SandboxUnavailableError& error,
                  int interrupted) {
  if (options.format == "agent") fmt::print("{}\n", consumer::render_error_for_agent(error.what()));
  if (options.json) {
    RunOutcome not_run;
    not_run.sandbox.mode = mode;
    fmt::print("{}\n", result_json(not_run, true, interrupted).dump());
  }
  return fail(error.what());
}

}  // namespace

int run(const Options& options) {
  std::optional<CallContext> call;
  std::vector<std::string> argv;
  SandboxMode mode = SandboxMode::kReadOnly;
  try {
    if (!options.format.empty() && options.format != "agent") {
      throw InvalidSandboxInputError(
          fmt::format("run: unknown --format \"{}\"; expected agent", options.format));
    }
    argv = command_argv(options);
    call = call_context(options);
    const Setup setup = load_setup(options.config_path, call->untrusted);
    const Interrupts interrupts;
    RunSpec spec = make_spec(options, resolve_policy(options, setup, *call), interrupts);
    mode = spec.policy.mode;
    if (const auto confined = to_confined_mode(spec.policy.mode)) {
      require_trusted_self(call->untrusted, *confined);
    }
    record_writable_workspace(call->workspace, spec.policy.mode, call->untrusted);
    LocalSandboxProvider provider = make_provider(setup.provider);
    consumer::SandboxBashExecutor executor(provider);
    RunOutcome outcome;
    try {
      outcome = run_once(options, executor, spec);
      audit_run(*call, spec, outcome);
      mark_denial(options, outcome);
      std::optional<SandboxMode> wider;
      if (interrupts.signal() == 0) wider = approved_retry(options, outcome);
      if (wider && interrupts.signal() == 0) {
        spec.policy.mode = *wider;  // this one retry only; nothing is persisted
        mode = *wider;
        record_writable_workspace(call->workspace, *wider, call->untrusted);
        outcome = run_once(options, executor, spec);
        audit_run(*call, spec, outcome);
        mark_denial(options, outcome);
      }
    } catch (const SandboxUnavailableError& error) {
      // A stale cached verdict can only pick a runner that refuses: forget it, probe next time.
      provider.invalidate_verdict();
      audit_refusal(&*call, argv, spec.policy.mode, error);
      return runner_failed(options, spec.policy.mode, error, interrupts.signal());
    }
    const int interrupted = interrupts.signal();
    report(options, outcome, interrupted);
    return interrupted != 0 ? 128 + interrupted : exit_status(outcome.process);
  } catch (const SandboxError& error) {
    audit_refusal(call ? &*call : nullptr, argv, mode, error);
    return fail(error.what());
  }
}

}  // namespace dsh::sandbox::cli
