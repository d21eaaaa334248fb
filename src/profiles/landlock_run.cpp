// SPDX-License-Identifier: Apache-2.0
// landlock-run grants plus the launcher's hardening options this kernel supports.
#include "profiles/profiles.h"

namespace dsh::sandbox::profiles {

std::vector<std::string> landlock_args(const SandboxPolicy& policy,
                                       const LandlockFeatures& features, LandlockPlace place) {
  // /dev/null is granted as a file, never /dev: on the host /dev/shm is a world-writable tmpfs
  // holding other programs' POSIX shared memory and semaphores, and /dev/pts the person's other
  // terminals (opening a pty's peer, even through TIOCGPTPEER, is checked against its path).
  std::vector<std::string> args = {"--ro", "/", "--rw", "/dev/null"};
  if (place == LandlockPlace::kInsideBwrap) {
    // bwrap's /dev is a private tmpfs: its /dev/shm directory and its devpts instance (a fresh
    // one, /dev/ptmx links into it) hold only what this run creates, and /dev/tty is the
    // controlling terminal of the run's own session (--new-session), so a pty it opened. A
    // --rw grant includes IOCTL_DEV (ABI 5), which terminal programs need.
    args.insert(args.end(), {"--rw", "/dev/pts", "--rw", "/dev/shm", "--rw", "/dev/tty"});
  }
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
