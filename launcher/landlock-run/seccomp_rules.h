// SPDX-License-Identifier: Apache-2.0
// The single source of truth for every seccomp rule the launcher installs: PURE data, read by
// seccomp_filter.cpp to build the filter and by the unit tests to check it. Each rule fails one
// syscall (optionally only for one argument value) with an explicit errno; everything else is
// allowed, because Landlock, not seccomp, is the filesystem boundary. Syscalls newer than Debian
// 12's headers are defined by number below; since Linux 5.1 new syscalls share one number on every
// architecture, so those numbers are portable.
#pragma once

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>

#ifndef __NR_io_uring_setup  // Linux 5.1
#define __NR_io_uring_setup 425
#define __NR_io_uring_enter 426
#define __NR_io_uring_register 427
#endif
#ifndef __NR_fchmodat2  // Linux 6.6: fchmodat with AT_SYMLINK_NOFOLLOW
#define __NR_fchmodat2 452
#endif
#ifndef __NR_setxattrat  // Linux 6.13: *xattrat, path relative to a dirfd
#define __NR_setxattrat 463
#define __NR_removexattrat 466
#endif
#ifndef __NR_file_setattr  // Linux 6.17: sets fsxattr flags (FS_IOC_FSSETXATTR by path)
#define __NR_file_setattr 469
#endif
#ifndef __NR_openat2  // Linux 5.6
#define __NR_openat2 437
#endif
#ifndef __NR_clone3  // Linux 5.3
#define __NR_clone3 435
#endif

namespace landlock_run {

enum class ArgMatch {
  kAny,          // every call fails
  kNotEqual,     // fails unless args[arg] == value (all 64 bits: garbage high bits fail too)
  kLow32Equal,   // fails when (args[arg] & 0xffffffff) == value: the kernel reads an unsigned int
  kLow32AnySet,  // fails when (args[arg] & value) != 0, value a mask within the low 32 bits
  kLow32NotIn,   // fails unless (args[arg] & 0xffffffff) is one of allowed[0..allowed_count)
  // fails when (args[guard_arg] & 0xffffffff) == guard_value and (args[arg] & 0xffffffff) !=
  // value: one argument's value required only for one value of another
  kLow32NotEqualIf,
  // fails when (args[guard_arg] & guard_value) != 0 and (args[arg] & value) != 0, both masks
  // within the low 32 bits: one argument's bits refused only when another's flags give it meaning
  kLow32AnySetIf
};

struct SyscallRule {
  int nr;
  const char* name;  // for tests and messages
  int err;
  ArgMatch match;
  unsigned arg;
  uint64_t value;
  const uint32_t* allowed = nullptr;  // kLow32NotIn only
  unsigned allowed_count = 0;
  // With evidence on, every rule becomes a notification the supervisor answers with `err` and
  // records, except a quiet one, which keeps failing in the filter itself: clone3's ENOSYS is
  // the libc's cue to fall back to clone, met at every fork, and no refusal of the policy.
  bool quiet = false;
  unsigned guard_arg = 0;  // kLow32NotEqualIf and kLow32AnySetIf only
  uint32_t guard_value = 0;
  // A notification even without evidence: the supervisor decides the call (unix_connect.h), and
  // `err` is only what its refusal answers.
  bool supervised = false;
};

// Terminal ioctl commands (x86_64/arm64 values, asm-generic/ioctls.h).
inline constexpr uint64_t kTiocsti = 0x5412;    // push a byte into a tty's input queue
inline constexpr uint64_t kTioclinux = 0x541C;  // VT ioctls, incl. selection paste
// Inode-flag ioctls (chattr): metadata writes Landlock does not govern.
inline constexpr uint64_t kFsIocSetflags = 0x40086602;
inline constexpr uint64_t kFsIoc32Setflags = 0x40046602;
inline constexpr uint64_t kFsIocFssetxattr = 0x401c5820;
inline constexpr uint64_t kAfUnix = 1;

// Always installed. legacy_tiocsti=1 kernels let any process holding a tty fd type into the
// caller's terminal (CVE-2017-5226's class); Landlock's IOCTL_DEV does not cover an inherited
// tty fd opened before the domain existed.
inline constexpr SyscallRule kTerminalRules[] = {
    {__NR_ioctl, "ioctl(TIOCSTI)", EPERM, ArgMatch::kLow32Equal, 1, kTiocsti},
    {__NR_ioctl, "ioctl(TIOCLINUX)", EPERM, ArgMatch::kLow32Equal, 1, kTioclinux},
};

// --deny-network (io_uring, which would reach sockets without socket(), is refused always:
// kIoUringRules). EAFNOSUPPORT, not EACCES: a refused socket reads "Address family not supported
// by protocol", what a kernel built without the family answers, so no consumer that classifies
// stderr by Landlock's "permission denied" takes the network's refusal for a file denial that a
// wider file mode would lift.
inline constexpr SyscallRule kNetworkRules[] = {
    {__NR_socket, "socket(!AF_UNIX)", EAFNOSUPPORT, ArgMatch::kNotEqual, 0, kAfUnix},
    {__NR_socketpair, "socketpair(!AF_UNIX)", EAFNOSUPPORT, ArgMatch::kNotEqual, 0, kAfUnix},
};

// --deny-network with --private-netns: the same wall, less NETLINK_ROUTE. Inside a network
// namespace of its own (bwrap --unshare-net) a route socket sees only lo, and changing an
// address or a route needs CAP_NET_ADMIN there, which the command never holds: what it gains is
// getifaddrs(3) and if_nameindex(3) (node's os.networkInterfaces()), which answer with lo instead
// of failing. In the host's namespace (Landlock alone) the table above applies: a route socket
// there would list the host's addresses and watch its routing changes.
inline constexpr uint64_t kAfNetlink = 16;
inline constexpr uint32_t kNetnsFamilies[] = {1 /* AF_UNIX */, 16 /* AF_NETLINK */};
inline constexpr SyscallRule kNetnsNetworkRules[] = {
    {__NR_socket, "socket(!AF_UNIX, !AF_NETLINK)", EAFNOSUPPORT, ArgMatch::kLow32NotIn, 0, 0,
     kNetnsFamilies, 2},
    {__NR_socket, "socket(AF_NETLINK, !NETLINK_ROUTE)", EAFNOSUPPORT, ArgMatch::kLow32NotEqualIf, 2,
     0 /* NETLINK_ROUTE */, nullptr, 0, false, 0, kAfNetlink},
    {__NR_socketpair, "socketpair(!AF_UNIX)", EAFNOSUPPORT, ArgMatch::kNotEqual, 0, kAfUnix},
};

// --deny-metadata: mode, ownership, timestamps and xattrs, path and fd forms.
inline constexpr SyscallRule kMetadataRules[] = {
#ifdef __NR_chmod  // legacy path forms exist on x86_64, not on arm64
    {__NR_chmod, "chmod", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_chown, "chown", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_lchown, "lchown", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_utime, "utime", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_utimes, "utimes", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_futimesat, "futimesat", EPERM, ArgMatch::kAny, 0, 0},
#endif
    {__NR_fchmod, "fchmod", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_fchmodat, "fchmodat", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_fchmodat2, "fchmodat2", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_fchown, "fchown", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_fchownat, "fchownat", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_utimensat, "utimensat", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_setxattr, "setxattr", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_lsetxattr, "lsetxattr", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_fsetxattr, "fsetxattr", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_setxattrat, "setxattrat", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_removexattr, "removexattr", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_lremovexattr, "lremovexattr", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_fremovexattr, "fremovexattr", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_removexattrat, "removexattrat", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_file_setattr, "file_setattr", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_ioctl, "ioctl(FS_IOC_SETFLAGS)", EPERM, ArgMatch::kLow32Equal, 1, kFsIocSetflags},
    {__NR_ioctl, "ioctl(FS_IOC32_SETFLAGS)", EPERM, ArgMatch::kLow32Equal, 1, kFsIoc32Setflags},
    {__NR_ioctl, "ioctl(FS_IOC_FSSETXATTR)", EPERM, ArgMatch::kLow32Equal, 1, kFsIocFssetxattr},
};

// Always installed: a set-user-ID or set-group-ID bit is never set from inside. A file the run
// makes set-id in a writable root (or, as root on Landlock alone, anywhere it owns) runs with its
// owner's privileges when anyone executes it later, outside the sandbox. The mode is a register
// argument, so the filter reads it: chmod's and the creating calls' (O_CREAT's mode is kept as
// given, umask aside). openat2 keeps its mode in memory: the evidence supervisor reads it, and
// without evidence openat2 is refused whole (ENOSYS: callers fall back to openat).
inline constexpr uint64_t kSetIdBits = 06000;
// open and openat read their mode only with O_CREAT or O_TMPFILE (whose own bit is 020000000):
// without them the register holds whatever the caller left there (glibc's loader passes no mode),
// so the mode is judged only when the flags give it meaning.
inline constexpr uint32_t kCreatingFlags = 0100 | 020000000;
inline constexpr SyscallRule kSetIdRules[] = {
#ifdef __NR_chmod
    {__NR_chmod, "chmod(set-id)", EPERM, ArgMatch::kLow32AnySet, 1, kSetIdBits},
    {__NR_open, "open(set-id)", EPERM, ArgMatch::kLow32AnySetIf, 2, kSetIdBits, nullptr, 0, false,
     1, kCreatingFlags},
    {__NR_creat, "creat(set-id)", EPERM, ArgMatch::kLow32AnySet, 1, kSetIdBits},
    {__NR_mkdir, "mkdir(set-id)", EPERM, ArgMatch::kLow32AnySet, 1, kSetIdBits},
    {__NR_mknod, "mknod(set-id)", EPERM, ArgMatch::kLow32AnySet, 1, kSetIdBits},
#endif
    {__NR_fchmod, "fchmod(set-id)", EPERM, ArgMatch::kLow32AnySet, 1, kSetIdBits},
    {__NR_fchmodat, "fchmodat(set-id)", EPERM, ArgMatch::kLow32AnySet, 2, kSetIdBits},
    {__NR_fchmodat2, "fchmodat2(set-id)", EPERM, ArgMatch::kLow32AnySet, 2, kSetIdBits},
    {__NR_openat, "openat(set-id)", EPERM, ArgMatch::kLow32AnySetIf, 3, kSetIdBits, nullptr, 0,
     false, 2, kCreatingFlags},
    {__NR_mkdirat, "mkdirat(set-id)", EPERM, ArgMatch::kLow32AnySet, 2, kSetIdBits},
    {__NR_mknodat, "mknodat(set-id)", EPERM, ArgMatch::kLow32AnySet, 2, kSetIdBits},
};
// Without evidence only: openat2's mode lies in memory no filter reads.
inline constexpr SyscallRule kOpenat2Rules[] = {
    {__NR_openat2, "openat2", ENOSYS, ArgMatch::kAny, 0, 0},
};

// Always installed: host kernel objects that no file permission guards. On the Landlock backend
// the command shares the host's IPC namespace and its keyrings; bwrap gives a private IPC
// namespace but keeps the caller's keyrings, so every Linux backend carries these rules (bwrap
// receives the same program through its --seccomp descriptor).
//
// SysV IPC and POSIX message queues live in the IPC namespace, keyed by number or by name and
// guarded only by a mode the command's own uid usually satisfies: without these rules a confined
// command attaches to, overwrites and removes the caller's segments, and leaves its own pinned in
// host memory after the run.
inline constexpr SyscallRule kIpcRules[] = {
    {__NR_shmget, "shmget", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_shmat, "shmat", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_shmctl, "shmctl", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_shmdt, "shmdt", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_msgget, "msgget", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_msgsnd, "msgsnd", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_msgrcv, "msgrcv", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_msgctl, "msgctl", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_semget, "semget", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_semop, "semop", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_semtimedop, "semtimedop", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_semctl, "semctl", EPERM, ArgMatch::kAny, 0, 0},
#ifdef __NR_ipc  // the multiplexer of architectures that have one (not x86_64, not arm64)
    {__NR_ipc, "ipc", EPERM, ArgMatch::kAny, 0, 0},
#endif
    {__NR_mq_open, "mq_open", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_mq_unlink, "mq_unlink", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_mq_timedsend, "mq_timedsend", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_mq_timedreceive, "mq_timedreceive", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_mq_notify, "mq_notify", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_mq_getsetattr, "mq_getsetattr", EPERM, ArgMatch::kAny, 0, 0},
};

// Keyrings belong to the user and the session, not to a namespace bwrap can unshare: a command
// would read, update and revoke the caller's keys, and request_key(2) makes the kernel run the
// host's /sbin/request-key as root, outside every namespace, with a description the command
// chose (with keyutils' DNS resolver rule, a lookup that ignores a denied network).
inline constexpr SyscallRule kKeyringRules[] = {
    {__NR_add_key, "add_key", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_keyctl, "keyctl", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_request_key, "request_key", EPERM, ArgMatch::kAny, 0, 0},
};

inline constexpr uint64_t kCloneNewUser = 0x10000000;  // CLONE_NEWUSER, linux/sched.h
// personality(2) values a program may set, as Docker's default profile allows: PER_LINUX (0),
// PER_LINUX32 (uname reports a 32-bit machine), UNAME26 (uname reports 2.6.x), both, and the
// 0xffffffff query. Every other flag (ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, MMAP_PAGE_ZERO, a
// foreign execution domain such as PER_BSD) weakens the memory layout of what the command execs.
inline constexpr uint32_t kAllowedPersonalities[] = {0x0, 0x8, 0x20000, 0x20008, 0xffffffff};

// A user namespace gives its creator every capability inside it, and with them the kernel
// surface behind CAP_NET_ADMIN and CAP_SYS_ADMIN (nf_tables, mounts) that the capability drop
// took away. unshare and clone are refused when they ask for one; clone3 passes its flags in
// memory a filter cannot read, so it answers ENOSYS, on which glibc (2.34+) falls back to clone.
// setns joins an existing namespace: a user namespace the caller's uid owns grants it every
// capability there, so joining is refused whole (it also needs CAP_SYS_ADMIN for any other kind).
inline constexpr SyscallRule kNamespaceRules[] = {
    {__NR_unshare, "unshare(CLONE_NEWUSER)", EPERM, ArgMatch::kLow32AnySet, 0, kCloneNewUser},
    // clone's flags are args[0] on x86_64 and arm64 alike (only the tid/tls order differs).
    {__NR_clone, "clone(CLONE_NEWUSER)", EPERM, ArgMatch::kLow32AnySet, 0, kCloneNewUser},
    {__NR_clone3, "clone3", ENOSYS, ArgMatch::kAny, 0, 0, nullptr, 0, true},
    {__NR_setns, "setns", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_personality, "personality", EPERM, ArgMatch::kLow32NotIn, 0, 0, kAllowedPersonalities,
     sizeof(kAllowedPersonalities) / sizeof(kAllowedPersonalities[0])},
};

// Always installed: io_uring is refused whole. Its operations (IORING_OP_OPENAT, _RENAMEAT,
// _MKDIRAT, _SOCKET, _CONNECT, ...) run in the kernel without passing through the syscalls the
// rules above and the evidence supervisor see: Landlock still applies to them, but a refusal
// there would leave no record, and --deny-network's socket() rule would not apply at all. An
// inherited ring would bypass a setup-only rule, so enter and register are refused too. EPERM is
// the kernel's own answer when io_uring is disabled (kernel.io_uring_disabled, Linux 6.6), on
// which io_uring users (libuv, liburing) fall back to ordinary syscalls.
inline constexpr SyscallRule kIoUringRules[] = {
    {__NR_io_uring_setup, "io_uring_setup", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_io_uring_enter, "io_uring_enter", EPERM, ArgMatch::kAny, 0, 0},
    {__NR_io_uring_register, "io_uring_register", EPERM, ArgMatch::kAny, 0, 0},
};

// Evidence only: the calls that ask to change the filesystem, each a notification the supervisor
// answers SECCOMP_USER_NOTIF_FLAG_CONTINUE (err 0: the kernel, Landlock, decides) after noting
// whether it falls outside the writable roots. open and openat are notified only when their
// flags ask for writing (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC: O_TMPFILE needs a write mode
// too), so reads cost nothing here (kReadIntentRules adds them where an unreadable path is
// noted); openat2 keeps its flags in a struct a filter cannot read, so it is notified whole.
// chmod, chown, utimes and xattrs are absent: Landlock does not govern them (--deny-metadata
// refuses them through the rules above, --contain-metadata has the supervisor perform them).
inline constexpr uint64_t kOpenWriteFlags = 01 | 02 | 0100 | 01000;
inline constexpr SyscallRule kWriteIntentRules[] = {
#ifdef __NR_open  // legacy path forms exist on x86_64, not on arm64
    {__NR_open, "open(write)", 0, ArgMatch::kLow32AnySet, 1, kOpenWriteFlags},
    {__NR_creat, "creat", 0, ArgMatch::kAny, 0, 0},
    {__NR_mkdir, "mkdir", 0, ArgMatch::kAny, 0, 0},
    {__NR_mknod, "mknod", 0, ArgMatch::kAny, 0, 0},
    {__NR_unlink, "unlink", 0, ArgMatch::kAny, 0, 0},
    {__NR_rmdir, "rmdir", 0, ArgMatch::kAny, 0, 0},
    {__NR_rename, "rename", 0, ArgMatch::kAny, 0, 0},
    {__NR_link, "link", 0, ArgMatch::kAny, 0, 0},
    {__NR_symlink, "symlink", 0, ArgMatch::kAny, 0, 0},
#endif
    {__NR_openat, "openat(write)", 0, ArgMatch::kLow32AnySet, 2, kOpenWriteFlags},
    {__NR_openat2, "openat2", 0, ArgMatch::kAny, 0, 0},
    {__NR_mkdirat, "mkdirat", 0, ArgMatch::kAny, 0, 0},
    {__NR_mknodat, "mknodat", 0, ArgMatch::kAny, 0, 0},
    {__NR_unlinkat, "unlinkat", 0, ArgMatch::kAny, 0, 0},
#ifdef __NR_renameat
    {__NR_renameat, "renameat", 0, ArgMatch::kAny, 0, 0},
#endif
    {__NR_renameat2, "renameat2", 0, ArgMatch::kAny, 0, 0},
    {__NR_linkat, "linkat", 0, ArgMatch::kAny, 0, 0},
    {__NR_symlinkat, "symlinkat", 0, ArgMatch::kAny, 0, 0},
    {__NR_truncate, "truncate", 0, ArgMatch::kAny, 0, 0},
    // bind of a pathname AF_UNIX socket creates a node (Landlock's MAKE_SOCK); the family lives
    // in memory a filter cannot read, so every bind is notified and the supervisor reads it.
    {__NR_bind, "bind", 0, ArgMatch::kAny, 0, 0},
};

// Whenever the network is not inherited (--deny-network, --allow-connect-port): host Unix sockets
// are network, and the supervisor decides the calls that could reach one (unix_connect.h), with
// or without evidence. connect's address lies in memory a filter cannot read race-free, so every
// connect is the supervisor's to perform; socket and socketpair of AF_UNIX are notified so that a
// datagram socket, whose sendto/sendmsg carries an address, is refused (the other families are
// the network tables' above, which match first).
inline constexpr SyscallRule kUnixGuardRules[] = {
    {__NR_connect, "connect", ECONNREFUSED, ArgMatch::kAny, 0, 0, nullptr, 0, false, 0, 0, true},
    {__NR_socket, "socket(AF_UNIX)", EAFNOSUPPORT, ArgMatch::kLow32Equal, 0, kAfUnix, nullptr, 0,
     false, 0, 0, true},
    {__NR_socketpair, "socketpair(AF_UNIX)", EAFNOSUPPORT, ArgMatch::kLow32Equal, 0, kAfUnix,
     nullptr, 0, false, 0, 0, true},
};
// Without evidence (kWriteIntentRules notifies bind with it): bind, so that the supervisor notes
// the sockets the run binds, whose clients it lets through.
inline constexpr SyscallRule kUnixBindRules[] = {
    {__NR_bind, "bind(unix guard)", 0, ArgMatch::kAny, 0, 0, nullptr, 0, false, 0, 0, true},
};

// Evidence with unreadable paths noted (--note-unreadable): every open, whatever its flags, after
// the write-intent rules on the same syscalls (those match first). Reads of a default secret or a
// --deny-read path fail in the kernel's lookup or open, which no other call shows: the supervisor
// lets each through and records the refused ones. openat2 is a write-intent rule already.
inline constexpr SyscallRule kReadIntentRules[] = {
#ifdef __NR_open
    {__NR_open, "open(read)", 0, ArgMatch::kAny, 0, 0},
#endif
    {__NR_openat, "openat(read)", 0, ArgMatch::kAny, 0, 0},
};

}  // namespace landlock_run
