// SPDX-License-Identifier: Apache-2.0
// deny_namespaces ARGV...: runs ARGV under a seccomp filter that refuses to create namespaces,
// as a container runtime's default profile does (Docker's refuses unshare and clone with
// namespace flags with EPERM, and clone3 with ENOSYS because its flags live in memory a filter
// cannot read). Everything else is allowed. A test host where bwrap cannot create its sandbox.
#include <linux/sched.h>

#include <cstdint>
#include <initializer_list>

#include "filtered_exec.h"

namespace {

constexpr std::uint64_t kNamespaceFlags[] = {CLONE_NEWNS,    CLONE_NEWUTS, CLONE_NEWIPC,
                                             CLONE_NEWUSER,  CLONE_NEWPID, CLONE_NEWNET,
                                             CLONE_NEWCGROUP};

}  // namespace

int main(int argc, char** argv) {
  return dsh::probes::exec_filtered("deny_namespaces", argc, argv, [](scmp_filter_ctx filter) {
    int rc = 0;
    for (const std::uint64_t flag : kNamespaceFlags) {
      // (arg0 & flag) == flag, spelled without SCMP_A0's compound literal (not C++).
      scmp_arg_cmp has_flag{};
      has_flag.arg = 0;
      has_flag.op = SCMP_CMP_MASKED_EQ;
      has_flag.datum_a = flag;
      has_flag.datum_b = flag;
      for (const int call : {SCMP_SYS(unshare), SCMP_SYS(clone)}) {
        if (rc == 0) {
          rc = seccomp_rule_add_array(filter, SCMP_ACT_ERRNO(EPERM), call, 1, &has_flag);
        }
      }
    }
    if (rc == 0) rc = seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setns), 0);
    if (rc == 0) rc = seccomp_rule_add(filter, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    return rc;
  });
}
