// SPDX-License-Identifier: Apache-2.0
// The single source of truth for every seccomp rule the launcher installs: PURE data, read by
// seccomp_filter.cc to build the filter and by the unit tests to check it. Each rule fails one
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

namespace landlock_run {

enum class ArgMatch {
  kAny,        // every call fails
  kNotEqual,   // fails unless args[arg] == value (all 64 bits: garbage high bits fail too)
  kLow32Equal  // fails when (args[arg] & 0xffffffff) == value: the kernel reads an unsigned int
};

struct SyscallRule {
  int nr;
  const char* name;  // for tests and messages
  int err;
  ArgMatch match;
  unsigned arg;
  uint64_t value;
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

// --deny-network. io_uring is refused whole: its IORING_OP_SOCKET/CONNECT never pass through
// the socket() syscall, and an inherited ring would bypass a setup-only rule.
inline constexpr SyscallRule kNetworkRules[] = {
    {__NR_socket, "socket(!AF_UNIX)", EACCES, ArgMatch::kNotEqual, 0, kAfUnix},
    {__NR_socketpair, "socketpair(!AF_UNIX)", EACCES, ArgMatch::kNotEqual, 0, kAfUnix},
    {__NR_io_uring_setup, "io_uring_setup", EACCES, ArgMatch::kAny, 0, 0},
    {__NR_io_uring_enter, "io_uring_enter", EACCES, ArgMatch::kAny, 0, 0},
    {__NR_io_uring_register, "io_uring_register", EACCES, ArgMatch::kAny, 0, 0},
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

}  // namespace landlock_run
