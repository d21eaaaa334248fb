// SPDX-License-Identifier: Apache-2.0
// The launcher's seccomp filter, generated from the rule table and evaluated here
// in-process (a small classic-BPF interpreter, after sandbox2's bpf_evaluator) against synthetic
// seccomp_data: nothing is loaded, so every corner (foreign arch, x32, high argument bits) is
// reachable hermetically.
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "seccomp_filter.h"
#include "seccomp_rules.h"

namespace landlock_run {
namespace {

std::vector<sock_filter> export_program(const FilterChoice& choice) {
  const int fd = memfd_create("bpf", MFD_CLOEXEC);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(export_filter_bpf(choice, fd), 0);
  const off_t size = lseek(fd, 0, SEEK_END);
  std::vector<sock_filter> program(static_cast<std::size_t>(size) / sizeof(sock_filter));
  EXPECT_EQ(pread(fd, program.data(), static_cast<std::size_t>(size), 0), size);
  close(fd);
  return program;
}

std::uint32_t load_word(const seccomp_data& data, std::uint32_t offset) {
  std::uint32_t word = 0;
  EXPECT_LE(offset + 4, sizeof(data));
  std::memcpy(&word, reinterpret_cast<const char*>(&data) + offset, 4);
  return word;
}

// Runs the classic BPF subset seccomp filters use. Returns the filter's return value, or nullopt
// on an instruction it does not know (the test then fails rather than guessing).
// `steps`, when given, receives how many instructions ran.
std::optional<std::uint32_t> evaluate(const std::vector<sock_filter>& program,
                                      const seccomp_data& data, std::size_t* steps = nullptr) {
  std::uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {};
  for (std::size_t pc = 0; pc < program.size(); ++pc) {
    const sock_filter& op = program[pc];
    if (steps != nullptr) ++*steps;
    const auto jump = [&](bool taken) { pc += taken ? op.jt : op.jf; };
    switch (op.code) {
      case BPF_LD | BPF_W | BPF_ABS:
        a = load_word(data, op.k);
        break;
      case BPF_LD | BPF_IMM:
        a = op.k;
        break;
      case BPF_LD | BPF_MEM:
        a = mem[op.k];
        break;
      case BPF_LDX | BPF_MEM:
        x = mem[op.k];
        break;
      case BPF_ST:
        mem[op.k] = a;
        break;
      case BPF_STX:
        mem[op.k] = x;
        break;
      case BPF_ALU | BPF_AND | BPF_K:
        a &= op.k;
        break;
      case BPF_ALU | BPF_OR | BPF_K:
        a |= op.k;
        break;
      case BPF_MISC | BPF_TAX:
        x = a;
        break;
      case BPF_MISC | BPF_TXA:
        a = x;
        break;
      case BPF_JMP | BPF_JA:
        pc += op.k;
        break;
      case BPF_JMP | BPF_JEQ | BPF_K:
        jump(a == op.k);
        break;
      case BPF_JMP | BPF_JGT | BPF_K:
        jump(a > op.k);
        break;
      case BPF_JMP | BPF_JGE | BPF_K:
        jump(a >= op.k);
        break;
      case BPF_JMP | BPF_JSET | BPF_K:
        jump((a & op.k) != 0);
        break;
      case BPF_JMP | BPF_JEQ | BPF_X:
        jump(a == x);
        break;
      case BPF_JMP | BPF_JGT | BPF_X:
        jump(a > x);
        break;
      case BPF_JMP | BPF_JGE | BPF_X:
        jump(a >= x);
        break;
      case BPF_RET | BPF_K:
        return op.k;
      case BPF_RET | BPF_A:
        return a;
      default:
        ADD_FAILURE() << "unknown BPF opcode " << op.code << " at " << pc;
        return std::nullopt;
    }
  }
  ADD_FAILURE() << "program fell off its end";
  return std::nullopt;
}

seccomp_data call(int nr, std::uint64_t a0 = 0, std::uint64_t a1 = 0,
                  std::uint32_t arch = AUDIT_ARCH_X86_64) {
  seccomp_data data{};
  data.nr = nr;
  data.arch = arch;
  data.args[0] = a0;
  data.args[1] = a1;
  return data;
}

constexpr std::uint32_t kAllow = SECCOMP_RET_ALLOW;
constexpr std::uint32_t errno_action(int err) {
  return SECCOMP_RET_ERRNO | static_cast<std::uint32_t>(err);
}

class LandlockRunSeccomp : public ::testing::Test {
 protected:
  std::uint32_t verdict(const FilterChoice& choice, const seccomp_data& data) {
    return evaluate(export_program(choice), data).value_or(0xdeadbeef);
  }
  const FilterChoice none_{};
  const FilterChoice all_{true, true};
};

TEST_F(LandlockRunSeccomp, TiocstiAndTioclinuxFailAlwaysEvenWithHighBitsSet) {
  for (const FilterChoice& choice : {none_, all_}) {
    EXPECT_EQ(verdict(choice, call(__NR_ioctl, 0, kTiocsti)), errno_action(EPERM));
    EXPECT_EQ(verdict(choice, call(__NR_ioctl, 0, 0xffffffff00000000ULL | kTiocsti)),
              errno_action(EPERM));
    EXPECT_EQ(verdict(choice, call(__NR_ioctl, 0, kTioclinux)), errno_action(EPERM));
    EXPECT_EQ(verdict(choice, call(__NR_ioctl, 0, 0x5413 /* TIOCGWINSZ */)), kAllow);
  }
}

TEST_F(LandlockRunSeccomp, ForeignArchitecturesAndX32AreKilled) {
  constexpr std::uint32_t kKill = SECCOMP_RET_KILL_PROCESS;
  EXPECT_EQ(verdict(none_, call(__NR_getpid, 0, 0, AUDIT_ARCH_I386)), kKill);
  EXPECT_EQ(verdict(none_, call(__NR_getpid, 0, 0, AUDIT_ARCH_AARCH64)), kKill);
  EXPECT_EQ(verdict(none_, call(0x40000000 | __NR_getpid)), kKill);  // x32 getpid
  EXPECT_EQ(verdict(all_, call(0x40000000 | __NR_socket, 2)), kKill);
  EXPECT_EQ(verdict(none_, call(__NR_getpid)), kAllow);
}

TEST_F(LandlockRunSeccomp, DenyNetworkLeavesOnlyUnixSockets) {
  const FilterChoice net{true, false};
  EXPECT_EQ(verdict(net, call(__NR_socket, 1 /* AF_UNIX */)), kAllow);
  for (const std::uint64_t family : {2ULL, 10ULL, 16ULL, 17ULL, 0ULL, 0x100000001ULL}) {
    EXPECT_EQ(verdict(net, call(__NR_socket, family)), errno_action(EAFNOSUPPORT)) << family;
    EXPECT_EQ(verdict(net, call(__NR_socketpair, family)), errno_action(EAFNOSUPPORT)) << family;
  }
  EXPECT_EQ(verdict(net, call(__NR_socketpair, 1)), kAllow);
  EXPECT_EQ(verdict(none_, call(__NR_socket, 2)), kAllow);  // only when asked
}

// Host Unix sockets are network: with the guard on, every connect and every AF_UNIX socket and
// socketpair is the supervisor's, evidence or not; other families keep failing in the filter, and
// bind is notified without evidence (with it, the write-intent rule notifies it).
TEST_F(LandlockRunSeccomp, UnixGuardNotifiesConnectAndUnixSocketsOnly) {
  FilterChoice guard{true, false};
  guard.unix_guard = true;
  FilterChoice evidence = guard;
  evidence.notify = true;
  for (const FilterChoice& choice : {guard, evidence}) {
    EXPECT_EQ(verdict(choice, call(__NR_connect, 3, 0x1000)), SECCOMP_RET_USER_NOTIF);
    EXPECT_EQ(verdict(choice, call(__NR_socket, 1, 2 /* SOCK_DGRAM */)), SECCOMP_RET_USER_NOTIF);
    EXPECT_EQ(verdict(choice, call(__NR_socketpair, 1, 1)), SECCOMP_RET_USER_NOTIF);
    EXPECT_EQ(verdict(choice, call(__NR_bind, 3, 0x1000)), SECCOMP_RET_USER_NOTIF);
    EXPECT_EQ(verdict(choice, call(__NR_sendto, 3, 0x1000)), kAllow);
  }
  EXPECT_EQ(verdict(guard, call(__NR_socket, 2)), errno_action(EAFNOSUPPORT));
  const unsigned long long args[6] = {3, 0x1000, 16, 0, 0, 0};
  ASSERT_NE(matching_rule(guard, __NR_bind, args), nullptr);
  EXPECT_STREQ(matching_rule(guard, __NR_bind, args)->name, "bind(unix guard)");
  EXPECT_STREQ(matching_rule(evidence, __NR_bind, args)->name, "bind");
  // The network inherited: none of it.
  EXPECT_EQ(verdict(none_, call(__NR_connect, 3, 0x1000)), kAllow);
  EXPECT_EQ(verdict(none_, call(__NR_socket, 1, 2)), kAllow);
}

// io_uring's operations never pass through the filtered syscalls: refused in every run.
TEST_F(LandlockRunSeccomp, IoUringIsRefusedInEveryRun) {
  for (const FilterChoice& choice : {none_, FilterChoice{true, false}, all_}) {
    EXPECT_EQ(verdict(choice, call(__NR_io_uring_setup)), errno_action(EPERM));
    EXPECT_EQ(verdict(choice, call(__NR_io_uring_enter)), errno_action(EPERM));
    EXPECT_EQ(verdict(choice, call(__NR_io_uring_register)), errno_action(EPERM));
  }
}

seccomp_data socket_call(std::uint64_t family, std::uint64_t type, std::uint64_t protocol) {
  seccomp_data data = call(__NR_socket, family, type);
  data.args[2] = protocol;
  return data;
}

TEST_F(LandlockRunSeccomp, DenyNetworkInAPrivateNamespaceAddsOnlyRouteNetlink) {
  const FilterChoice netns{true, false, false, false, true};
  const FilterChoice host{true, false};
  constexpr std::uint64_t kNetlink = 16, kRaw = 3, kDgram = 2, kRoute = 0, kAudit = 9;
  for (const std::uint64_t type : {kRaw, kDgram, kRaw | 0x80000}) {
    EXPECT_EQ(verdict(netns, socket_call(kNetlink, type, kRoute)), kAllow) << type;
    // The kernel reads family and protocol as int: high bits change nothing it sees.
    EXPECT_EQ(verdict(netns, socket_call(0x100000000ULL | kNetlink, type, 0xff00000000ULL)),
              kAllow);
    EXPECT_EQ(verdict(host, socket_call(kNetlink, type, kRoute)), errno_action(EAFNOSUPPORT))
        << type;
  }
  for (const std::uint64_t protocol :
       {kAudit, std::uint64_t{4} /* NETLINK_SOCK_DIAG */, std::uint64_t{12}, std::uint64_t{16}}) {
    EXPECT_EQ(verdict(netns, socket_call(kNetlink, kRaw, protocol)), errno_action(EAFNOSUPPORT))
        << protocol;
  }
  for (const std::uint64_t family : {2ULL, 10ULL, 17ULL, 0ULL, 0x100000002ULL}) {
    EXPECT_EQ(verdict(netns, socket_call(family, 1, 0)), errno_action(EAFNOSUPPORT)) << family;
    EXPECT_EQ(verdict(netns, call(__NR_socketpair, family)), errno_action(EAFNOSUPPORT)) << family;
  }
  EXPECT_EQ(verdict(netns, socket_call(1, 1, 0)), kAllow);
  EXPECT_EQ(verdict(netns, call(__NR_io_uring_setup)), errno_action(EPERM));
  // The supervisor answers as the filter does.
  const unsigned long long route[6] = {kNetlink, kRaw, kRoute, 0, 0, 0};
  const unsigned long long audit[6] = {kNetlink, kRaw, kAudit, 0, 0, 0};
  EXPECT_EQ(matching_rule(netns, __NR_socket, route), nullptr);
  ASSERT_NE(matching_rule(netns, __NR_socket, audit), nullptr);
  EXPECT_EQ(matching_rule(netns, __NR_socket, audit)->err, EAFNOSUPPORT);
  EXPECT_NE(matching_rule(host, __NR_socket, route), nullptr);
}

TEST_F(LandlockRunSeccomp, DenyMetadataFailsEveryTableEntry) {
  const FilterChoice meta{false, true};
  for (const SyscallRule& rule : kMetadataRules) {
    const seccomp_data data =
        rule.match == ArgMatch::kAny ? call(rule.nr) : call(rule.nr, 0, rule.value);
    EXPECT_EQ(verdict(meta, data), errno_action(EPERM)) << rule.name;
    EXPECT_EQ(verdict(none_, data), kAllow) << rule.name;
  }
}

TEST_F(LandlockRunSeccomp, DenyMetadataCoversNewerSyscallsByNumber) {
  const FilterChoice meta{false, true};
  EXPECT_EQ(verdict(meta, call(452)), errno_action(EPERM));  // fchmodat2, Linux 6.6
  EXPECT_EQ(verdict(meta, call(463)), errno_action(EPERM));  // setxattrat, Linux 6.13
  EXPECT_EQ(verdict(meta, call(466)), errno_action(EPERM));  // removexattrat, Linux 6.13
  EXPECT_EQ(verdict(meta, call(__NR_chmod)), errno_action(EPERM));
  EXPECT_EQ(verdict(meta, call(__NR_utimensat)), errno_action(EPERM));
  EXPECT_EQ(verdict(meta, call(__NR_openat)), kAllow);
  EXPECT_EQ(verdict(meta, call(464 /* getxattrat */)), kAllow);
}

TEST_F(LandlockRunSeccomp, NotEqualComparesAllSixtyFourBits) {
  const FilterChoice net{true, false};
  // Right low word, wrong high word: still refused, whichever high bits are set.
  for (const std::uint64_t high : {1ULL, 0x80000000ULL, 0xffffffffULL}) {
    EXPECT_EQ(verdict(net, call(__NR_socket, (high << 32) | kAfUnix)), errno_action(EAFNOSUPPORT))
        << high;
    EXPECT_EQ(verdict(net, call(__NR_socketpair, (high << 32) | kAfUnix)),
              errno_action(EAFNOSUPPORT))
        << high;
  }
  // Wrong low word, zero high word.
  EXPECT_EQ(verdict(net, call(__NR_socket, 0xffffffffULL)), errno_action(EAFNOSUPPORT));
  EXPECT_EQ(verdict(net, call(__NR_socket, kAfUnix, 0xdeadbeefULL)), kAllow);  // only args[0]
}

TEST_F(LandlockRunSeccomp, EveryRuleOnOneSyscallApplies) {
  // ioctl carries two terminal rules and three metadata rules, in that order: each must still
  // see the syscall number after its predecessors loaded an argument.
  const FilterChoice meta{false, true};
  for (const std::uint64_t cmd :
       {kTiocsti, kTioclinux, kFsIocSetflags, kFsIoc32Setflags, kFsIocFssetxattr}) {
    EXPECT_EQ(verdict(meta, call(__NR_ioctl, 3, cmd)), errno_action(EPERM)) << cmd;
    EXPECT_EQ(verdict(all_, call(__NR_ioctl, 3, (0xabcdULL << 32) | cmd)), errno_action(EPERM))
        << cmd;
  }
  EXPECT_EQ(verdict(none_, call(__NR_ioctl, 3, kFsIocSetflags)), kAllow);
  EXPECT_EQ(verdict(all_, call(__NR_ioctl, 3, 0x5413 /* TIOCGWINSZ */)), kAllow);
  // A rule's argument must not leak into the next syscall's match: fchmod's args[1] equal to an
  // ioctl command changes nothing, and an allowed ioctl is not mistaken for a later syscall.
  EXPECT_EQ(verdict(all_, call(__NR_fchmod, 3, kTiocsti)), errno_action(EPERM));
  EXPECT_EQ(verdict(all_, call(__NR_getpid, 0, kTiocsti)), kAllow);
  EXPECT_EQ(verdict(all_, call(__NR_ioctl, __NR_socket, __NR_socket)), kAllow);
}

TEST_F(LandlockRunSeccomp, HostIpcObjectsAreRefusedAlways) {
  for (const FilterChoice& choice : {none_, all_}) {
    for (const SyscallRule& rule : kIpcRules) {
      EXPECT_EQ(verdict(choice, call(rule.nr, 0x1234, 4096)), errno_action(EPERM)) << rule.name;
    }
    for (const int nr : {__NR_shmget, __NR_shmat, __NR_shmctl, __NR_shmdt, __NR_msgget, __NR_msgsnd,
                         __NR_msgrcv, __NR_msgctl, __NR_semget, __NR_semop, __NR_semtimedop,
                         __NR_semctl, __NR_mq_open, __NR_mq_unlink}) {
      EXPECT_EQ(verdict(choice, call(nr)), errno_action(EPERM)) << nr;
    }
    // Anonymous shared memory and POSIX shm through files stay allowed (Landlock governs files).
    EXPECT_EQ(verdict(choice, call(__NR_mmap)), kAllow);
    EXPECT_EQ(verdict(choice, call(__NR_memfd_create)), kAllow);
  }
}

TEST_F(LandlockRunSeccomp, KeyringCallsAreRefusedAlways) {
  for (const FilterChoice& choice : {none_, all_}) {
    EXPECT_EQ(verdict(choice, call(__NR_add_key)), errno_action(EPERM));
    EXPECT_EQ(verdict(choice, call(__NR_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, ~2ULL /* -3 */)),
              errno_action(EPERM));
    EXPECT_EQ(verdict(choice, call(__NR_request_key)), errno_action(EPERM));
  }
}

TEST_F(LandlockRunSeccomp, UserNamespacesAreRefusedWhateverElseTheFlagsSay) {
  constexpr std::uint64_t kNewUser = 0x10000000;
  constexpr std::uint64_t kSigchld = 17, kNewNet = 0x40000000, kNewNs = 0x00020000;
  for (const FilterChoice& choice : {none_, all_}) {
    for (const int nr : {__NR_unshare, __NR_clone}) {
      EXPECT_EQ(verdict(choice, call(nr, kNewUser)), errno_action(EPERM)) << nr;
      EXPECT_EQ(verdict(choice, call(nr, kNewUser | kNewNet | kNewNs)), errno_action(EPERM)) << nr;
      EXPECT_EQ(verdict(choice, call(nr, 0xffffffff00000000ULL | kNewUser)), errno_action(EPERM))
          << nr;
      EXPECT_EQ(verdict(choice, call(nr, ~0ULL)), errno_action(EPERM)) << nr;
      // Other namespaces need capabilities the command no longer has: the kernel refuses them.
      EXPECT_EQ(verdict(choice, call(nr, kNewNet)), kAllow) << nr;
    }
    // fork() and pthread_create() as glibc spells them with clone.
    EXPECT_EQ(verdict(choice, call(__NR_clone, 0x01200000 | kSigchld)), kAllow);
    EXPECT_EQ(verdict(choice, call(__NR_clone, 0x003d0f00)), kAllow);
    // clone3's flags are behind a pointer: ENOSYS makes glibc fall back to clone.
    EXPECT_EQ(verdict(choice, call(__NR_clone3, 0x1000, 88)), errno_action(ENOSYS));
    EXPECT_EQ(verdict(choice, call(__NR_setns, 3, 0)), errno_action(EPERM));
    EXPECT_EQ(verdict(choice, call(__NR_setns, 3, kNewUser)), errno_action(EPERM));
  }
}

TEST_F(LandlockRunSeccomp, PersonalityStaysWithinTheDefaultDomain) {
  for (const FilterChoice& choice : {none_, all_}) {
    for (const std::uint64_t allowed :
         {0x0ULL, 0x8ULL, 0x20000ULL, 0x20008ULL, 0xffffffffULL, 0xabcd00000000ULL}) {
      EXPECT_EQ(verdict(choice, call(__NR_personality, allowed)), kAllow) << allowed;
    }
    for (const std::uint64_t refused : {0x0040000ULL /* ADDR_NO_RANDOMIZE */, 0x6ULL /* PER_BSD */,
                                        0x0400000ULL /* READ_IMPLIES_EXEC */, 0x0100000ULL,
                                        0x0040008ULL, 0xfffffffeULL, 0x1ULL}) {
      EXPECT_EQ(verdict(choice, call(__NR_personality, refused)), errno_action(EPERM)) << refused;
    }
  }
}

TEST_F(LandlockRunSeccomp, EveryTableRuleAppliesWithEveryChoice) {
  // Each rule of each table, matched with an argument that trips it, under every choice that
  // installs it: the search tree must reach every leaf.
  const auto tripping = [](const SyscallRule& rule) {
    switch (rule.match) {
      case ArgMatch::kAny:
        return call(rule.nr);
      case ArgMatch::kNotEqual:
        return call(rule.nr, rule.value + 1);
      case ArgMatch::kLow32Equal:
        return call(rule.nr, 0, rule.value);
      case ArgMatch::kLow32AnySet:
      case ArgMatch::kLow32NotIn: {
        seccomp_data data = call(rule.nr);
        data.args[rule.arg] = 0xdeadbeef;
        return data;
      }
      case ArgMatch::kLow32NotEqualIf: {
        seccomp_data data = call(rule.nr);
        data.args[rule.guard_arg] = rule.guard_value;
        data.args[rule.arg] = rule.value + 1;
        return data;
      }
      case ArgMatch::kLow32AnySetIf: {
        seccomp_data data = call(rule.nr);
        data.args[rule.guard_arg] = rule.guard_value;
        data.args[rule.arg] = 0xdeadbeef;
        return data;
      }
    }
    return call(rule.nr);
  };
  const auto expect_all = [&](const FilterChoice& choice, const auto& table) {
    for (const SyscallRule& rule : table) {
      seccomp_data data = tripping(rule);
      if (rule.match == ArgMatch::kLow32Equal) data.args[rule.arg] = rule.value;
      EXPECT_EQ(verdict(choice, data), errno_action(rule.err)) << rule.name;
    }
  };
  for (const FilterChoice& choice : {none_, FilterChoice{true, false}, FilterChoice{false, true},
                                     all_, FilterChoice{true, true, false, false, true}}) {
    expect_all(choice, kTerminalRules);
    expect_all(choice, kIpcRules);
    expect_all(choice, kKeyringRules);
    expect_all(choice, kNamespaceRules);
    expect_all(choice, kIoUringRules);
    expect_all(choice, kSetIdRules);
    expect_all(choice, kOpenat2Rules);
    if (choice.deny_network && !choice.private_netns) expect_all(choice, kNetworkRules);
    if (choice.deny_network && choice.private_netns) expect_all(choice, kNetnsNetworkRules);
    if (choice.deny_metadata) expect_all(choice, kMetadataRules);
  }
  // Every syscall number no rule names is allowed, below, between and above the rules' numbers.
  for (int nr = 0; nr < 480; ++nr) {
    bool named = false;
    const auto names = [&](const auto& table) {
      for (const SyscallRule& rule : table) named = named || rule.nr == nr;
    };
    names(kTerminalRules);
    names(kIpcRules);
    names(kKeyringRules);
    names(kNamespaceRules);
    names(kIoUringRules);
    names(kSetIdRules);
    names(kOpenat2Rules);
    names(kNetworkRules);
    names(kNetnsNetworkRules);
    names(kMetadataRules);
    if (!named) {
      EXPECT_EQ(verdict(all_, call(nr, ~0ULL, ~0ULL)), kAllow) << nr;
    }
  }
}

// With unreadable paths noted every open is a notification; without, reads pass in the filter
// itself. A write-intent open matches its own rule first, and the supervisor tells them apart.
TEST_F(LandlockRunSeccomp, ReadsAreNotifiedOnlyWithNotedUnreadablePaths) {
  FilterChoice writes{};
  writes.notify = true;
  FilterChoice reads = writes;
  reads.notify_reads = true;
  const auto openat_call = [](std::uint64_t flags) {
    seccomp_data data = call(__NR_openat, static_cast<std::uint64_t>(-100), 0x1000);
    data.args[2] = flags;
    return data;
  };
  for (const std::uint64_t flags : {0ULL, 04000000ULL /* O_DIRECTORY */, 010000000ULL}) {
    EXPECT_EQ(verdict(writes, openat_call(flags)), kAllow) << flags;
    EXPECT_EQ(verdict(reads, openat_call(flags)), SECCOMP_RET_USER_NOTIF) << flags;
  }
  EXPECT_EQ(verdict(writes, openat_call(01)), SECCOMP_RET_USER_NOTIF);
  EXPECT_EQ(verdict(reads, call(__NR_open, 0x1000, 0)), SECCOMP_RET_USER_NOTIF);
  const unsigned long long read_args[6] = {
      static_cast<unsigned long long>(-100), 0x1000, 0, 0, 0, 0};
  const unsigned long long write_args[6] = {
      static_cast<unsigned long long>(-100), 0x1000, 01, 0, 0, 0};
  EXPECT_EQ(matching_rule(writes, __NR_openat, read_args), nullptr);
  ASSERT_NE(matching_rule(reads, __NR_openat, read_args), nullptr);
  EXPECT_STREQ(matching_rule(reads, __NR_openat, read_args)->name, "openat(read)");
  EXPECT_STREQ(matching_rule(reads, __NR_openat, write_args)->name, "openat(write)");
  // Reads are a notification only: no choice without evidence adds them.
  FilterChoice no_notify{};
  no_notify.notify_reads = true;
  EXPECT_EQ(verdict(no_notify, openat_call(0)), kAllow);
}

// A set-id bit is refused wherever the kernel reads the mode: always for chmod, for open and openat
// only with O_CREAT or O_TMPFILE. Without them the mode register is whatever the caller left
// there (glibc's loader opens libraries passing none), and refusing on it would fail reads at
// random.
TEST_F(LandlockRunSeccomp, SetIdBitsAreRefusedOnlyWhereTheModeIsRead) {
  const auto openat_call = [](std::uint64_t flags, std::uint64_t mode) {
    seccomp_data data = call(__NR_openat, static_cast<std::uint64_t>(-100), 0x1000);
    data.args[2] = flags;
    data.args[3] = mode;
    return data;
  };
  for (const FilterChoice& choice : {none_, all_}) {
    EXPECT_EQ(verdict(choice, openat_call(0, 06000)), kAllow);         // O_RDONLY, garbage mode
    EXPECT_EQ(verdict(choice, openat_call(02000000, 04755)), kAllow);  // O_CLOEXEC only
    EXPECT_EQ(verdict(choice, openat_call(0101, 0644)), kAllow);       // O_CREAT, plain mode
    EXPECT_EQ(verdict(choice, openat_call(0101, 04755)), errno_action(EPERM));
    EXPECT_EQ(verdict(choice, openat_call(020200002, 02700)), errno_action(EPERM));  // O_TMPFILE
    EXPECT_EQ(verdict(choice, call(__NR_fchmod, 3, 04755)), errno_action(EPERM));
    EXPECT_EQ(verdict(choice, call(__NR_mkdirat, 0, 0)), kAllow);
  }
  seccomp_data read_open = call(__NR_open, 0x1000, 0);
  read_open.args[2] = 04000;
  EXPECT_EQ(verdict(none_, read_open), kAllow);
}

TEST_F(LandlockRunSeccomp, BuiltBytesAreTheExportedProgram) {
  for (const FilterChoice& choice : {none_, all_}) {
    std::vector<unsigned char> bytes(max_filter_bytes());
    std::size_t size = 0;
    ASSERT_EQ(build_filter_bytes(choice, bytes.data(), bytes.size(), &size), 0);
    const std::vector<sock_filter> exported = export_program(choice);
    ASSERT_EQ(size, exported.size() * sizeof(sock_filter));
    EXPECT_EQ(std::memcmp(bytes.data(), exported.data(), size), 0);
    EXPECT_EQ(build_filter_bytes(choice, bytes.data(), size - 1, &size), -E2BIG);
  }
}

TEST_F(LandlockRunSeccomp, ProgramIsWellFormedForTheKernelChecker) {
  // What seccomp's checker (sk_chk_filter plus seccomp_check_filter) insists on: a non-empty
  // program under BPF_MAXINSNS, every jump forward and inside it, loads only within
  // seccomp_data, and a RET as the last instruction.
  for (const FilterChoice& choice :
       {none_, FilterChoice{true, false}, FilterChoice{false, true}, all_}) {
    const std::vector<sock_filter> program = export_program(choice);
    ASSERT_FALSE(program.empty());
    EXPECT_LE(program.size(), static_cast<std::size_t>(BPF_MAXINSNS));
    EXPECT_EQ(program.back().code, BPF_RET | BPF_K);
    EXPECT_EQ(program.back().k, kAllow);
    // The search keeps every path short: the kernel emulates the program for every syscall
    // number when it attaches the filter (its allow-cache), and runs it on every call.
    std::size_t longest = 0;
    for (int nr = 0; nr < 480; ++nr) {
      std::size_t steps = 0;
      evaluate(program, call(nr, 0, 0x5413), &steps);
      longest = std::max(longest, steps);
    }
    EXPECT_LE(longest, 32U);
    // Its translation and JIT cost grows with its length: ranges keep it short. The set-id
    // rules, one mode check on each of eleven calls, are most of it.
    EXPECT_LE(program.size(), choice.deny_metadata ? 220U : 150U);
    // The first instruction loads the architecture: nothing is decided before it is checked.
    EXPECT_EQ(program.front().code, BPF_LD | BPF_W | BPF_ABS);
    EXPECT_EQ(program.front().k, offsetof(seccomp_data, arch));
    for (std::size_t pc = 0; pc < program.size(); ++pc) {
      const sock_filter& op = program[pc];
      if (BPF_CLASS(op.code) == BPF_JMP) {
        EXPECT_LT(pc + 1 + op.jt, program.size()) << pc;
        EXPECT_LT(pc + 1 + op.jf, program.size()) << pc;
      }
      if (BPF_CLASS(op.code) == BPF_LD) {
        EXPECT_EQ(op.k % 4, 0U) << pc;
        EXPECT_LE(op.k + 4, sizeof(seccomp_data)) << pc;
      }
    }
  }
}

}  // namespace
}  // namespace landlock_run
