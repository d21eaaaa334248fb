// SPDX-License-Identifier: Apache-2.0
#include "profiles/runner_command.h"

#include "profiles/bwrap.h"

namespace dsh::sandbox::profiles {

ConfinedArgv wrap_runner_command(std::span<const std::string> runner_command,
                                 std::span<const std::string> failure_signatures,
                                 std::span<const std::string> argv, const SandboxPolicy& policy,
                                 const FsPlan& plan) {
  ConfinedArgv confined;
  confined.argv.assign(runner_command.begin(), runner_command.end());
  const std::vector<std::string> profile = bwrap_args(policy, plan);
  confined.argv.insert(confined.argv.end(), profile.begin(), profile.end());
  confined.argv.emplace_back("--");
  confined.argv.insert(confined.argv.end(), argv.begin(), argv.end());
  // The operator's assertion: the mechanism is unknown, so both Linux dialects, never bare EPERM.
  confined.enforcement = SandboxEnforcement::kFull;
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
