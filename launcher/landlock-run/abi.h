// SPDX-License-Identifier: Apache-2.0
// The Landlock UAPI this launcher speaks, defined here rather than taken from
// <linux/landlock.h> (Debian 12's headers stop at ABI 2 while the hosts run ABI 7), and the PURE
// table from an ABI version to what a ruleset handles. The table is the audit record: every
// constant names the ABI and the Linux release that introduced it. No syscalls in this file.
#pragma once

#include <stdint.h>

namespace landlock_run {

// Syscall numbers are identical on every architecture (Linux 5.13, ABI 1).
inline constexpr long kSysCreateRuleset = 444;
inline constexpr long kSysAddRule = 445;
inline constexpr long kSysRestrictSelf = 446;

inline constexpr uint32_t kCreateRulesetVersion = 1U << 0;  // ABI 1, Linux 5.13
inline constexpr int kRulePathBeneath = 1;                  // ABI 1, Linux 5.13

// Filesystem access rights (handled_access_fs / allowed_access).
inline constexpr uint64_t kFsExecute = 1ULL << 0;  // ABI 1, Linux 5.13 (bits 0-12)
inline constexpr uint64_t kFsWriteFile = 1ULL << 1;
inline constexpr uint64_t kFsReadFile = 1ULL << 2;
inline constexpr uint64_t kFsReadDir = 1ULL << 3;
inline constexpr uint64_t kFsMakeSym = 1ULL << 12;
inline constexpr uint64_t kFsAbi1 = (kFsMakeSym << 1) - 1;  // bits 0..12
inline constexpr uint64_t kFsRefer = 1ULL << 13;            // ABI 2, Linux 5.19
inline constexpr uint64_t kFsTruncate = 1ULL << 14;         // ABI 3, Linux 6.2
inline constexpr uint64_t kFsIoctlDev = 1ULL << 15;         // ABI 5, Linux 6.10

// Network access rights (handled_access_net), ABI 4, Linux 6.7. TCP only: UDP and every other
// protocol stay ungoverned by Landlock, which is why --deny-network leads with seccomp.
inline constexpr uint64_t kNetBindTcp = 1ULL << 0;
inline constexpr uint64_t kNetConnectTcp = 1ULL << 1;

// IPC scopes (ruleset_attr.scoped), ABI 6, Linux 6.12.
inline constexpr uint64_t kScopeAbstractUnixSocket = 1ULL << 0;
inline constexpr uint64_t kScopeSignal = 1ULL << 1;

// ABI 7 (Linux 6.15) added only audit-logging flags for restrict_self; we pass 0 (the default
// logging). The table below therefore knows every right up to ABI 7; a newer kernel is used at
// ABI 7's strength and its version is still reported as is.
inline constexpr int kNewestKnownAbi = 7;
// Below this ABI some file effect the modes promise is ungoverned (truncate before 3, device
// ioctl before 5): the run is "partial".
inline constexpr int kFullEnforcementAbi = 5;
inline constexpr int kNetAbi = 4;
inline constexpr int kScopeAbi = 6;

// Mirrors struct landlock_ruleset_attr (ABI 6 size). A shorter kernel accepts it as long as the
// fields it does not know are zero (copy_struct_from_user), so one layout serves every ABI.
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

// Mirrors struct landlock_path_beneath_attr, which the UAPI declares packed (12 bytes).
struct __attribute__((packed)) PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};
static_assert(sizeof(PathBeneathAttr) == 12, "the kernel reads exactly 12 bytes");

// Rights a rule on a non-directory may carry: the kernel rejects directory-only rights on a
// file rule with EINVAL, so --rw /dev/null needs this mask.
inline constexpr uint64_t kFsFileCompatible =
    kFsExecute | kFsWriteFile | kFsReadFile | kFsTruncate | kFsIoctlDev;
// What --ro grants: read and execute, so the wrapped shell and its children can run.
inline constexpr uint64_t kFsReadOnly = kFsExecute | kFsReadFile | kFsReadDir;

// The ABI the launcher acts on: the kernel's, lowered by the hidden test-only --max-abi cap.
// Negative kernel answers (ENOSYS, EOPNOTSUPP) map to 0, "not enforced".
int effective_abi(long kernel_abi, int max_abi);

// Filesystem rights handled at `abi` (0 for abi < 1), clamped at kNewestKnownAbi.
uint64_t handled_fs_for_abi(int abi);
// TCP rights handled for --deny-network at `abi` (0 below ABI 4).
uint64_t handled_net_for_abi(int abi);
// Scopes for --scope-ipc at `abi` (0 below ABI 6: the caller must fail closed).
uint64_t scopes_for_abi(int abi);
// Rights for one rule, reduced to what is handled and to file-compatible rights on a file.
uint64_t rule_access(uint64_t handled, bool read_write, bool is_directory);
// Rights for a --list rule: READ_DIR if handled, and nothing on a file (READ_DIR is
// directory-only, and a rule without rights is the kernel's ENOMSG).
uint64_t list_access(uint64_t handled, bool is_directory);

// "full" or "partial" for an enforcing ABI (>= 1).
bool is_partial(int abi);
// The probe's exact stdout line, newline included.
const char* probe_report_line(int abi);

}  // namespace landlock_run
