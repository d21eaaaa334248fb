// SPDX-License-Identifier: Apache-2.0
// Host Unix sockets are network. Landlock (ABIs up to 7) has no right for connect(2) to a
// pathname AF_UNIX socket, and a network namespace (bwrap --unshare-net) scopes only abstract
// names: with the network off or allow-listed, a command could still reach a host service's
// socket file (a Docker socket, a session bus). Whenever the network is not inherited, the
// supervisor decides every such call itself (seccomp_rules.h kUnixGuardRules):
// - connect: never let through to the kernel (the sockaddr lives in the task's memory, which
//   another thread may rewrite after it was read, and the descriptor may be swapped by dup2). The
//   supervisor takes the task's socket (pidfd_getfd, Linux 5.6), copies the address once and
//   performs the connect itself on that socket. A pathname is resolved as the kernel resolves it
//   for the task (its root or cwd, symbolic links followed, openat2 RESOLVE_IN_ROOT), the socket
//   node opened O_PATH and its identity (device, inode) checked: a socket the run bound (its
//   socket inode noted at bind(2), matched through sock_diag's UNIX_DIAG_VFS) or one listed with
//   --allow-unix-socket (identity taken at start-up) is connected through /proc/self/fd/N of
//   that very node, so a path swapped after the check cannot redirect it; any other is refused
//   with ECONNREFUSED and a network record. An abstract name is connected only when a socket the
//   run bound holds it (UNIX_DIAG_NAME), else EPERM, what Landlock's scoping (ABI 6) answers.
//   An AF_INET/AF_INET6 socket is connected by the supervisor only to the --allow-connect-port
//   port (Landlock's rule, ABI 4), else EACCES as Landlock answers; any other family as asked.
// - socket/socketpair of an AF_UNIX datagram socket: refused (EAFNOSUPPORT, as the allow-list's
//   stream-only rule): a datagram socket is the only kind whose sendto/sendmsg carries an
//   address, and that address lies in memory no filter can read race-free. Stream and seqpacket
//   sockets ignore or refuse a send address, so sendto and sendmsg need no decision.
// - bind: the socket's inode is noted, so its own clients can reach it later.
// A task the supervisor cannot read (non-dumpable) has its connects refused.
#pragma once

#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>

namespace landlock_run {

struct SyscallRule;

// A socket node's identity: st_dev and st_ino of the file.
struct SocketIdentity {
  uint64_t dev;
  uint64_t ino;
};

inline constexpr size_t kMaxBoundSockets = 256;

struct UnixGuard {
  const SocketIdentity* allowed = nullptr;  // --allow-unix-socket, taken at start-up
  size_t allowed_count = 0;
  int allow_connect_port = -1;  // --allow-connect-port; -1: no TCP connect at all
  // Socket inodes (sockfs) the run bound, oldest overwritten first once full (its clients are
  // then refused: failing closed).
  uint64_t bound[kMaxBoundSockets] = {};
  size_t bound_count = 0;
  size_t bound_next = 0;
};

// What a guarded call came to: answered here, and what to record.
struct UnixVerdict {
  bool record = false;
  const char* op = "connect";
  char path[4096] = "";
};

// Whether `rule` is one of the guard's (seccomp_rules.h kUnixGuardRules, kUnixBindRules).
bool is_unix_guard_rule(const SyscallRule& rule);

// Answers a notification of a guard rule (connect, socket, socketpair; bind when
// `answer_bind`, else the caller answers it). Returns true when answered here.
bool handle_unix_call(int listener, UnixGuard& guard, const seccomp_notif& notif, bool answer_bind,
                      UnixVerdict* verdict);

// bind(2), still pending: notes the socket's inode when it is an AF_UNIX one.
void note_unix_bind(UnixGuard& guard, const seccomp_notif& notif);

}  // namespace landlock_run
