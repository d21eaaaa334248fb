// SPDX-License-Identifier: Apache-2.0
// Evidence (--evidence): the launcher forks; the child confines itself, installs the filter with a
// seccomp user-notification listener (Linux 5.0) and hands the listener to the parent over a
// socketpair (SCM_RIGHTS) before it execs the command; the parent, outside the sandbox, becomes the
// supervisor. It answers every notification (docs/evidence-and-network.md):
// - a call a rule refuses (kernel objects, --deny-network, --deny-metadata): the rule's errno,
//   exactly what the filter returned without evidence, plus a record;
// - a write-intent call (seccomp_rules.h kWriteIntentRules): SECCOMP_USER_NOTIF_FLAG_CONTINUE, so
//   Landlock decides as it always did, plus a record when the object, resolved as the kernel
//   resolves it for the command's process (from its root, cwd or dirfd, symbolic links before
//   "..", path_walk.h), lies outside every --rw grant. A record names that object, or
//   kUnknownPath, never the text the command spelled. A race (a path changed after it was read)
//   can only make a record wrong, never let a call through that Landlock refuses;
// - with --note-unreadable paths, every open (read-intent, kReadIntentRules): let through, plus
//   a `read` record when the object lies beneath a noted path, or the lookup was refused at a
//   directory beneath one (bwrap's mode-0000 tmpfs refuses the search);
// - a write-intent call whose object lies beneath a --note-read-only or --note-unreadable path
//   is recorded with rule deny-write or deny-read, writable root or not: the outer layer (bwrap's
//   read-only binds and masks) or the launcher's own grants refuse it there;
// - beneath a --guard-* path (a carve-out inside a --rw grant, which Landlock cannot refuse), the
//   call is resolved while it is pending and answered EACCES, with the same record. Best effort:
//   a command that swaps a link on the way between that lookup and the kernel's gets through;
//   the profile names those paths as ungoverned.
// Records go to the status fd as denial lines (denial_record.h), at most kMaxRecords, then one
// "denials-dropped N" when the run ends. The parent forwards signals sent to it, waits for the
// child and exits with its status. If the supervisor dies, every notified call fails with ENOSYS
// (the kernel's answer when a listener has no reader), and the child, whose parent-death signal is
// SIGKILL, dies with it.
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "seccomp_filter.h"
#include "unix_connect.h"

namespace landlock_run {

inline constexpr size_t kMaxRecords = 64;

struct SupervisorConfig {
  FilterChoice filter;
  const char* const* writable_roots;  // canonical absolute paths
  size_t writable_root_count;
  const char* const* read_only_notes;  // canonical; --note-read-only
  size_t read_only_note_count;
  const char* const* unreadable_notes;  // canonical; --note-unreadable and --guard-unreadable
  size_t unreadable_note_count;
  // canonical; --guard-*: noted paths (above) where the supervisor refuses calls itself
  const char* const* guarded_read_only;
  size_t guarded_read_only_count;
  const char* const* guarded_unreadable;
  size_t guarded_unreadable_count;
  // --rule-writes: write-class calls are decided by write_rules.h and performed here
  bool rule_writes;
  const char* const* homes;  // canonical; --rule-home
  size_t home_count;
  int status_fd;          // -1: count only
  UnixGuard* unix_guard;  // with filter.unix_guard: host Unix sockets are network
};

// Serves `listener` until `child` exits; returns the child's wait status.
int supervise(int listener, pid_t child, int signal_fd, const SupervisorConfig& config);

// Whether `path` is `root` or beneath it, component-wise ("/a/bc" is not beneath "/a/b").
bool path_beneath(const char* path, const char* root);

}  // namespace landlock_run
