// SPDX-License-Identifier: Apache-2.0
// The scaffolding the filter wrappers share (deny_namespaces, deny_seccomp): `NAME ARGV...`
// installs a seccomp filter that allows everything but what `add_rules` adds, then execs ARGV.
// A failure says which step failed and exits 126, as a shell does for a command it cannot run.
#pragma once

#include <seccomp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace dsh::probes {

inline int fail(const char* name, const char* what, int error) {
  std::fprintf(stderr, "%s: %s: %s\n", name, what, std::strerror(error));
  return 126;
}

// `add_rules(filter)` returns 0, or a negative errno as libseccomp's calls do.
template <typename AddRules>
int exec_filtered(const char* name, int argc, char** argv, AddRules add_rules) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s ARGV...\n", name);
    return 2;
  }
  // An unprivileged caller may install a filter only with no_new_privs.
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return fail(name, "no_new_privs", errno);
  scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
  if (filter == nullptr) return fail(name, "seccomp_init", ENOMEM);
  int rc = add_rules(filter);
  if (rc == 0) rc = seccomp_load(filter);
  seccomp_release(filter);
  if (rc != 0) return fail(name, "seccomp filter", -rc);
  execv(argv[1], argv + 1);
  return fail(name, argv[1], errno);
}

}  // namespace dsh::probes
