// SPDX-License-Identifier: Apache-2.0
#include "profiles/runner_command.h"

#include "profiles/bwrap.h"
#include "profiles/netproxy.h"
#include "profiles/profiles.h"
#include "profiles/runner_spec.h"

namespace dsh::sandbox::profiles {

std::vector<std::string> documented_bwrap_args(const SandboxPolicy& policy) {
  std::vector<std::string> args = {"--ro-bind", "/",     "/",
                                   "--dev",     "/dev",  "--unshare-pid",
                                   "--proc",    "/proc", "--die-with-parent"};
  if (policy.mode == ConfinedSandboxMode::kWorkspaceWrite) {
    args.insert(args.end(),
                {"--tmpfs", "/tmp", "--bind", policy.workspace_root, policy.workspace_root});
  }
  return args;
}

std::vector<std::string> runner_command_ungoverned() {
  return {
      "file effects through capabilities: a command started by root keeps every capability (no "
      "--cap-drop ALL: runnerAcceptsHardening is off) and can remount the read-only root "
      "writable",
      "the caller's terminal: without --new-session the command can push input into it with "
      "TIOCSTI (CVE-2017-5226)",
      "the host's System V IPC and POSIX message queues: without --unshare-ipc the command "
      "reaches them"};
}

std::optional<std::string> runner_command_unsupported_reason(const SandboxPolicy& policy,
                                                             bool accepts_hardening) {
  if (accepts_hardening || policy.network != NetworkPolicy::kDeny) return std::nullopt;
  return "the runnerCommand cannot deny network access: the documented profile has no "
         "--unshare-net; set runnerAcceptsHardening to true in the config if the runner accepts "
         "bwrap's --unshare-net, --unshare-ipc, --new-session and --cap-drop ALL, or give the "
         "call --network inherit (the command then keeps the host's network)";
}

std::optional<std::string> runner_command_startup_refusal(const FsPlan& plan,
                                                          bool accepts_hardening) {
  if (accepts_hardening || plan.startup_guarded.empty()) return std::nullopt;
  return "a writable root reaches the home startup files (" + plan.startup_guarded.front() +
         "), and the runnerCommand's documented profile has no path rules to keep them "
         "read-only; set runnerAcceptsHardening to true if the runner accepts bwrap's whole "
         "profile, or name a writable root that does not contain a home directory";
}

namespace {

using Argv = std::vector<std::string>;

// Only the operator's word that it accepts them gives it bwrap's hardening options.
Argv runner_command_args(const LayerContext& context, RunnerPlace /*place*/) {
  if (context.runners.operator_runner.accepts_hardening) {
    return bwrap_args(context.policy, context.plan);
  }
  return documented_bwrap_args(context.policy);
}

// The operator's assertion covers what the profile asks for; what it does not ask for is named.
// The documented profile has no path rules: the plan's carve-outs and unreadable paths are then
// not applied, and each is named (extra writable roots simply stay read-only).
void runner_command_limits(const LayerContext& context, RunnerPlace /*place*/,
                           ConfinedArgv& facts) {
  if (context.runners.operator_runner.accepts_hardening) return;
  const Argv gaps = runner_command_ungoverned();
  facts.ungoverned.insert(facts.ungoverned.end(), gaps.begin(), gaps.end());
  for (const PlannedPath& path : context.plan.read_only) {
    facts.ungoverned.push_back("read-only carve-out " + path.path +
                               " (the documented runner profile has no path rules)");
  }
  for (const PlannedPath& path : context.plan.unreadable) {
    facts.ungoverned.push_back("unreadable path " + path.path +
                               " (the documented runner profile has no path rules)");
  }
}

std::optional<std::string> runner_command_refusal(const LayerContext& context,
                                                  RunnerPlace /*place*/) {
  const bool hardening = context.runners.operator_runner.accepts_hardening;
  if (context.policy.network == NetworkPolicy::kAllowList) {
    return netproxy_unsupported_reason(/*bwrap_backend=*/false);
  }
  if (auto reason = runner_command_unsupported_reason(context.policy, hardening)) return reason;
  return runner_command_startup_refusal(context.plan, hardening);
}

}  // namespace

const RunnerSpec& runner_command_spec() {
  static const RunnerSpec spec{
      .layer = RunnerLayer::kRunnerCommand,
      .role = "runnerCommand",
      .backend = std::nullopt,
      .confines = true,
      .source = RunnerSource::kOperator,
      .installed_name = {},
      .located_by = "the config's runnerCommand (src/local/config.cpp)",
      .probe = RunnerProbe::kNever,
      .program = [](const Runners& runners) { return runners.operator_runner.command; },
      .args = runner_command_args,
      // The mechanism is unknown: no channel, no --chdir (a runner given flags it does not know
      // would refuse to start).
      .status_channel = no_status_channel,
      .failure_rule =
          [](const Runners& runners) {
            return RunnerFailureRule{std::nullopt, runners.operator_runner.failure_signatures,
                                     std::nullopt};
          },
      .limits = runner_command_limits,
      .refusal = runner_command_refusal,
      // The mechanism is unknown, so both Linux dialects, never bare EPERM.
      .denial_signatures =
          [] {
            return Argv{"read-only file system", "permission denied"};
          },
      // The reference's rule: the operator asserts full. What the documented profile leaves out
      // stays named in `ungoverned`, and the strict reading is partial then.
      .enforcement = [](const LayerContext&) { return SandboxEnforcement::kFull; },
      // The documented profile's view: the host read-only, the workspace writable.
      .host_writable = bwrap_host_writable,
  };
  return spec;
}

ConfinedArgv wrap_runner_command(std::span<const std::string> runner_command,
                                 std::span<const std::string> failure_signatures,
                                 std::span<const std::string> argv, const SandboxPolicy& policy,
                                 bool accepts_hardening, const FsPlan& plan) {
  Runners runners;
  runners.operator_runner = {Argv(runner_command.begin(), runner_command.end()),
                             Argv(failure_signatures.begin(), failure_signatures.end()),
                             accepts_hardening};
  return compose_wrap(operator_layers(), Selection{}, runners, argv, policy, {}, {}, {}, plan);
}

}  // namespace dsh::sandbox::profiles
