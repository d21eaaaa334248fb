// SPDX-License-Identifier: Apache-2.0
// `dsh-sandbox confine`: the confined argv `run` would spawn, as JSON (the reference's field
// names, with the effective policy); runs nothing. Its caller spawns the argv, so the call is
// admitted and its workspace recorded as run's is.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/call.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "dsh/sandbox/errors.h"
#include "exec/exec.h"
#include "seam/json_codec.h"

namespace dsh::sandbox::cli {

namespace {

constexpr std::string_view kNothingToConfine =
    "confine: danger-full-access runs the command unconfined; there is nothing to confine";

void check_confine_flags(Options& options) {
  if (options.argv.empty()) {
    throw InvalidSandboxInputError("confine: give the command after -- as ARGV...");
  }
  if (options.mode == wire_name(SandboxMode::kDangerFullAccess)) {
    throw InvalidSandboxInputError(std::string(kNothingToConfine));
  }
}

int confine_call(Call& call) {
  const std::optional<SandboxPolicy> policy = to_sandbox_policy(call.plan->policy);
  if (!policy) throw InvalidSandboxInputError(std::string(kNothingToConfine));
  plan::admit(*call.plan, call.plan->policy, "dsh-sandbox");
  LocalSandboxProvider provider = plan::plan_provider(*call.plan);
  // The directory the caller will spawn the argv in: bwrap enters it (--chdir) or refuses.
  // By default where run runs it: the policy root (run's --workdir rule without --workdir).
  const Options& options = call.options;
  const std::string cwd = options.cwd.empty() ? policy->workspace_root : options.cwd;
  // The tmpfs mounts sized as a `run` with the default memory bound sizes them (half of RAM,
  // tmpfs' own default too), so the argv printed is the one such a run spawns.
  const ConfinedArgv confined =
      provider.confine(ConfineRequest{options.argv, *policy, cwd, options.status_channels,
                                      call.run.evidence, exec::default_max_memory_bytes()});
  nlohmann::json printed = json::to_value(confined);
  printed["policy"] = effective_policy_view(*policy);
  fmt::print("{}\n", json::dump(printed).value());
  if (options.verbose) {
    fmt::print(stderr, "dsh-sandbox: mode {}: backend {} ({}), {}\n", wire_name(policy->mode),
               confined.backend, enforcement_text(confined.strict_enforcement, confined.ungoverned),
               backend_choice(confined.backend));
  }
  return 0;
}

}  // namespace

int confine(const Options& options) {
  return prepared_call(options, check_confine_flags, confine_call);
}

}  // namespace dsh::sandbox::cli
