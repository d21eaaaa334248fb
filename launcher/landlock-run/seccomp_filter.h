// SPDX-License-Identifier: Apache-2.0
// Builds and installs the launcher's seccomp filter, a classic-BPF program generated in
// seccomp_filter.cpp from the tables in seccomp_rules.h (no libseccomp, no allocation).
#pragma once

#include <stddef.h>

namespace landlock_run {

struct SyscallRule;

struct FilterChoice {
  bool deny_network = false;
  bool deny_metadata = false;
  // Evidence: every non-quiet rule answers SECCOMP_RET_USER_NOTIF instead of its errno, and the
  // write-intent rules are added (supervisor.h). Installed only through install_notify_filter.
  bool notify = false;
  bool stream_network_only = false;  // --allow-connect-port (net_allow.h)
  // --private-netns: with deny_network, kNetnsNetworkRules replace kNetworkRules.
  bool private_netns = false;
  // With notify: every open is notified (kReadIntentRules), so that a refused read of a noted
  // unreadable path is recorded (supervisor.h).
  bool notify_reads = false;
  // With notify: the metadata calls (kMetadataRules) are notified for the supervisor to perform
  // inside the writable roots and refuse outside them (--contain-metadata, supervisor.h).
  bool contain_metadata = false;
  // The network is not inherited: the supervisor decides connect and AF_UNIX socket calls
  // (kUnixGuardRules, unix_connect.h), evidence or not; the filter then has a listener.
  bool unix_guard = false;
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

// The same with SECCOMP_FILTER_FLAG_NEW_LISTENER (Linux 5.0): returns the listener fd (close on
// exec) or a negative errno. choice.notify or choice.unix_guard must be set.
int install_notify_filter(const FilterChoice& choice);

// What the filter does with one call, evaluated from the same tables in the same order (for the
// supervisor, which must answer a notification exactly as the rule it came from). Null when no
// rule matches (the filter allowed it, never notified).
const SyscallRule* matching_rule(const FilterChoice& choice, int nr,
                                 const unsigned long long* args);

}  // namespace landlock_run
