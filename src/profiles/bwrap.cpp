// SPDX-License-Identifier: Apache-2.0
// bwrap profile (extended from the reference's). Order is load-bearing: the read-only root comes
// first so every later mount lands on top of it; --tmpfs /tmp precedes --bind WS WS so a workspace
// under /tmp is bound over the fresh tmpfs instead of being hidden by it.
#include "profiles/profiles.h"

namespace dsh::sandbox::profiles {

std::vector<std::string> bwrap_args(const SandboxPolicy& policy) {
  std::vector<std::string> args = {
      "--ro-bind", "/", "/",  // the host, read-only
      "--dev", "/dev",        // a fresh minimal /dev with a writable /dev/null
      // A private PID namespace with its own /proc: with host PIDs visible, magic links such as
      // /proc/<pid>/root lead into host mount views and escape the read-only binds.
      "--unshare-pid", "--proc", "/proc", "--die-with-parent",
      // A private IPC namespace: the host's SysV segments, queues and semaphores and its POSIX
      // message queues are out of reach, and whatever the command makes dies with the run.
      "--unshare-ipc",
      // A new session: without it the command shares the caller's terminal and can push input
      // into it with TIOCSTI (CVE-2017-5226).
      "--new-session",
      // Without it a root caller's command keeps every capability and can remount / read-write.
      "--cap-drop", "ALL"};
  if (policy.network == NetworkPolicy::kDeny) args.emplace_back("--unshare-net");
  if (policy.mode == ConfinedSandboxMode::kWorkspaceWrite) {
    args.insert(args.end(),
                {"--tmpfs", "/tmp", "--bind", policy.workspace_root, policy.workspace_root});
  }
  return args;
}

}  // namespace dsh::sandbox::profiles
