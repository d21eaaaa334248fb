// SPDX-License-Identifier: Apache-2.0
// Capability drop. Without it a root caller's confined command keeps CAP_SYS_ADMIN and friends:
// Landlock forbids mount() in a domain, but not module loading, raw I/O or chown of any file.
#include "caps.h"

#include <errno.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace landlock_run {
namespace {

// linux/securebits.h values (Linux 2.6.26; the ambient pair Linux 4.3).
constexpr unsigned long kSecbitNoroot = 1UL << 0;
constexpr unsigned long kSecbitNorootLocked = 1UL << 1;
constexpr unsigned long kSecbitNoSetuidFixup = 1UL << 2;
constexpr unsigned long kSecbitNoSetuidFixupLocked = 1UL << 3;
constexpr unsigned long kSecbitKeepCapsLocked = 1UL << 5;
constexpr unsigned long kSecbitNoCapAmbientRaise = 1UL << 6;
constexpr unsigned long kSecbitNoCapAmbientRaiseLocked = 1UL << 7;

struct CapSets {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
};

int get_caps(CapSets* sets) {
  return syscall(SYS_capget, &sets->header, sets->data) == 0 ? 0 : -errno;
}

bool has_setpcap(const CapSets& sets) {
  return (sets.data[CAP_SETPCAP / 32].effective & (1U << (CAP_SETPCAP % 32))) != 0;
}

bool all_empty(const CapSets& sets) {
  for (const __user_cap_data_struct& d : sets.data) {
    if ((d.effective | d.permitted | d.inheritable) != 0) return false;
  }
  return true;
}

// Bounding set and securebits need CAP_SETPCAP, so they go before capset empties it.
int drop_bounding_and_lock() {
  const unsigned long bits = kSecbitNoroot | kSecbitNorootLocked | kSecbitNoSetuidFixup |
                             kSecbitNoSetuidFixupLocked | kSecbitKeepCapsLocked |
                             kSecbitNoCapAmbientRaise | kSecbitNoCapAmbientRaiseLocked;
  if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0) return -errno;
  // PR_CAPBSET_READ fails with EINVAL past the kernel's last capability.
  for (unsigned long cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; ++cap) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) return -errno;
  }
  return 0;
}

int bounding_set_empty() {
  for (unsigned long cap = 0;; ++cap) {
    const int rc = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
    if (rc < 0) return 0;
    if (rc > 0) return -EPERM;
  }
}

}  // namespace

int drop_capabilities() {
  CapSets sets;
  if (const int rc = get_caps(&sets); rc != 0) return rc;
  const bool full_drop = has_setpcap(sets);
  if (full_drop) {
    if (const int rc = drop_bounding_and_lock(); rc != 0) return rc;
  }
  // Ambient must go first: it may never exceed permitted & inheritable.
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
    return -errno;
  }
  CapSets empty;
  if (syscall(SYS_capset, &empty.header, empty.data) != 0) return -errno;
  // Verify rather than trust: fail closed if anything survived.
  if (const int rc = get_caps(&sets); rc != 0) return rc;
  if (!all_empty(sets)) return -EPERM;
  // Without CAP_SETPCAP the bounding set cannot shrink; no_new_privs then keeps an exec from
  // gaining anything (cap_bprm_creds_from_file intersects with the old permitted set).
  return full_drop ? bounding_set_empty() : 0;
}

}  // namespace landlock_run
