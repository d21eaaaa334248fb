// SPDX-License-Identifier: Apache-2.0
// windows-acl runner arguments: the agentless form. Per-session workspace and
// temp SIDs need the ACL grant lifecycle, which only a Windows host can run.
#include "profiles/windows_acl.h"

#include "profiles/bwrap.h"
#include "profiles/runner_spec.h"

namespace dsh::sandbox::profiles {

std::vector<std::string> windows_acl_args(const SandboxPolicy& policy, std::string_view temp_dir) {
  return {"--workspace", policy.workspace_root,
          "--temp",      std::string(temp_dir),
          "--mode",      std::string(wire_name(policy.mode))};
}

RunnerFailureRule windows_acl_failure_rule() {
  return {std::vector<int>{127}, {"windows-acl-run: "}, std::nullopt};
}

std::vector<std::string> windows_acl_denial_signatures() {
  return {"access is denied", "access to the path", "permission denied"};
}

std::vector<std::string> windows_acl_ungoverned() {
  return {"objects that grant Everyone write access stay writable",
          "NTFS hard links alias files inside and outside the workspace",
          "FAT volumes outside the grants"};
}

const RunnerSpec& windows_acl_spec() {
  using Argv = std::vector<std::string>;
  static const RunnerSpec spec{
      .layer = RunnerLayer::kWindowsAcl,
      .role = "windows-acl runner",
      .backend = SandboxBackend::kWindowsAcl,
      .confines = true,
      .source = RunnerSource::kOperator,
      .installed_name = {},
      .located_by = "the embedding program's windows_acl_runner hook",
      .probe = RunnerProbe::kBackend,
      .program = [](const Runners& runners) { return runners.windows_acl; },
      .args = [](const LayerContext& context,
                 RunnerPlace) { return windows_acl_args(context.policy, context.temp_dir); },
      .status_channel = no_status_channel,
      .failure_rule = [](const Runners&) { return windows_acl_failure_rule(); },
      .limits =
          [](const LayerContext&, RunnerPlace, ConfinedArgv& facts) {
            const Argv gaps = windows_acl_ungoverned();
            facts.ungoverned.insert(facts.ungoverned.end(), gaps.begin(), gaps.end());
          },
      .refusal = [](const LayerContext& context, RunnerPlace) -> std::optional<std::string> {
        if (context.policy.network != NetworkPolicy::kDeny) return std::nullopt;
        return "the windows-acl runner cannot deny network access";
      },
      .denial_signatures = windows_acl_denial_signatures,
      // The reference's verdict: partial (see windows_acl_ungoverned).
      .enforcement = [](const LayerContext&) { return SandboxEnforcement::kPartial; },
      // Its grants: the workspace, as bwrap's view.
      .host_writable = bwrap_host_writable,
  };
  return spec;
}

}  // namespace dsh::sandbox::profiles
