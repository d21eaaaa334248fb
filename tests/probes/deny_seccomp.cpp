// SPDX-License-Identifier: Apache-2.0
// deny_seccomp ARGV...: runs ARGV where no further seccomp filter can be installed: seccomp(2)
// and prctl(PR_SET_SECCOMP) fail with EINVAL, as on a kernel built without
// CONFIG_SECCOMP_FILTER. Landlock still works there. A test host where every confined run of the
// launcher fails (it installs its filter before it execs), so its probe must say unusable.
#include "filtered_exec.h"

int main(int argc, char** argv) {
  return dsh::probes::exec_filtered("deny_seccomp", argc, argv, [](scmp_filter_ctx filter) {
    int rc = seccomp_rule_add(filter, SCMP_ACT_ERRNO(EINVAL), SCMP_SYS(seccomp), 0);
    scmp_arg_cmp is_set_seccomp{};
    is_set_seccomp.arg = 0;
    is_set_seccomp.op = SCMP_CMP_EQ;
    is_set_seccomp.datum_a = PR_SET_SECCOMP;
    if (rc == 0) {
      rc = seccomp_rule_add_array(filter, SCMP_ACT_ERRNO(EINVAL), SCMP_SYS(prctl), 1,
                                  &is_set_seccomp);
    }
    return rc;
  });
}
