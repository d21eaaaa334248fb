// SPDX-License-Identifier: Apache-2.0
// windows-acl runner arguments: the agentless form. Per-session workspace and
// temp SIDs need the ACL grant lifecycle, which only a Windows host can run.
#include "profiles/windows_acl.h"

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

}  // namespace dsh::sandbox::profiles
