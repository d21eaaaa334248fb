// SPDX-License-Identifier: Apache-2.0
// Builds and installs the launcher's seccomp filter, a classic-BPF program generated in
// seccomp_filter.cc from the tables in seccomp_rules.h (no libseccomp, no allocation).
#pragma once

namespace landlock_run {

struct FilterChoice {
  bool deny_network = false;
  bool deny_metadata = false;
};

// Builds the filter without loading it and writes its program to `fd` as the raw array of
// struct sock_filter (for tests). Returns 0 or a negative errno.
int ExportFilterBpf(const FilterChoice& choice, int fd);

// Builds and loads the filter into the calling thread. The terminal rules are always part of
// it. Requires no_new_privs (set earlier). Returns 0 or a negative errno.
int InstallFilter(const FilterChoice& choice);

}  // namespace landlock_run
