// SPDX-License-Identifier: Apache-2.0
// landlock-run grants (spec §2.4) plus the launcher's hardening options this kernel supports.
#include "profiles.h"

namespace dsh::sandbox::profiles {

std::vector<std::string> landlock_args(const SandboxPolicy& policy,
                                       const LandlockFeatures& features) {
  // /dev/null is granted as a file, never /dev: /dev/shm is a world-writable host tmpfs, and a
  // /dev grant would let read-only commands leave persistent host effects.
  std::vector<std::string> args = {"--ro", "/", "--rw", "/dev/null"};
  const bool workspace_write = policy.mode == ConfinedSandboxMode::kWorkspaceWrite;
  if (workspace_write) {
    // The host /tmp, shared and persistent, as spelled (not canonicalized), as the reference.
    args.insert(args.end(), {"--rw", "/tmp", "--rw", policy.workspace_root});
  }
  if (features.scope_ipc) args.emplace_back("--scope-ipc");
  // Read-only promises no changes at all, metadata included; workspace-write needs chmod and
  // touch inside the workspace, and seccomp cannot tell inside from outside.
  if (!workspace_write && features.deny_metadata) args.emplace_back("--deny-metadata");
  if (policy.network == NetworkPolicy::kDeny) args.emplace_back("--deny-network");
  return args;
}

}  // namespace dsh::sandbox::profiles
