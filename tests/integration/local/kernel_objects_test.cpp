// SPDX-License-Identifier: Apache-2.0
// The host's kernel objects that no file permission guards, attacked from inside a run on every
// Linux backend (bwrap+landlock, bwrap alone, Landlock alone) and in both confined modes: a SysV
// segment the test made keeps its bytes and exists afterwards, nothing the command tried to make
// is left in /proc/sysvipc (what ipcs reads) or the POSIX queue namespace, a key in the user's
// keyring keeps its payload, and no user namespace or personality change gets through. The
// verdict on each host object is read by the test itself, outside the sandbox.
#include <fcntl.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "local_harness.h"
#include "must_run.h"

namespace dsh::local_it {
namespace {

constexpr ConfinedSandboxMode kModes[] = {ConfinedSandboxMode::kReadOnly,
                                          ConfinedSandboxMode::kWorkspaceWrite};
constexpr long kKeySpecUserKeyring = -4;
constexpr long kKeyctlUnlink = 9;
constexpr long kKeyctlRead = 11;
constexpr long kKeyctlInvalidate = 21;
const std::string kEperm = "errno=" + std::to_string(EPERM);

// "<attempt> ok" / "<attempt> errno=N" lines of the probe, by attempt.
std::map<std::string, std::string> attempts(const std::string& out) {
  std::map<std::string, std::string> attempts;
  for (const std::string& line : split_lines(out)) {
    const std::size_t space = line.find(' ');
    if (space != std::string::npos) attempts[line.substr(0, space)] = line.substr(space + 1);
  }
  return attempts;
}

// Whether /proc/sysvipc/<kind> (shm, msg, sem: what ipcs reads) lists an object with `key`.
bool sysv_key_exists(const std::string& kind, key_t key) {
  std::ifstream table("/proc/sysvipc/" + kind);
  std::string line;
  std::getline(table, line);  // header
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    long long listed = 0;
    if (fields >> listed && listed == key) return true;
  }
  return false;
}

key_t random_key() {
  std::random_device random;
  // Even keys with room for KEY+1..3, away from 0 (IPC_PRIVATE) and small well-known keys.
  return static_cast<key_t>(0x10000000 + (random() % 0x1000000) * 4);
}

class KernelObjects : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (const std::string missing = missing_host_feature(); !missing.empty()) {
      DSH_SKIP_OR_FAIL(missing);
    }
    workspace_ = base_.mkdir("workspace");
    probe_ = base_ / "kernel_objects";
    copy_program(kernel_objects_probe(), probe_);
  }

  std::map<std::string, std::string> attack(ConfinedSandboxMode mode,
                                            const std::vector<std::string>& args) {
    std::vector<std::string> argv = {probe_};
    argv.insert(argv.end(), args.begin(), args.end());
    const ConfinedArgv confined = confine(*provider_, argv, mode, workspace_);
    EXPECT_EQ(confined.backend, expected_backend_name(GetParam()));
    const RunResult result = spawn(confined);
    EXPECT_TRUE(result.exited_with(0)) << result.describe();
    return attempts(result.out);
  }

  std::unique_ptr<sandbox::LocalSandboxProvider> provider_ = make_provider(GetParam());
  TempDir base_;
  std::string workspace_;
  std::string probe_;
};

TEST_P(KernelObjects, HostSysvSegmentKeepsItsBytesAndTheCommandLeavesNoIpcObject) {
  for (const ConfinedSandboxMode mode : kModes) {
    const key_t key = random_key();
    // 0666: the segment is reachable by any uid, the worst case for the sandbox.
    const int id = ::shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0666);
    ASSERT_GE(id, 0) << "shmget: " << std::strerror(errno);
    void* host = ::shmat(id, nullptr, 0);
    ASSERT_NE(host, reinterpret_cast<void*>(-1)) << std::strerror(errno);
    std::memcpy(host, "host-bytes", 11);

    const auto attempts = attack(mode, {"sysv", std::to_string(key), std::to_string(id)});

    shmid_ds info{};
    EXPECT_EQ(::shmctl(id, IPC_STAT, &info), 0) << "the host segment was removed";
    EXPECT_EQ(std::string(static_cast<const char*>(host)), "host-bytes");
    EXPECT_EQ(info.shm_nattch, 1U) << "only the test is attached";
    ::shmdt(host);
    ::shmctl(id, IPC_RMID, nullptr);
    EXPECT_FALSE(sysv_key_exists("shm", key + 1));
    EXPECT_FALSE(sysv_key_exists("msg", key + 2));
    EXPECT_FALSE(sysv_key_exists("sem", key + 3));
    const std::string queue = "dsh-it-" + std::to_string(key);
    const long mq = ::syscall(SYS_mq_open, queue.c_str(), O_RDONLY, 0, nullptr);
    EXPECT_LT(mq, 0) << "the command left a POSIX message queue";
    if (mq >= 0) {
      ::close(static_cast<int>(mq));
      ::syscall(SYS_mq_unlink, queue.c_str());
    } else {
      EXPECT_EQ(errno, ENOENT);
    }
    // How it was refused: EPERM from the filter, on every backend.
    for (const char* attempt :
         {"shmget-host", "shmat-host", "shmctl-rmid-host", "shmget-create", "msgget-create",
          "semget-create", "shmget-private", "mq_open-create"}) {
      EXPECT_EQ(attempts.count(attempt) ? attempts.at(attempt) : "<missing>", kEperm)
          << attempt << " under " << sandbox::wire_name(mode);
    }
  }
}

TEST_P(KernelObjects, UserKeyringKeepsItsKeyAndRequestKeyIsRefused) {
  for (const ConfinedSandboxMode mode : kModes) {
    const std::string description = unique("dsh-it-key");
    const long id = ::syscall(SYS_add_key, "user", description.c_str(), "host-payload", 12,
                              kKeySpecUserKeyring);
    if (id < 0) DSH_SKIP_OR_FAIL("this host has no usable keyrings: add_key failed");

    const auto attempts = attack(mode, {"keys", std::to_string(id), description});

    char payload[64] = {};
    const long read = ::syscall(SYS_keyctl, kKeyctlRead, id, payload, sizeof(payload));
    EXPECT_EQ(read, 12) << "the key was revoked or replaced: " << std::strerror(errno);
    EXPECT_EQ(std::string(payload, read > 0 ? static_cast<std::size_t>(read) : 0U), "host-payload");
    ::syscall(SYS_keyctl, kKeyctlUnlink, id, kKeySpecUserKeyring);
    ::syscall(SYS_keyctl, kKeyctlInvalidate, id);
    for (const char* attempt : {"keyctl-read", "keyctl-update", "add_key-user", "keyctl-search",
                                "keyctl-revoke", "request_key"}) {
      EXPECT_EQ(attempts.count(attempt) ? attempts.at(attempt) : "<missing>", kEperm)
          << attempt << " under " << sandbox::wire_name(mode);
    }
  }
}

TEST_P(KernelObjects, NoUserNamespaceNoPersonalityChangeButProcessesAndThreadsWork) {
  const std::map<std::string, std::string> expected = {
      {"unshare-newuser", kEperm},
      {"clone-newuser", kEperm},
      {"clone3-newuser", "errno=" + std::to_string(ENOSYS)},
      {"setns-user", kEperm},
      {"personality-query", "ok"},
      {"personality-bsd", kEperm},
      {"personality-addr-no-randomize", kEperm},
      {"fork", "ok"},
      {"posix_spawn", "ok"},
      {"pthread_create", "ok"}};
  for (const ConfinedSandboxMode mode : kModes) {
    EXPECT_EQ(attack(mode, {"namespaces"}), expected) << sandbox::wire_name(mode);
  }
}

TEST_P(KernelObjects, FactsNameEveryRefusal) {
  const ConfinedArgv confined =
      confine(*provider_, {"/bin/true"}, ConfinedSandboxMode::kReadOnly, workspace_);
  const std::string refused = [&] {
    std::string all;
    for (const std::string& line : confined.refused) all += line + "\n";
    return all;
  }();
  for (const char* call : {"shmget", "mq_", "keyctl", "request_key", "CLONE_NEWUSER", "clone3",
                           "setns", "personality"}) {
    EXPECT_NE(refused.find(call), std::string::npos) << call << " in:\n" << refused;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, KernelObjects,
                         ::testing::Values(Backend::kNatural, Backend::kBwrapOnly,
                                           Backend::kLandlock),
                         param_label);

}  // namespace
}  // namespace dsh::local_it
