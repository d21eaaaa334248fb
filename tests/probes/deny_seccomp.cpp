// SPDX-License-Identifier: Apache-2.0
// deny_seccomp ARGV...: runs ARGV where no further seccomp filter can be installed: seccomp(2)
// and prctl(PR_SET_SECCOMP) fail with EINVAL, as on a kernel built without
// CONFIG_SECCOMP_FILTER. Landlock still works there. A test host where every confined run of the
// launcher fails (it installs its filter before it execs), so its probe must say unusable.
#include <seccomp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace {

int fail(const char* what, int error) {
  std::fprintf(stderr, "deny_seccomp: %s: %s\n", what, std::strerror(error));
  return 126;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: deny_seccomp ARGV...\n");
    return 2;
  }
  // An unprivileged caller may install a filter only with no_new_privs.
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return fail("no_new_privs", errno);
  scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
  if (filter == nullptr) return fail("seccomp_init", ENOMEM);
  int rc = seccomp_rule_add(filter, SCMP_ACT_ERRNO(EINVAL), SCMP_SYS(seccomp), 0);
  scmp_arg_cmp is_set_seccomp{};
  is_set_seccomp.arg = 0;
  is_set_seccomp.op = SCMP_CMP_EQ;
  is_set_seccomp.datum_a = PR_SET_SECCOMP;
  if (rc == 0) {
    rc =
        seccomp_rule_add_array(filter, SCMP_ACT_ERRNO(EINVAL), SCMP_SYS(prctl), 1, &is_set_seccomp);
  }
  if (rc == 0) rc = seccomp_load(filter);
  seccomp_release(filter);
  if (rc != 0) return fail("seccomp filter", -rc);
  execv(argv[1], argv + 1);
  return fail(argv[1], errno);
}
