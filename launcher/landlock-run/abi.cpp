// SPDX-License-Identifier: Apache-2.0
// Pure ABI table: which rights a ruleset handles at each Landlock ABI. Unit-tested over
// ABI 0..N+1 and fuzzed; no syscalls.
#include "abi.h"

namespace landlock_run {

int effective_abi(long kernel_abi, int max_abi) {
  if (kernel_abi < 1) return 0;  // ENOSYS (not built) or EOPNOTSUPP (built, not in lsm=)
  const long capped = (max_abi >= 0 && kernel_abi > max_abi) ? max_abi : kernel_abi;
  return capped > 1000 ? 1000 : static_cast<int>(capped);
}

uint64_t handled_fs_for_abi(int abi) {
  if (abi < 1) return 0;
  uint64_t handled = kFsAbi1;
  // Each step adds the rights its ABI introduced (sandboxer.c's fallthrough, inverted).
  if (abi >= 2) handled |= kFsRefer;     // Linux 5.19
  if (abi >= 3) handled |= kFsTruncate;  // Linux 6.2
  if (abi >= 5) handled |= kFsIoctlDev;  // Linux 6.10 (ABI 4 added only TCP rights)
  return handled;                        // ABI 6 and 7 added no filesystem right
}

uint64_t handled_net_for_abi(int abi) {
  return abi >= kNetAbi ? (kNetBindTcp | kNetConnectTcp) : 0;
}

uint64_t scopes_for_abi(int abi) {
  return abi >= kScopeAbi ? (kScopeAbstractUnixSocket | kScopeSignal) : 0;
}

uint64_t rule_access(uint64_t handled, bool read_write, bool is_directory) {
  uint64_t access = read_write ? handled : (kFsReadOnly & handled);
  if (!is_directory) access &= kFsFileCompatible;
  return access;
}

uint64_t list_access(uint64_t handled, bool is_directory) {
  return is_directory ? (kFsReadDir & handled) : 0;
}

bool is_partial(int abi) { return abi < kFullEnforcementAbi; }

const char* probe_report_line(int abi) {
  return is_partial(abi) ? "landlock: partially enforced (older ABI)\n"
                         : "landlock: fully enforced\n";
}

}  // namespace landlock_run
