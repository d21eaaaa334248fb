// SPDX-License-Identifier: Apache-2.0
// landlock-run grants plus the launcher's hardening options this kernel supports.
#include "profiles/landlock_run.h"

#include "dsh/sandbox/roots.h"
#include "profiles/netproxy.h"

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
  // The allow-list: TCP to the bridge's loopback port only (Landlock ABI 4), and no UDP or raw
  // socket at all (seccomp); bwrap's network namespace is the route's first wall.
  if (policy.network == NetworkPolicy::kAllowList && features.abi >= 4 && features.deny_network) {
    args.insert(args.end(), {"--allow-connect-port", std::to_string(kNetProxyPort)});
  }
  return args;
}

std::vector<std::string> landlock_run_args(const RunNeeds& needs) {
  if (!needs.status_channels) return {};
  return {"--status-fd", std::to_string(kLauncherStatusFd)};
}

StatusChannel landlock_status_channel() {
  return {kLauncherStatusFd, RunnerLayer::kLandlockRun, StatusFormat::kLauncherLines};
}

bool landlock_host_writable(std::string_view path, const SandboxPolicy& policy) {
  return policy.mode == ConfinedSandboxMode::kWorkspaceWrite &&
         (is_beneath(path, policy.workspace_root) || is_beneath(path, "/tmp"));
}

namespace {

constexpr std::string_view kLandlockNotice =
    "landlock-run: partial enforcement (older Landlock ABI)";

}  // namespace

RunnerFailureRule landlock_failure_rule() {
  return {std::vector<int>{125},
          {"landlock-run: "},
          std::vector<std::string>{std::string(kLandlockNotice)}};
}

// Landlock governs file writes, not file metadata; --deny-metadata's seccomp filter closes that
// gap under read-only only, and older ABIs govern fewer write paths.
std::vector<std::string> landlock_ungoverned(const SandboxPolicy& policy,
                                             const LandlockFeatures& features) {
  std::vector<std::string> gaps;
  if (features.abi < 3) gaps.emplace_back("file truncation (Landlock ABI < 3)");
  if (features.abi < 5) gaps.emplace_back("ioctl on device files (Landlock ABI < 5)");
  if (policy.mode == ConfinedSandboxMode::kWorkspaceWrite) {
    gaps.emplace_back(
        "file metadata outside the workspace: chmod, chown, utimes and extended attributes "
        "(Landlock does not govern them)");
  } else if (!features.deny_metadata) {
    gaps.emplace_back(
        "file metadata: chmod, chown, utimes and extended attributes (Landlock does not govern "
        "them and seccomp is unavailable)");
  }
  if (gaps.empty() && features.enforcement == SandboxEnforcement::kPartial) {
    gaps.emplace_back("write paths of a newer Landlock ABI than this kernel's");
  }
  return gaps;
}

void append_kernel_refusals(std::vector<std::string>& refused) {
  refused.insert(
      refused.end(),
      {"SysV IPC and POSIX message queues: shmget, shmat, shmctl, shmdt, msg*, sem*, mq_* fail "
       "with EPERM (on the host they reach the caller's objects; under bwrap the run's IPC "
       "namespace is private as well)",
       "kernel keyrings: add_key, keyctl and request_key fail with EPERM (keys belong to the "
       "caller's session, and request_key makes the kernel run a host helper as root)",
       "user namespaces: unshare and clone with CLONE_NEWUSER and setns fail with EPERM, clone3 "
       "with ENOSYS (a new user namespace hands back every capability the sandbox dropped)",
       "personality beyond PER_LINUX, PER_LINUX32 and UNAME26 fails with EPERM (it would weaken "
       "the memory layout of what the command executes, e.g. ADDR_NO_RANDOMIZE)"});
}

void append_host_device_refusals(std::vector<std::string>& refused) {
  refused.insert(
      refused.end(),
      {"pseudo-terminals: /dev/ptmx and /dev/pts are the host's, beside the person's other "
       "terminals, so opening a pty fails with EACCES (script, tmux, pty.openpty)",
       "POSIX shared memory and semaphores: /dev/shm is the host's, holding other programs' "
       "objects, so shm_open and sem_open fail with EACCES (Python multiprocessing locks)"});
}

RunnerReport landlock_status_report(std::string_view status) {
  // Only the launcher writes there, and only when it failed.
  while (!status.empty() && (status.back() == '\n' || status.back() == '\r')) {
    status.remove_suffix(1);
  }
  if (auto refused = exec_refusal(status, "landlock-run: exec failed: ")) return {{}, refused, {}};
  if (!status.empty()) return {std::string(status), {}, {}};
  return {};
}

}  // namespace dsh::sandbox::profiles
