// SPDX-License-Identifier: Apache-2.0
#include "profiles/runner_command.h"

#include "profiles/bwrap.h"

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
         "bwrap's --unshare-net, --unshare-ipc, --new-session and --cap-drop ALL";
}

std::optional<std::string> runner_command_startup_refusal(const FsPlan& plan,
                                                          bool accepts_hardening) {
  if (accepts_hardening || plan.startup_guarded.empty()) return std::nullopt;
  return "a writable root reaches the home startup files (" + plan.startup_guarded.front() +
         "), and the runnerCommand's documented profile has no path rules to keep them "
         "read-only; set runnerAcceptsHardening to true if the runner accepts bwrap's whole "
         "profile, or name a writable root that does not contain a home directory";
}

ConfinedArgv wrap_runner_command(std::span<const std::string> runner_command,
                                 std::span<const std::string> failure_signatures,
                                 std::span<const std::string> argv, const SandboxPolicy& policy,
                                 bool accepts_hardening, const FsPlan& plan) {
  ConfinedArgv confined;
  confined.argv.assign(runner_command.begin(), runner_command.end());
  const std::vector<std::string> profile =
      accepts_hardening ? bwrap_args(policy, plan) : documented_bwrap_args(policy);
  confined.argv.insert(confined.argv.end(), profile.begin(), profile.end());
  confined.argv.emplace_back("--");
  confined.argv.insert(confined.argv.end(), argv.begin(), argv.end());
  // The operator's assertion covers what the profile asks for; what it does not ask for is named.
  // The documented profile has no path rules: the plan's carve-outs and unreadable paths are
  // then not applied, and each is named (extra writable roots simply stay read-only).
  if (!accepts_hardening) {
    confined.ungoverned = runner_command_ungoverned();
    for (const PlannedPath& path : plan.read_only) {
      confined.ungoverned.push_back("read-only carve-out " + path.path +
                                    " (the documented runner profile has no path rules)");
    }
    for (const PlannedPath& path : plan.unreadable) {
      confined.ungoverned.push_back("unreadable path " + path.path +
                                    " (the documented runner profile has no path rules)");
    }
  }
  // The reference's rule: the operator asserts full. What the documented profile leaves out
  // stays named in `ungoverned`, and the strict reading is partial then.
  confined.enforcement = SandboxEnforcement::kFull;
  confined.strict_enforcement = strict_reading(confined.enforcement, confined.ungoverned);
  // The mechanism is unknown, so both Linux dialects, never bare EPERM.
  confined.denial_signatures = {"read-only file system", "permission denied"};
  confined.runner_failure_rules = {
      {std::nullopt, std::vector<std::string>(failure_signatures.begin(), failure_signatures.end()),
       std::nullopt}};
  confined.layers = {RunnerLayer::kRunnerCommand};
  confined.backend = backend_label(confined.layers);
  confined.network = policy.network;
  return confined;
}

}  // namespace dsh::sandbox::profiles
