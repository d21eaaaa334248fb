// SPDX-License-Identifier: Apache-2.0
// Builds and installs the launcher's seccomp filter (libseccomp, linked statically) from the
// tables in seccomp_rules.h.
#pragma once

namespace landlock_run {

struct FilterChoice {
  bool deny_network = false;
  bool deny_metadata = false;
};

// Builds the filter without loading it and returns its BPF program written to `fd` (for tests
// and --features). Returns 0 or a negative errno.
int ExportFilterBpf(const FilterChoice& choice, int fd);

// Builds and loads the filter into the calling thread. The terminal rules are always part of
// it. Requires no_new_privs (set earlier). Returns 0 or a negative errno.
int InstallFilter(const FilterChoice& choice);

}  // namespace landlock_run
