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
//   3. A binary search on the syscall number (JGE on the middle of the rules' sorted numbers)
//      down to leaves of at most four units. A unit is a run of consecutive numbers each failed
//      whole with one errno (JGE low, JGT high, RET: 3 instructions), or one number with its
//      rules, stably sorted so rules on one syscall keep table order, each its own block that
//      starts and ends with A == nr and holds its own RET: kAny is 2 instructions, kLow32Equal and
//      kLow32AnySet 5, kNotEqual 7, kLow32NotIn 4 + the allowed values. Several rules on one
//      syscall (the ioctl commands) therefore all apply, one after another. Each leaf ends with
//      RET ALLOW.
// SECCOMP_RET_KILL_PROCESS needs Linux 4.14 and the seccomp() syscall 3.17; Landlock needs 5.13
// (ABI 1), so every kernel the launcher can enforce on has both.
#include "seccomp_filter.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "net_allow.h"
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

constexpr uint32_t arg_low_offset(unsigned arg) {
  return static_cast<uint32_t>(offsetof(seccomp_data, args)) + 8U * arg;
}

// Instructions per block, so the program's size is known at compile time (see kMaxProgram).
constexpr size_t kPrologueLength = LANDLOCK_RUN_CHECK_X32 ? 6 : 4;  // incl. ld nr
constexpr size_t block_length(const SyscallRule& rule) {
  switch (rule.match) {
    case ArgMatch::kAny:
      return 2;
    case ArgMatch::kLow32Equal:
    case ArgMatch::kLow32AnySet:
      return 5;
    case ArgMatch::kNotEqual:
      return 7;
    case ArgMatch::kLow32NotIn:
      return 4 + rule.allowed_count;
    case ArgMatch::kLow32NotEqualIf:
    case ArgMatch::kLow32AnySetIf:
      return 7;
  }
  return 7;
}

template <size_t N>
constexpr size_t table_length(const SyscallRule (&table)[N]) {
  size_t length = 0;
  for (const SyscallRule& rule : table) length += block_length(rule);
  return length;
}

// Every table on: the most rules and the longest program. Besides the rule blocks, the search
// tree adds one jump per inner node and one RET ALLOW per leaf: at most two per rule.
constexpr size_t kMaxRules =
    sizeof(kTerminalRules) / sizeof(SyscallRule) + sizeof(kIpcRules) / sizeof(SyscallRule) +
    sizeof(kKeyringRules) / sizeof(SyscallRule) + sizeof(kNamespaceRules) / sizeof(SyscallRule) +
    sizeof(kIoUringRules) / sizeof(SyscallRule) + sizeof(kSetIdRules) / sizeof(SyscallRule) +
    sizeof(kOpenat2Rules) / sizeof(SyscallRule) + sizeof(kNetworkRules) / sizeof(SyscallRule) +
    sizeof(kNetnsNetworkRules) / sizeof(SyscallRule) +
    sizeof(kMetadataRules) / sizeof(SyscallRule) + sizeof(kWriteIntentRules) / sizeof(SyscallRule) +
    sizeof(kReadIntentRules) / sizeof(SyscallRule) +
    sizeof(kStreamNetworkRules) / sizeof(SyscallRule) +
    sizeof(kUnixGuardRules) / sizeof(SyscallRule) + sizeof(kUnixBindRules) / sizeof(SyscallRule);
constexpr size_t kMaxProgram =
    kPrologueLength + table_length(kTerminalRules) + table_length(kIpcRules) +
    table_length(kKeyringRules) + table_length(kNamespaceRules) + table_length(kIoUringRules) +
    table_length(kSetIdRules) + table_length(kOpenat2Rules) + table_length(kNetworkRules) +
    table_length(kNetnsNetworkRules) + table_length(kMetadataRules) +
    table_length(kWriteIntentRules) + table_length(kReadIntentRules) +
    table_length(kStreamNetworkRules) + table_length(kUnixGuardRules) +
    table_length(kUnixBindRules) + 2 * kMaxRules + 1;
static_assert(kMaxProgram <= BPF_MAXINSNS, "the filter must stay under BPF_MAXINSNS");

// A leaf holds at most this many units (below), checked one after another.
constexpr size_t kLeafUnits = 4;

// What the search tree sorts: either one syscall number with all its rules, or a run of
// consecutive numbers that each carry exactly one rule, kAny with the same errno (the SysV IPC
// and keyring calls sit side by side in every syscall table), checked as one range.
struct Unit {
  int low;
  int high;      // == low for a single number
  size_t begin;  // its rules: [begin, end) of the sorted rules
  size_t end;
};

constexpr size_t unit_length(const Unit& unit, const SyscallRule* const* rules) {
  if (unit.high != unit.low) return 3;  // JGE low, JGT high, RET
  size_t length = 0;
  for (size_t i = unit.begin; i < unit.end; ++i) length += block_length(*rules[i]);
  return length;
}

// The active rules, stably sorted by syscall number (rules on one syscall keep table order), and
// the units they form.
class RuleSet {
 public:
  template <size_t N>
  void add(const SyscallRule (&table)[N]) {
    for (const SyscallRule& rule : table) insert(&rule);
  }
  // Groups the sorted rules into units; call once, after every Add.
  void finish() {
    units_ = 0;
    size_t i = 0;
    while (i < count_) {
      size_t end = i + 1;
      while (end < count_ && rules_[end]->nr == rules_[i]->nr) ++end;
      const bool lone_any = end - i == 1 && rules_[i]->match == ArgMatch::kAny;
      Unit* last = units_ > 0 ? &units_array_[units_ - 1] : nullptr;
      if (lone_any && last != nullptr && mergeable(*last) && last->high + 1 == rules_[i]->nr &&
          rules_[last->begin]->err == rules_[i]->err &&
          rules_[last->begin]->quiet == rules_[i]->quiet) {
        last->high = rules_[i]->nr;
        last->end = end;
      } else {
        units_array_[units_++] = Unit{rules_[i]->nr, rules_[i]->nr, i, end};
      }
      i = end;
    }
  }
  size_t units() const { return units_; }
  const Unit& unit(size_t i) const { return units_array_[i]; }
  const SyscallRule& rule(size_t i) const { return *rules_[i]; }
  const SyscallRule* const* rules() const { return rules_; }

 private:
  bool mergeable(const Unit& unit) const {
    return unit.end - unit.begin == static_cast<size_t>(unit.high - unit.low) + 1 &&
           rules_[unit.begin]->match == ArgMatch::kAny;
  }

  void insert(const SyscallRule* rule) {
    if (count_ >= kMaxRules) return;
    size_t at = count_;
    while (at > 0 && rules_[at - 1]->nr > rule->nr) {
      rules_[at] = rules_[at - 1];
      --at;
    }
    rules_[at] = rule;
    ++count_;
  }

  const SyscallRule* rules_[kMaxRules] = {};
  Unit units_array_[kMaxRules] = {};
  size_t count_ = 0;
  size_t units_ = 0;
};

class Program {
 public:
  explicit Program(bool notify) : notify_(notify) {}
  size_t size() const { return size_; }
  const sock_filter* data() const { return code_; }

  void load(uint32_t offset) { emit(BPF_LD | BPF_W | BPF_ABS, 0, 0, offset); }
  void ret(uint32_t action) { emit(BPF_RET | BPF_K, 0, 0, action); }
  // Compares A with k; skips `if_true` / `if_false` instructions after this one.
  void jump_eq(uint32_t k, size_t if_true, size_t if_false) { jump(BPF_JEQ, k, if_true, if_false); }
  void jump_ge(uint32_t k, size_t if_true, size_t if_false) { jump(BPF_JGE, k, if_true, if_false); }
  void jump_gt(uint32_t k, size_t if_true, size_t if_false) { jump(BPF_JGT, k, if_true, if_false); }
  void jump_set(uint32_t k, size_t if_true, size_t if_false) {
    jump(BPF_JSET, k, if_true, if_false);
  }

  // Appends one rule block; on entry and on fall-through exit A holds the syscall number.
  void rule(const SyscallRule& rule) {
    const uint32_t nr = static_cast<uint32_t>(rule.nr);
    const uint32_t deny = action(rule);
    const uint32_t low = static_cast<uint32_t>(rule.value & 0xffffffffU);
    const uint32_t high = static_cast<uint32_t>(rule.value >> 32);
    const size_t start = size_;
    switch (rule.match) {
      case ArgMatch::kAny:
        jump_eq(nr, 0, 1);
        ret(deny);
        break;
      case ArgMatch::kLow32Equal:  // the kernel reads the command as an unsigned int
        jump_eq(nr, 0, 4);
        load(arg_low_offset(rule.arg));
        jump_eq(low, 0, 1);
        ret(deny);
        load(kNrOffset);  // A is the argument now; the next rule may be on the same syscall
        break;
      case ArgMatch::kLow32AnySet:  // flags the kernel tests in the low word (CLONE_NEWUSER)
        jump_eq(nr, 0, 4);
        load(arg_low_offset(rule.arg));
        jump_set(low, 0, 1);
        ret(deny);
        load(kNrOffset);
        break;
      case ArgMatch::kLow32NotIn: {  // one equality per allowed value, each skipping the deny
        const size_t n = rule.allowed_count;
        jump_eq(nr, 0, n + 3);
        load(arg_low_offset(rule.arg));
        for (size_t i = 0; i < n; ++i) jump_eq(rule.allowed[i], n - i, 0);
        ret(deny);
        load(kNrOffset);
        break;
      }
      case ArgMatch::kLow32NotEqualIf:  // the guard argument first, then the required value
        jump_eq(nr, 0, 6);
        load(arg_low_offset(rule.guard_arg));
        jump_eq(rule.guard_value, 0, 3);  // guard not met: on to reloading the number
        load(arg_low_offset(rule.arg));
        jump_eq(low, 1, 0);  // the required value: skip the deny
        ret(deny);
        load(kNrOffset);
        break;
      case ArgMatch::kLow32AnySetIf:  // the guard's flags first, then the argument's bits
        jump_eq(nr, 0, 6);
        load(arg_low_offset(rule.guard_arg));
        jump_set(rule.guard_value, 0, 3);  // no guard flag: on to reloading the number
        load(arg_low_offset(rule.arg));
        jump_set(low, 0, 1);  // none of the bits: skip the deny
        ret(deny);
        load(kNrOffset);
        break;
      case ArgMatch::kNotEqual:  // allowed only when all 64 bits match: high garbage fails
        jump_eq(nr, 0, 6);
        load(arg_low_offset(rule.arg));
        jump_eq(low, 0, 2);  // low differs: deny
        load(arg_low_offset(rule.arg) + 4);
        jump_eq(high, 1, 0);  // both words equal: skip the deny
        ret(deny);
        load(kNrOffset);
        break;
    }
    // The block lengths above are what kMaxProgram was computed from.
    if (size_ - start != block_length(rule)) overflow_ = true;
  }

  // Appends one unit: its rules' blocks, or for a range of numbers that fail alike one check
  // of both ends. A holds the syscall number throughout.
  void emit_unit(const RuleSet& rules, const Unit& unit) {
    const size_t start = size_;
    if (unit.high == unit.low) {
      for (size_t i = unit.begin; i < unit.end; ++i) rule(rules.rule(i));
      return;
    }
    const SyscallRule& rule = rules.rule(unit.begin);
    jump_ge(static_cast<uint32_t>(unit.low), 0, 2);
    jump_gt(static_cast<uint32_t>(unit.high), 1, 0);
    ret(action(rule));
    if (size_ - start != unit_length(unit, rules.rules())) overflow_ = true;
  }

  // A binary search on the syscall number over the units [first, last), A holding the number
  // throughout: an inner node is one JGE on the middle unit's lowest number; a leaf is its few
  // units, then RET ALLOW. So any syscall meets ~log2(N) jumps plus a few comparisons instead of
  // every rule, which is also what the kernel emulates per syscall number when it attaches a
  // filter (its allow-cache, Linux 5.11); ranges and the tree keep the program short, which is
  // what its translation and JIT cost.
  void tree(const RuleSet& rules, size_t first, size_t last) {
    if (last - first <= kLeafUnits) {
      for (size_t i = first; i < last; ++i) emit_unit(rules, rules.unit(i));
      ret(SECCOMP_RET_ALLOW);
      return;
    }
    const size_t middle = first + (last - first) / 2;
    jump_ge(static_cast<uint32_t>(rules.unit(middle).low), tree_length(rules, first, middle), 0);
    tree(rules, first, middle);
    tree(rules, middle, last);
  }

  bool ok() const { return !overflow_; }

 private:
  // A rule's verdict: its errno, or with evidence on a notification (the supervisor answers it
  // with that errno, or lets a write-intent call through to Landlock).
  uint32_t action(const SyscallRule& rule) const {
    if ((notify_ || rule.supervised) && !rule.quiet) return SECCOMP_RET_USER_NOTIF;
    return SECCOMP_RET_ERRNO | (static_cast<uint32_t>(rule.err) & SECCOMP_RET_DATA);
  }

  static size_t tree_length(const RuleSet& rules, size_t first, size_t last) {
    if (last - first <= kLeafUnits) {
      size_t length = 1;
      for (size_t i = first; i < last; ++i) length += unit_length(rules.unit(i), rules.rules());
      return length;
    }
    const size_t middle = first + (last - first) / 2;
    return 1 + tree_length(rules, first, middle) + tree_length(rules, middle, last);
  }

  // Classic BPF jump offsets are 8 bits: a longer one would be silently truncated, so it marks
  // the program broken instead (never loaded: the launcher fails closed).
  void jump(uint16_t op, uint32_t k, size_t if_true, size_t if_false) {
    if (if_true > 255 || if_false > 255) overflow_ = true;
    emit(BPF_JMP | op | BPF_K, static_cast<uint8_t>(if_true), static_cast<uint8_t>(if_false), k);
  }

  void emit(uint32_t code, uint8_t jt, uint8_t jf, uint32_t k) {
    if (size_ >= kMaxProgram) {
      overflow_ = true;
      return;
    }
    code_[size_++] = sock_filter{static_cast<uint16_t>(code), jt, jf, k};
  }

  sock_filter code_[kMaxProgram]{};
  size_t size_ = 0;
  bool overflow_ = false;
  bool notify_ = false;
};

// Builds the whole program into *program. Returns 0 or -E2BIG (a miscounted block or a jump
// too long: never loaded, the launcher fails closed).
int build(const FilterChoice& choice, Program* program) {
  program->load(kArchOffset);
  program->jump_eq(LANDLOCK_RUN_AUDIT_ARCH, 1, 0);
  program->ret(SECCOMP_RET_KILL_PROCESS);
  program->load(kNrOffset);
#if LANDLOCK_RUN_CHECK_X32
  program->jump_ge(kX32SyscallBit, 0, 1);
  program->ret(SECCOMP_RET_KILL_PROCESS);
#endif
  RuleSet rules;
  rules.add(kTerminalRules);
  rules.add(kIpcRules);
  rules.add(kKeyringRules);
  rules.add(kNamespaceRules);
  rules.add(kIoUringRules);
  rules.add(kSetIdRules);
  if (!choice.notify) rules.add(kOpenat2Rules);
  if (choice.deny_network && choice.private_netns) rules.add(kNetnsNetworkRules);
  if (choice.deny_network && !choice.private_netns) rules.add(kNetworkRules);
  if (choice.deny_metadata || (choice.notify && choice.contain_metadata)) {
    rules.add(kMetadataRules);
  }
  if (choice.stream_network_only) rules.add(kStreamNetworkRules);
  if (choice.unix_guard) rules.add(kUnixGuardRules);
  if (choice.unix_guard && !choice.notify) rules.add(kUnixBindRules);
  if (choice.notify) rules.add(kWriteIntentRules);
  if (choice.notify && choice.notify_reads) rules.add(kReadIntentRules);
  rules.finish();
  program->tree(rules, 0, rules.units());
  return program->ok() ? 0 : -E2BIG;
}

bool rule_matches(const SyscallRule& rule, const unsigned long long* args) {
  const unsigned long long value = args[rule.arg];
  const uint32_t low = static_cast<uint32_t>(value & 0xffffffffU);
  switch (rule.match) {
    case ArgMatch::kAny:
      return true;
    case ArgMatch::kNotEqual:
      return value != rule.value;
    case ArgMatch::kLow32Equal:
      return low == static_cast<uint32_t>(rule.value);
    case ArgMatch::kLow32AnySet:
      return (low & static_cast<uint32_t>(rule.value)) != 0;
    case ArgMatch::kLow32NotIn:
      for (unsigned i = 0; i < rule.allowed_count; ++i) {
        if (rule.allowed[i] == low) return false;
      }
      return true;
    case ArgMatch::kLow32NotEqualIf:
      return static_cast<uint32_t>(args[rule.guard_arg] & 0xffffffffU) == rule.guard_value &&
             low != static_cast<uint32_t>(rule.value);
    case ArgMatch::kLow32AnySetIf:
      return (static_cast<uint32_t>(args[rule.guard_arg] & 0xffffffffU) & rule.guard_value) != 0 &&
             (low & static_cast<uint32_t>(rule.value)) != 0;
  }
  return true;
}

template <size_t N>
const SyscallRule* find_in(const SyscallRule (&table)[N], int nr, const unsigned long long* args) {
  for (const SyscallRule& rule : table) {
    if (rule.nr == nr && rule_matches(rule, args)) return &rule;
  }
  return nullptr;
}

}  // namespace

const SyscallRule* matching_rule(const FilterChoice& choice, int nr,
                                 const unsigned long long* args) {
  // The filter's order: rules sorted stably by number keep this table order on one syscall.
  const SyscallRule* rule = find_in(kTerminalRules, nr, args);
  if (rule == nullptr) rule = find_in(kIpcRules, nr, args);
  if (rule == nullptr) rule = find_in(kKeyringRules, nr, args);
  if (rule == nullptr) rule = find_in(kNamespaceRules, nr, args);
  if (rule == nullptr) rule = find_in(kIoUringRules, nr, args);
  if (rule == nullptr) rule = find_in(kSetIdRules, nr, args);
  if (rule == nullptr && !choice.notify) rule = find_in(kOpenat2Rules, nr, args);
  if (rule == nullptr && choice.deny_network) {
    rule = choice.private_netns ? find_in(kNetnsNetworkRules, nr, args)
                                : find_in(kNetworkRules, nr, args);
  }
  if (rule == nullptr && (choice.deny_metadata || (choice.notify && choice.contain_metadata))) {
    rule = find_in(kMetadataRules, nr, args);
  }
  if (rule == nullptr && choice.stream_network_only) {
    rule = find_in(kStreamNetworkRules, nr, args);
  }
  if (rule == nullptr && choice.unix_guard) rule = find_in(kUnixGuardRules, nr, args);
  if (rule == nullptr && choice.unix_guard && !choice.notify) {
    rule = find_in(kUnixBindRules, nr, args);
  }
  if (rule == nullptr && choice.notify) rule = find_in(kWriteIntentRules, nr, args);
  if (rule == nullptr && choice.notify && choice.notify_reads) {
    rule = find_in(kReadIntentRules, nr, args);
  }
  return rule;
}

size_t max_filter_bytes() { return kMaxProgram * sizeof(sock_filter); }

int build_filter_bytes(const FilterChoice& choice, unsigned char* out, size_t capacity,
                       size_t* size) {
  Program program(choice.notify);
  if (const int rc = build(choice, &program); rc != 0) return rc;
  const size_t bytes = program.size() * sizeof(sock_filter);
  if (bytes > capacity) return -E2BIG;
  memcpy(out, program.data(), bytes);
  *size = bytes;
  return 0;
}

int export_filter_bpf(const FilterChoice& choice, int fd) {
  Program program(choice.notify);
  if (const int rc = build(choice, &program); rc != 0) return rc;
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

int install_filter(const FilterChoice& choice) {
  Program program(choice.notify);
  if (const int rc = build(choice, &program); rc != 0) return rc;
  const sock_fprog fprog{static_cast<unsigned short>(program.size()),
                         const_cast<sock_filter*>(program.data())};
  // seccomp() (Linux 3.17) first; prctl() only when it is ENOSYS, which an outer filter (a
  // container runtime's) may return for a syscall it does not know. Both need no_new_privs.
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0U, &fprog) == 0) return 0;
  if (errno != ENOSYS) return -errno;
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0UL, 0UL) == 0) return 0;
  return -errno;
}

int install_notify_filter(const FilterChoice& choice) {
  if (!choice.notify && !choice.unix_guard) return -EINVAL;
  Program program(choice.notify);
  if (const int rc = build(choice, &program); rc != 0) return rc;
  const sock_fprog fprog{static_cast<unsigned short>(program.size()),
                         const_cast<sock_filter*>(program.data())};
  // The listener is returned close-on-exec by the kernel (it is an anon inode opened O_CLOEXEC).
  const long fd =
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog);
  return fd < 0 ? -errno : static_cast<int>(fd);
}

}  // namespace landlock_run
