// SPDX-License-Identifier: Apache-2.0
// The public SandboxExecutor over the consumer's SandboxBashExecutor: the request mapped onto a
// RunSpec, the RunOutcome mapped back onto plain fields.
#include "dsh/sandbox/executor.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "consumer/bash_executor.h"
#include "consumer/render.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/roots.h"
#include "dsh/sandbox/trust.h"
#include "exec/exec.h"
#include "local/workspace_record.h"
#include "policy/call_policy.h"

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

std::string current_directory() {
  std::array<char, PATH_MAX> buffer{};
  if (::getcwd(buffer.data(), buffer.size()) == nullptr) {
    throw InvalidSandboxInputError(
        "run: the working directory cannot be read; give workspace_root");
  }
  return buffer.data();
}

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

// The policy through the CLI's own builder: the mode, the root, the network with its allow-list
// and the path rules, then the check that no rule path was planted beneath /tmp or $TMPDIR.
SandboxExecutionPolicy make_policy(const RunRequest& request) {
  policy::CallInputs inputs;
  inputs.request.mode = request.mode;
  inputs.request.network = request.network;
  inputs.request.network_allow = canonical_allow_list(request);
  // deny is the request's default: under danger-full-access it says nothing, and the command
  // keeps the caller's network; an allow-list there is refused by the builder
  // (policy::unenforceable_network).
  inputs.request.network_given = request.network != NetworkPolicy::kDeny;
  inputs.request.rules = {request.allow_write, request.deny_write, request.deny_read,
                          request.allow_cache};
  inputs.session_id = request.session_id;
  inputs.workspace_root =
      request.workspace_root.empty() ? current_directory() : request.workspace_root;
  inputs.planted_roots = untrusted_roots("", {});
  SandboxExecutionPolicy policy = policy::build_call_policy(inputs);
  if (const auto confined = to_sandbox_policy(policy)) {
    if (auto valid = validate_policy(*confined); !valid) {
      throw InvalidSandboxInputError(valid.error().message);
    }
  }
  return policy;
}

consumer::RunSpec make_spec(const RunRequest& request) {
  check_request(request);
  consumer::RunSpec spec;
  spec.argv = request.argv;
  spec.policy = make_policy(request);
  spec.process.workdir = request.workdir;  // resolved by the executor's one workdir rule
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

RunResult SandboxExecutor::run(const RunRequest& request) {
  consumer::RunSpec spec = make_spec(request);
  // As the CLI does, before the command starts: a workspace-write run's writable roots join the
  // per-user record, so no later call (the CLI's or this library's) trusts a symlink, config or
  // runner planted beneath them. The record's directory is held to this call's roots and to the
  // ones already recorded.
  if (const std::optional<SandboxPolicy> confined = to_sandbox_policy(spec.policy)) {
    std::vector<std::string> untrusted = untrusted_roots(confined->workspace_root);
    if (auto recorded = local::read_workspace_record(untrusted)) {
      untrusted = untrusted_roots(confined->workspace_root, recorded.value());
    }
    if (auto added = local::record_writable_roots(confined->workspace_root, *confined, untrusted);
        !added) {
      throw InvalidSandboxInputError(added.error().message);
    }
  }
  consumer::SandboxBashExecutor executor(provider_);
  return result_of(executor.run(spec));
}

}  // namespace dsh::sandbox
