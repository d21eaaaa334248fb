// SPDX-License-Identifier: Apache-2.0
// The seccomp filter: a classic-BPF program generated here from the rule tables. It replaced
// libseccomp, which is glibc-built (there is no musl libseccomp to link into the static musl
// launcher) and which we used only as a compiler for these ~30 rules.
//
// Program shape (every jump is short and forward; the kernel's checker rejects anything else):
//   1. ld arch; != the native AUDIT_ARCH -> KILL_PROCESS. Every other ABI (i386 via int 0x80 on
//      x86_64) has its own syscall numbers, so a filter written for one ABI must refuse all others.
//   2. x86_64 only: ld nr; nr >= __X32_SYSCALL_BIT -> KILL_PROCESS. x32 calls arrive under
//      AUDIT_ARCH_X86_64 with bit 30 set and would otherwise dodge every rule keyed on a number.
//   3. Every rule in table order, each its own block that starts and ends with A == nr and holds
//      its own RET, so no jump crosses a block: kAny is 2 instructions, kLow32Equal 5, kNotEqual 7.
//      Several rules on one syscall (the ioctl commands) therefore all apply, one after another.
//   4. RET ALLOW.
// SECCOMP_RET_KILL_PROCESS needs Linux 4.14 and the seccomp() syscall 3.17; Landlock needs 5.13
// (ABI 1), so every kernel the launcher can enforce on has both.
#include "seccomp_filter.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp_rules.h"

#if defined(__x86_64__)
#define LANDLOCK_RUN_AUDIT_ARCH AUDIT_ARCH_X86_64
#define LANDLOCK_RUN_CHECK_X32 1
#elif defined(__aarch64__)
#define LANDLOCK_RUN_AUDIT_ARCH AUDIT_ARCH_AARCH64
#define LANDLOCK_RUN_CHECK_X32 0  // arm64 has no second ABI under its own AUDIT_ARCH
#else
#error "landlock-run: add the architecture's AUDIT_ARCH (and any in-arch ABI split) here"
#endif

// Arguments are 64-bit but BPF_LD loads 32 bits: the low word of args[i] is at
// offsetof(args) + 8 * i and the high word 4 bytes later, on a little-endian host only.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "argument words are read little-endian");

namespace landlock_run {
namespace {

constexpr uint32_t kX32SyscallBit = 0x40000000U;  // __X32_SYSCALL_BIT, asm/unistd.h
constexpr uint32_t kNrOffset = offsetof(seccomp_data, nr);
constexpr uint32_t kArchOffset = offsetof(seccomp_data, arch);

constexpr uint32_t ArgLowOffset(unsigned arg) {
  return static_cast<uint32_t>(offsetof(seccomp_data, args)) + 8U * arg;
}

// Instructions per block, so the program's size is known at compile time (see kMaxProgram).
constexpr size_t kPrologueLength = LANDLOCK_RUN_CHECK_X32 ? 6 : 4;  // incl. ld nr
constexpr size_t BlockLength(ArgMatch match) {
  switch (match) {
    case ArgMatch::kAny:
      return 2;
    case ArgMatch::kLow32Equal:
      return 5;
    case ArgMatch::kNotEqual:
      return 7;
  }
  return 7;
}

template <size_t N>
constexpr size_t TableLength(const SyscallRule (&table)[N]) {
  size_t length = 0;
  for (const SyscallRule& rule : table) length += BlockLength(rule.match);
  return length;
}

// Every table on: the longest program. The kernel rejects more than BPF_MAXINSNS (4096).
constexpr size_t kMaxProgram = kPrologueLength + TableLength(kTerminalRules) +
                               TableLength(kNetworkRules) + TableLength(kMetadataRules) + 1;
static_assert(kMaxProgram <= BPF_MAXINSNS, "the filter must stay under BPF_MAXINSNS");

class Program {
 public:
  size_t size() const { return size_; }
  const sock_filter* data() const { return code_; }

  void Load(uint32_t offset) { Emit(BPF_LD | BPF_W | BPF_ABS, 0, 0, offset); }
  void Return(uint32_t action) { Emit(BPF_RET | BPF_K, 0, 0, action); }
  // Compares A with k; skips `if_true` / `if_false` instructions after this one.
  void JumpEq(uint32_t k, uint8_t if_true, uint8_t if_false) {
    Emit(BPF_JMP | BPF_JEQ | BPF_K, if_true, if_false, k);
  }
  void JumpGe(uint32_t k, uint8_t if_true, uint8_t if_false) {
    Emit(BPF_JMP | BPF_JGE | BPF_K, if_true, if_false, k);
  }

  // Appends one rule block; on entry and on fall-through exit A holds the syscall number.
  void Rule(const SyscallRule& rule) {
    const uint32_t nr = static_cast<uint32_t>(rule.nr);
    const uint32_t deny = SECCOMP_RET_ERRNO | (static_cast<uint32_t>(rule.err) & SECCOMP_RET_DATA);
    const uint32_t low = static_cast<uint32_t>(rule.value & 0xffffffffU);
    const uint32_t high = static_cast<uint32_t>(rule.value >> 32);
    const size_t start = size_;
    switch (rule.match) {
      case ArgMatch::kAny:
        JumpEq(nr, 0, 1);
        Return(deny);
        break;
      case ArgMatch::kLow32Equal:  // the kernel reads the command as an unsigned int
        JumpEq(nr, 0, 4);
        Load(ArgLowOffset(rule.arg));
        JumpEq(low, 0, 1);
        Return(deny);
        Load(kNrOffset);  // A is the argument now; the next rule may be on the same syscall
        break;
      case ArgMatch::kNotEqual:  // allowed only when all 64 bits match: high garbage fails
        JumpEq(nr, 0, 6);
        Load(ArgLowOffset(rule.arg));
        JumpEq(low, 0, 2);  // low differs: deny
        Load(ArgLowOffset(rule.arg) + 4);
        JumpEq(high, 1, 0);  // both words equal: skip the deny
        Return(deny);
        Load(kNrOffset);
        break;
    }
    // The block lengths above are what kMaxProgram was computed from.
    if (size_ - start != BlockLength(rule.match)) overflow_ = true;
  }

  template <size_t N>
  void Rules(const SyscallRule (&table)[N]) {
    for (const SyscallRule& rule : table) Rule(rule);
  }

  bool ok() const { return !overflow_; }

 private:
  void Emit(uint32_t code, uint8_t jt, uint8_t jf, uint32_t k) {
    if (size_ >= kMaxProgram) {
      overflow_ = true;
      return;
    }
    code_[size_++] = sock_filter{static_cast<uint16_t>(code), jt, jf, k};
  }

  sock_filter code_[kMaxProgram]{};
  size_t size_ = 0;
  bool overflow_ = false;
};

// Builds the whole program into *program. Returns 0 or -E2BIG (a miscounted block: never
// loaded, the launcher fails closed).
int Build(const FilterChoice& choice, Program* program) {
  program->Load(kArchOffset);
  program->JumpEq(LANDLOCK_RUN_AUDIT_ARCH, 1, 0);
  program->Return(SECCOMP_RET_KILL_PROCESS);
  program->Load(kNrOffset);
#if LANDLOCK_RUN_CHECK_X32
  program->JumpGe(kX32SyscallBit, 0, 1);
  program->Return(SECCOMP_RET_KILL_PROCESS);
#endif
  program->Rules(kTerminalRules);
  if (choice.deny_network) program->Rules(kNetworkRules);
  if (choice.deny_metadata) program->Rules(kMetadataRules);
  program->Return(SECCOMP_RET_ALLOW);
  return program->ok() ? 0 : -E2BIG;
}

}  // namespace

int ExportFilterBpf(const FilterChoice& choice, int fd) {
  Program program;
  if (const int rc = Build(choice, &program); rc != 0) return rc;
  const char* bytes = reinterpret_cast<const char*>(program.data());
  size_t left = program.size() * sizeof(sock_filter);
  while (left > 0) {
    const ssize_t n = write(fd, bytes, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -errno;
    if (n == 0) return -EIO;
    bytes += n;
    left -= static_cast<size_t>(n);
  }
  return 0;
}

int InstallFilter(const FilterChoice& choice) {
  Program program;
  if (const int rc = Build(choice, &program); rc != 0) return rc;
  const sock_fprog fprog{static_cast<unsigned short>(program.size()),
                         const_cast<sock_filter*>(program.data())};
  // seccomp() (Linux 3.17) first; prctl() only when it is ENOSYS, which an outer filter (a
  // container runtime's) may return for a syscall it does not know. Both need no_new_privs.
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0U, &fprog) == 0) return 0;
  if (errno != ENOSYS) return -errno;
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0UL, 0UL) == 0) return 0;
  return -errno;
}

}  // namespace landlock_run
