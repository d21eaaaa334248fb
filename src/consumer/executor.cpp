// SPDX-License-Identifier: Apache-2.0
// The public SandboxExecutor over the consumer's SandboxBashExecutor: the request mapped onto a
// RunSpec, the RunOutcome mapped back onto plain fields.
#include "dsh/sandbox/executor.h"

#include <unistd.h>

#include <array>
#include <climits>
#include <variant>

#include <fmt/format.h>

#include "consumer/bash_executor.h"
#include "consumer/render.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/roots.h"

namespace dsh::sandbox {

namespace {

std::string current_directory() {
  std::array<char, PATH_MAX> buffer{};
  if (::getcwd(buffer.data(), buffer.size()) == nullptr) {
    throw InvalidSandboxInputError(
        "run: the working directory cannot be read; give workspace_root");
  }
  return buffer.data();
}

consumer::RunSpec make_spec(const RunRequest& request) {
  // deny is the default, so under danger-full-access it says nothing (the command runs
  // unconfined, with the caller's network); an allow-list is always asked for, and unenforceable.
  if (request.mode == SandboxMode::kDangerFullAccess &&
      request.network == NetworkPolicy::kAllowList) {
    throw InvalidSandboxInputError(
        "run: a network allow-list under danger-full-access: the command runs unconfined, so "
        "nothing would enforce it");
  }
  if (request.timeout_ms && (*request.timeout_ms <= 0 || *request.timeout_ms > 600'000)) {
    throw InvalidSandboxInputError(fmt::format(
        "run: timeout {} ms: expected more than 0 and at most 600000 ms", *request.timeout_ms));
  }
  consumer::RunSpec spec;
  spec.argv = request.argv;
  spec.policy.mode = request.mode;
  spec.policy.network =
      request.mode == SandboxMode::kDangerFullAccess ? NetworkPolicy::kInherit : request.network;
  const std::string root =
      request.workspace_root.empty() ? current_directory() : request.workspace_root;
  spec.policy.workspace_root = resolve_workspace_root(root);
  spec.process.workdir = request.workdir;  // resolved by the executor's one workdir rule
  for (const auto& [name, value] : request.env) spec.process.env.insert_or_assign(name, value);
  spec.process.timeout_ms = request.timeout_ms;
  spec.process.on_stdout = request.on_stdout;
  spec.process.on_stderr = request.on_stderr;
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
  result.exit_status = consumer::exit_status(outcome.status);
  return result;
}

}  // namespace

SandboxExecutor::SandboxExecutor(SandboxProvider& provider) : provider_(provider) {}

RunResult SandboxExecutor::run(const RunRequest& request) {
  consumer::SandboxBashExecutor executor(provider_);
  return result_of(executor.run(make_spec(request)));
}

}  // namespace dsh::sandbox
