// SPDX-License-Identifier: Apache-2.0
// windows-acl runner arguments: the agentless form. Per-session workspace and
// temp SIDs need the ACL grant lifecycle, which only a Windows host can run.
#include "profiles/profiles.h"

namespace dsh::sandbox::profiles {

std::vector<std::string> windows_acl_args(const SandboxPolicy& policy, std::string_view temp_dir) {
  return {"--workspace", policy.workspace_root,
          "--temp",      std::string(temp_dir),
          "--mode",      std::string(wire_name(policy.mode))};
}

}  // namespace dsh::sandbox::profiles
