// SPDX-License-Identifier: Apache-2.0
// The seccomp filter, built from the rule tables. Architecture check: libseccomp emits one for the
// native architecture only; every other architecture (i386 via int 0x80, for instance) and the x32
// syscall range (nr >= 0x40000000 under AUDIT_ARCH_X86_64) hit the bad-architecture action,
// which we make KILL_PROCESS: refused, never allowed.
#include "seccomp_filter.h"

#include <seccomp.h>

#include <cerrno>

#include "seccomp_rules.h"

namespace landlock_run {
namespace {

int AddRule(scmp_filter_ctx ctx, const SyscallRule& rule) {
  const std::uint32_t action = SCMP_ACT_ERRNO(static_cast<std::uint32_t>(rule.err));
  switch (rule.match) {
    case ArgMatch::kAny:
      return seccomp_rule_add(ctx, action, rule.nr, 0);
    case ArgMatch::kNotEqual:
      return seccomp_rule_add(ctx, action, rule.nr, 1,
                              scmp_arg_cmp{rule.arg, SCMP_CMP_NE, rule.value, 0});
    case ArgMatch::kLow32Equal:  // the 64-bit compare with a 32-bit mask ignores the high half
      return seccomp_rule_add(
          ctx, action, rule.nr, 1,
          scmp_arg_cmp{rule.arg, SCMP_CMP_MASKED_EQ, 0xffffffffULL, rule.value});
  }
  return -EINVAL;
}

template <typename Table>
int AddRules(scmp_filter_ctx ctx, const Table& table) {
  for (const SyscallRule& rule : table) {
    if (const int rc = AddRule(ctx, rule); rc != 0) return rc;
  }
  return 0;
}

// Returns a filter context (caller releases it) or null with *error set.
scmp_filter_ctx Build(const FilterChoice& choice, int* error) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr) {
    *error = -ENOMEM;
    return nullptr;
  }
  int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  if (rc == 0) rc = AddRules(ctx, kTerminalRules);
  if (rc == 0 && choice.deny_network) rc = AddRules(ctx, kNetworkRules);
  if (rc == 0 && choice.deny_metadata) rc = AddRules(ctx, kMetadataRules);
  if (rc != 0) {
    seccomp_release(ctx);
    *error = rc;
    return nullptr;
  }
  return ctx;
}

}  // namespace

int ExportFilterBpf(const FilterChoice& choice, int fd) {
  int error = 0;
  scmp_filter_ctx ctx = Build(choice, &error);
  if (ctx == nullptr) return error;
  const int rc = seccomp_export_bpf(ctx, fd);
  seccomp_release(ctx);
  return rc;
}

int InstallFilter(const FilterChoice& choice) {
  int error = 0;
  scmp_filter_ctx ctx = Build(choice, &error);
  if (ctx == nullptr) return error;
  const int rc = seccomp_load(ctx);
  seccomp_release(ctx);
  return rc;
}

}  // namespace landlock_run
