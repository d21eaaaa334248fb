// SPDX-License-Identifier: Apache-2.0
#include "exec/clone_into.h"

#include <sched.h>
#include <sys/syscall.h>

#include <cerrno>
#include <csignal>
#include <cstdint>

namespace dsh::sandbox::exec::detail {

namespace {

// struct clone_args of linux/sched.h up to `cgroup` (CLONE_ARGS_SIZE_VER2, Linux 5.7), spelled
// out: Debian 12's headers lack it.
struct CloneArgs {
  std::uint64_t flags;
  std::uint64_t pidfd;
  std::uint64_t child_tid;
  std::uint64_t parent_tid;
  std::uint64_t exit_signal;
  std::uint64_t stack;
  std::uint64_t stack_size;
  std::uint64_t tls;
  std::uint64_t set_tid;
  std::uint64_t set_tid_size;
  std::uint64_t cgroup;
};
static_assert(sizeof(CloneArgs) == 88);

constexpr std::uint64_t kCloneIntoCgroup = 0x200000000ULL;  // CLONE_INTO_CGROUP

}  // namespace

}  // namespace dsh::sandbox::exec::detail

#if defined(__x86_64__)
// long dsh_exec_clone3(CloneArgs* args, size_t size, int (*fn)(void*), void* arg), as glibc's
// own clone3.S: glibc 2.36 exports no clone3. The child starts on the new stack with a copy of
// the registers, so it must not return into C code that expects the parent's frame: it calls
// fn(arg) and exits with its value. %rdx (fn) and %r8 (arg) survive the syscall instruction,
// which clobbers only %rcx and %r11. The parent gets the pid or -errno in %rax.
extern "C" long dsh_exec_clone3(void* args, std::size_t size, int (*fn)(void*), void* arg);
asm(R"(
	.text
	.p2align 4
	.globl dsh_exec_clone3
	.hidden dsh_exec_clone3
	.type dsh_exec_clone3, @function
dsh_exec_clone3:
	.cfi_startproc
	movq %rcx, %r8
	movl $435, %eax
	syscall
	testq %rax, %rax
	jz 1f
	ret
1:
	.cfi_undefined rip
	xorl %ebp, %ebp
	andq $-16, %rsp
	movq %r8, %rdi
	call *%rdx
	movl %eax, %edi
	movl $60, %eax
	syscall
	hlt
	.cfi_endproc
	.size dsh_exec_clone3, .-dsh_exec_clone3
)");
#endif

namespace dsh::sandbox::exec::detail {

pid_t clone_into_cgroup(int (*fn)(void*), void* stack, std::size_t stack_size, void* arg,
                        int cgroup_dir) {
#if defined(__x86_64__)
  static_assert(SYS_clone3 == 435 && SYS_exit == 60, "the x86-64 numbers the entry above uses");
  CloneArgs args{};
  args.flags = static_cast<std::uint64_t>(CLONE_VM | CLONE_VFORK) | kCloneIntoCgroup;
  args.exit_signal = SIGCHLD;
  args.stack = reinterpret_cast<std::uintptr_t>(stack);
  args.stack_size = stack_size;
  args.cgroup = static_cast<std::uint64_t>(cgroup_dir);
  const long pid = dsh_exec_clone3(&args, sizeof args, fn, arg);
  if (pid < 0) {
    errno = static_cast<int>(-pid);
    return -1;
  }
  return static_cast<pid_t>(pid);
#else
  (void)fn, (void)stack, (void)stack_size, (void)arg, (void)cgroup_dir;
  errno = ENOSYS;
  return -1;
#endif
}

}  // namespace dsh::sandbox::exec::detail
