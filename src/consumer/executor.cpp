// SPDX-License-Identifier: Apache-2.0
// The public SandboxExecutor over the consumer's SandboxBashExecutor: the request mapped onto a
// RunSpec, the RunOutcome mapped back onto plain fields.
#include "dsh/sandbox/executor.h"

#include <algorithm>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "consumer/audit.h"
#include "consumer/bash_executor.h"
#include "consumer/render.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/roots.h"
#include "dsh/sandbox/trust.h"
#include "exec/exec.h"
#include "plan/call_plan.h"

namespace dsh::sandbox {

struct RunCancellation::State {
  std::shared_ptr<exec::AbortSignal> signal = std::make_shared<exec::AbortSignal>();
};

RunCancellation::RunCancellation() : state_(std::make_shared<State>()) {}

void RunCancellation::cancel() noexcept { state_->signal->abort(); }

bool RunCancellation::cancelled() const noexcept { return state_->signal->aborted(); }

struct detail::CancellationAccess {
  static std::shared_ptr<exec::AbortSignal> signal(const RunCancellation& cancellation) {
    return cancellation.state_->signal;
  }
};

namespace {

template <typename T>
T value_or_throw(Result<T> result) {
  if (!result) throw InvalidSandboxInputError(result.error().message);
  return std::move(result).value();
}

// The allow-list in the grammar of --network allow:, --network-deny and --network-resolve,
// canonicalised by the functions the CLI's parser calls.
NetworkAllowList canonical_allow_list(const RunRequest& request) {
  const NetworkAllowList& given = request.network_allow;
  const bool any = !given.allow.empty() || !given.deny.empty() || !given.resolve.empty();
  if (request.network != NetworkPolicy::kAllowList) {
    if (any) {
      throw InvalidSandboxInputError(
          "run: network_allow entries refine an allow-list; set network to "
          "NetworkPolicy::kAllowList, or drop them");
    }
    NetworkAllowList sockets;
    sockets.unix_sockets = given.unix_sockets;  // validate_policy checks them
    return sockets;
  }
  if (given.allow.empty()) {
    throw InvalidSandboxInputError(
        "run: an allow-list network names no destination; add network_allow.allow entries");
  }
  const auto list = [](const std::vector<std::string>& entries) {
    std::vector<std::string> out;
    for (const std::string& entry : entries) {
      for (std::string& canonical : value_or_throw(parse_network_list(entry))) {
        if (std::find(out.begin(), out.end(), canonical) == out.end()) {
          out.push_back(std::move(canonical));
        }
      }
    }
    return out;
  };
  NetworkAllowList canonical{list(given.allow), list(given.deny), {}, given.unix_sockets};
  for (const std::string& mapping : given.resolve) {
    canonical.resolve.push_back(value_or_throw(canonical_network_resolve(mapping)));
  }
  return canonical;
}

// Unset: the default bound; kUnbounded: none.
std::optional<std::uint64_t> bound_of(std::optional<std::uint64_t> asked,
                                      std::optional<std::uint64_t> fallback) {
  if (!asked) return fallback;
  if (*asked == kUnbounded) return std::nullopt;
  return asked;
}

void check_request(const RunRequest& request) {
  if (request.timeout_ms && (*request.timeout_ms <= 0 || *request.timeout_ms > 600'000)) {
    throw InvalidSandboxInputError(fmt::format(
        "run: timeout {} ms: expected more than 0 and at most 600000 ms", *request.timeout_ms));
  }
}

// The request as the CLI's parser would have left it: the allow-list canonical.
CallRequest call_request(const RunRequest& request) {
  CallRequest call = request;
  call.network_allow = canonical_allow_list(request);
  return call;
}

consumer::RunSpec make_spec(const RunRequest& request, const plan::CallPlan& plan) {
  consumer::RunSpec spec;
  spec.argv = request.argv;
  spec.policy = plan.policy;
  if (const auto confined = to_sandbox_policy(spec.policy)) {
    if (auto valid = validate_policy(*confined); !valid) {
      throw InvalidSandboxInputError(valid.error().message);
    }
  }
  spec.process.workdir = plan.workdir;
  spec.earlier_writable_roots = plan.earlier_roots();
  for (const auto& [name, value] : request.env) spec.process.env.insert_or_assign(name, value);
  spec.process.timeout_ms = request.timeout_ms;
  spec.process.on_stdout = request.on_stdout;
  spec.process.on_stderr = request.on_stderr;
  const exec::ResourceBounds defaults;
  spec.process.bounds.max_processes = bound_of(request.max_processes, defaults.max_processes);
  spec.process.bounds.max_memory_bytes =
      bound_of(request.max_memory_bytes, defaults.max_memory_bytes);
  if (request.cancellation) {
    spec.process.abort = detail::CancellationAccess::signal(*request.cancellation);
  }
  return spec;
}

RunResult result_of(const consumer::RunOutcome& outcome) {
  namespace status = consumer::status;
  RunResult result;
  result.exit_code = consumer::exit_code_of(outcome.status);
  result.signal = consumer::signal_of(outcome.status);
  std::visit(consumer::Overloaded{
                 [&](const status::Exited&) { result.end = RunEnd::kExited; },
                 [&](const status::Signalled&) { result.end = RunEnd::kSignalled; },
                 [&](const status::TimedOut&) { result.end = RunEnd::kTimedOut; },
                 [&](const status::Aborted&) { result.end = RunEnd::kAborted; },
                 [&](const status::NotStarted& failed) {
                   result.end = RunEnd::kNotStarted;
                   result.not_started = consumer::start_failure(outcome).value_or(failed.message());
                 },
                 [&](const status::RunnerFailed& failed) {
                   result.end = RunEnd::kRunnerFailed;
                   result.runner_failure = failed.detail;
                 },
             },
             outcome.status);
  result.denied = outcome.sandbox.denied;
  result.stdout_tail = outcome.out.tail;
  result.stderr_tail = outcome.err.tail;
  result.stdout_truncated = outcome.out.truncated;
  result.stderr_truncated = outcome.err.truncated;
  result.backend = outcome.sandbox.backend;
  result.enforcement = outcome.sandbox.enforcement;
  result.strict_enforcement = outcome.sandbox.strict_enforcement;
  result.ungoverned = outcome.sandbox.ungoverned;
  result.duration = outcome.duration;
  result.max_processes = outcome.bounds.processes.limit;
  result.max_processes_enforced_by = outcome.bounds.processes.enforced_by;
  result.max_memory_bytes = outcome.bounds.memory.limit;
  result.max_memory_enforced_by = outcome.bounds.memory.enforced_by;
  result.exit_status = consumer::exit_status(outcome.status);
  return result;
}

}  // namespace

SandboxExecutor::SandboxExecutor(SandboxProvider& provider) : provider_(provider) {}

// One call as the CLI makes it: planned (the config, the session, the workspace held to the
// per-user record), admitted (the running program trusted, a workspace-write call's roots
// recorded before the command starts), confined by the caller's provider held to the roots
// earlier runs could write, and logged in the session.
RunResult SandboxExecutor::run(const RunRequest& request) {
  check_request(request);
  const plan::CallPlan plan = plan::plan_call(call_request(request));
  consumer::RunOutcome outcome;
  consumer::RunSpec spec;
  try {
    spec = make_spec(request, plan);
    plan::admit(plan, plan.policy, "program linking the dsh-sandbox library");
    consumer::SandboxBashExecutor executor(provider_);
    outcome = executor.run(spec);
  } catch (const SandboxError& error) {
    plan::audit_refusal(plan.session, request.argv, plan.policy.mode, plan.workspace.path(), error);
    throw;
  }
  if (const auto* failed = std::get_if<consumer::status::RunnerFailed>(&outcome.status)) {
    // As the CLI logs it: the runner's failure is the call's refusal (the command never ran).
    plan::audit_refusal(
        plan.session, request.argv, plan.policy.mode, plan.workspace.path(),
        SandboxUnavailableError(*to_confined_mode(plan.policy.mode), failed->detail));
  } else if (plan.session) {
    try {
      record_run(*plan.session, consumer::run_event(spec, outcome));
    } catch (const std::exception&) {
      // As for the CLI: a log that cannot take the line does not turn a finished run into an
      // error.
    }
  }
  return result_of(outcome);
}

}  // namespace dsh::sandbox
