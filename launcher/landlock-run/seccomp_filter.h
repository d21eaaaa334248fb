// SPDX-License-Identifier: Apache-2.0
// Builds and installs the launcher's seccomp filter, a classic-BPF program generated in
// seccomp_filter.cpp from the tables in seccomp_rules.h (no libseccomp, no allocation).
#pragma once

#include <stddef.h>

namespace landlock_run {

struct FilterChoice {
  bool deny_network = false;
  bool deny_metadata = false;
  bool stream_network_only = false;  // --allow-connect-port (net_allow.h)
};

// The largest program build_filter_bytes can produce, in bytes.
size_t max_filter_bytes();

// Builds the filter without loading it into `out` (at most `capacity` bytes) as the raw array of
// struct sock_filter, the form bwrap's --seccomp reads; *size gets its length. Returns 0 or a
// negative errno (-E2BIG when `capacity` is too small).
int build_filter_bytes(const FilterChoice& choice, unsigned char* out, size_t capacity,
                       size_t* size);

// Builds the filter without loading it and writes its program to `fd` as the raw array of
// struct sock_filter (for tests). Returns 0 or a negative errno.
int export_filter_bpf(const FilterChoice& choice, int fd);

// Builds and loads the filter into the calling thread. The terminal, IPC, keyring and namespace
// rules are always part of it. Requires no_new_privs (set earlier). Returns 0 or a negative errno.
int install_filter(const FilterChoice& choice);

}  // namespace landlock_run
