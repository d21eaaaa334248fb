// SPDX-License-Identifier: Apache-2.0
// Starting a process directly inside a cgroup v2 directory (internal).
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace dsh::sandbox::exec::detail {

// clone3(CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP) (Linux 5.7): like clone(fn, stack, CLONE_VM |
// CLONE_VFORK | SIGCHLD, arg), but the child is born in the cgroup v2 directory `cgroup_dir`
// instead of its parent's, so it never migrates: joining through cgroup.procs takes the
// threadgroup lock for writing, which waits for an RCU grace period (milliseconds). `stack` is the
// lowest address of `stack_size` bytes. Returns the child's pid, or -1 with errno: ENOSYS where
// there is no clone3 (an older kernel, a seccomp filter that refuses it, an architecture without
// the entry here), E2BIG or EINVAL where the kernel lacks CLONE_INTO_CGROUP, EBADF, EOPNOTSUPP,
// EBUSY, EPERM or EACCES where that cgroup cannot take it; no child exists then.
pid_t clone_into_cgroup(int (*fn)(void*), void* stack, std::size_t stack_size, void* arg,
                        int cgroup_dir);

}  // namespace dsh::sandbox::exec::detail
