// SPDX-License-Identifier: Apache-2.0
// Golden tests of the pure profile generators on whole argv vectors,
// plus ordering invariants checked on whole argument groups, never substrings.
#include "profiles/profiles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

namespace dsh::sandbox::profiles {
namespace {

using Argv = std::vector<std::string>;

// The reference's profiles: the network as the caller has it (our default is deny).
const SandboxPolicy kRo{ConfinedSandboxMode::kReadOnly, "/ws", std::nullopt,
                        NetworkPolicy::kInherit};
const SandboxPolicy kWw{ConfinedSandboxMode::kWorkspaceWrite, "/ws", std::nullopt,
                        NetworkPolicy::kInherit};
const Argv kCommand = {"bash", "-c", "echo hi"};
const Runners kRunners{"/usr/bin/bwrap",        "/opt/dsh/landlock-run",
                       "/usr/bin/sandbox-exec", {"node", "/opt/dsh/windows-acl-runner.js"},
                       "/opt/dsh/dsh-netproxy", "/opt/dsh/dsh-seccomp-exec"};
const LandlockFeatures kAbi7{SandboxEnforcement::kFull, 7, true, true, true};
const LandlockFeatures kAbi4{SandboxEnforcement::kPartial, 4, true, false, true};
const std::string kNotice = "landlock-run: partial enforcement (older Landlock ABI)";

SandboxPolicy with_network_denied(SandboxPolicy policy) {
  policy.network = NetworkPolicy::kDeny;
  return policy;
}

ConfinedArgv wrap_of(const Selection& selection, const SandboxPolicy& policy,
                     const Argv& roots = {}) {
  return wrap(selection, kRunners, kCommand, policy, roots, "/tmp/user");
}

// Index of the first occurrence of the whole group `group` in `argv`.
std::ptrdiff_t index_of(const Argv& argv, const Argv& group) {
  const auto it = std::search(argv.begin(), argv.end(), group.begin(), group.end());
  return it == argv.end() ? -1 : it - argv.begin();
}

TEST(BwrapArgs, ReadOnlyIsTheReferenceProfilePlusIpcNamespaceNewSessionAndCapDrop) {
  EXPECT_EQ(bwrap_args(kRo),
            (Argv{"--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--proc", "/proc",
                  "--die-with-parent", "--unshare-ipc", "--new-session", "--cap-drop", "ALL"}));
}

TEST(BwrapArgs, WorkspaceWriteAddsTmpfsThenWorkspaceBind) {
  EXPECT_EQ(bwrap_args(kWw),
            (Argv{"--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--proc", "/proc",
                  "--die-with-parent", "--unshare-ipc", "--new-session", "--cap-drop", "ALL",
                  "--tmpfs", "/tmp", "--bind", "/ws", "/ws"}));
}

// A tmpfs is no process's data segment: with a memory bound, /tmp and /dev/shm are sized to it,
// /dev/shm mounted after --dev made its directory.
TEST(BwrapArgs, AMemoryBoundSizesTheWritableTmpfsMounts) {
  const Argv args = bwrap_args(kWw, {}, std::uint64_t{64} << 20);
  const auto dev = index_of(args, {"--dev", "/dev"});
  const auto shm = index_of(args, {"--size", "67108864", "--tmpfs", "/dev/shm"});
  ASSERT_GE(dev, 0);
  EXPECT_GT(shm, dev);
  EXPECT_GE(index_of(args, {"--size", "67108864", "--tmpfs", "/tmp", "--bind", "/ws", "/ws"}), 0);
  EXPECT_EQ(std::count(args.begin(), args.end(), "--size"), 2);
  const Argv read_only = bwrap_args(kRo, {}, std::uint64_t{64} << 20);
  EXPECT_GE(index_of(read_only, {"--size", "67108864", "--tmpfs", "/dev/shm"}), 0);
  EXPECT_EQ(std::count(read_only.begin(), read_only.end(), "/tmp"), 0);
}

TEST(BwrapArgs, ReadOnlyRootPrecedesDevProcTmpfsAndTheWorkspaceBind) {
  const Argv args = bwrap_args({ConfinedSandboxMode::kWorkspaceWrite, "/tmp/ws", std::nullopt});
  const auto root = index_of(args, {"--ro-bind", "/", "/"});
  const auto dev = index_of(args, {"--dev", "/dev"});
  const auto proc = index_of(args, {"--unshare-pid", "--proc", "/proc"});
  const auto tmpfs = index_of(args, {"--tmpfs", "/tmp"});
  const auto bind = index_of(args, {"--bind", "/tmp/ws", "/tmp/ws"});
  ASSERT_GE(root, 0);
  EXPECT_LT(root, dev);
  EXPECT_LT(dev, proc);
  EXPECT_LT(proc, tmpfs);
  EXPECT_LT(tmpfs, bind) << "a workspace under /tmp must be bound on top of the tmpfs";
}

TEST(BwrapArgs, DeniedNetworkUnsharesTheNetworkNamespace) {
  const Argv args = bwrap_args(with_network_denied(kRo));
  EXPECT_EQ(std::count(args.begin(), args.end(), "--unshare-net"), 1);
  EXPECT_EQ(index_of(bwrap_args(kRo), {"--unshare-net"}), -1);
}

TEST(LandlockArgs, ReferenceGrantsWithoutKernelExtras) {
  const LandlockFeatures none{SandboxEnforcement::kFull, 5, false, false, false};
  EXPECT_EQ(landlock_args(kRo, none), (Argv{"--ro", "/", "--rw", "/dev/null"}));
  EXPECT_EQ(landlock_args(kWw, none),
            (Argv{"--ro", "/", "--rw", "/dev/null", "--rw", "/tmp", "--rw", "/ws"}));
}

TEST(LandlockArgs, ReadOnlyAddsIpcScopingAndMetadataDenialWhereSupported) {
  EXPECT_EQ(landlock_args(kRo, kAbi7),
            (Argv{"--ro", "/", "--rw", "/dev/null", "--scope-ipc", "--deny-metadata"}));
  EXPECT_EQ(landlock_args(kRo, kAbi4), (Argv{"--ro", "/", "--rw", "/dev/null", "--deny-metadata"}));
}

TEST(LandlockArgs, WorkspaceWriteNeverDeniesMetadata) {
  EXPECT_EQ(landlock_args(kWw, kAbi7),
            (Argv{"--ro", "/", "--rw", "/dev/null", "--rw", "/tmp", "--rw", "/ws", "--scope-ipc"}));
}

TEST(LandlockArgs, InsideBwrapThePrivateTerminalsAndShmAreWritable) {
  EXPECT_EQ(landlock_args(kRo, kAbi7, LandlockPlace::kInsideBwrap),
            (Argv{"--ro", "/", "--rw", "/dev/null", "--rw", "/dev/pts", "--rw", "/dev/shm", "--rw",
                  "/dev/tty", "--scope-ipc", "--deny-metadata"}));
  EXPECT_EQ(landlock_args(kWw, kAbi7, LandlockPlace::kInsideBwrap),
            (Argv{"--ro", "/", "--rw", "/dev/null", "--rw", "/dev/pts", "--rw", "/dev/shm", "--rw",
                  "/dev/tty", "--rw", "/tmp", "--rw", "/ws", "--scope-ipc"}));
  // On the host they are the person's terminals and other programs' shared memory.
  for (const SandboxPolicy& policy : {kRo, kWw}) {
    const Argv host = landlock_args(policy, kAbi7);
    for (const char* path : {"/dev/pts", "/dev/shm", "/dev/tty", "/dev/ptmx", "/dev"}) {
      EXPECT_EQ(std::count(host.begin(), host.end(), path), 0) << path;
    }
  }
}

TEST(LandlockArgs, DeniedNetworkAddsDenyNetwork) {
  const Argv args = landlock_args(with_network_denied(kWw), kAbi7);
  EXPECT_EQ(args.back(), "--deny-network");
}

TEST(Seatbelt, ReadOnlyProfileIsExact) {
  EXPECT_EQ(seatbelt_profile(kRo, {}),
            "(version 1) (allow default) (deny file-write*) (allow file-write* (literal "
            "\"/dev/null\"))");
}

TEST(Seatbelt, WorkspaceWriteAllowsEachRootAsASubpath) {
  const Argv roots = {"/ws", "/private/tmp", "/private/var/folders/x/T"};
  EXPECT_EQ(seatbelt_profile(kWw, roots),
            "(version 1) (allow default) (deny file-write*) (allow file-write* (literal "
            "\"/dev/null\")) (allow file-write* (subpath \"/ws\") (subpath \"/private/tmp\") "
            "(subpath \"/private/var/folders/x/T\"))");
}

TEST(Seatbelt, StringsEscapeBackslashAndQuote) {
  EXPECT_EQ(sbpl_string(R"(/a "b" \c)"), R"("/a \"b\" \\c")");
  const Argv roots = {"/w\")(allow default"};
  EXPECT_NE(seatbelt_profile(kWw, roots).find(R"((subpath "/w\")(allow default"))"),
            std::string::npos);
}

TEST(Seatbelt, DeniedNetworkDeniesAllNetworkOperations) {
  EXPECT_EQ(seatbelt_profile(with_network_denied(kRo), {}).ends_with(" (deny network*)"), true);
}

TEST(WindowsAcl, AgentlessArgvNamesWorkspaceTempAndMode) {
  EXPECT_EQ(windows_acl_args(kWw, "C:/Temp"),
            (Argv{"--workspace", "/ws", "--temp", "C:/Temp", "--mode", "workspace-write"}));
}

TEST(Wrap, BwrapAloneRunsBehindItsExecShimAndIsFullWithTheBwrapDialect) {
  const ConfinedArgv confined = wrap_of({SandboxBackend::kBwrap, std::nullopt}, kRo);
  // The shim opens the launcher's own always-on filter as descriptor 5 and execs bwrap, which
  // reads it (--seccomp 5): the argv asks its spawner for nothing.
  Argv expected = {"/opt/dsh/dsh-seccomp-exec", "--seccomp-fd", "5", "--", "/usr/bin/bwrap"};
  const Argv profile = bwrap_args(kRo);
  expected.insert(expected.end(), profile.begin(), profile.end());
  expected.insert(expected.end(), {"--seccomp", "5", "--", "bash", "-c", "echo hi"});
  EXPECT_EQ(confined.argv, expected);
  EXPECT_TRUE(confined.provided_fds.empty());
  EXPECT_FALSE(bwrap_seccomp_program().empty());
  EXPECT_EQ(bwrap_seccomp_program().size() % 8, 0U);  // struct sock_filter
  EXPECT_EQ(confined.enforcement, SandboxEnforcement::kFull);
  EXPECT_EQ(confined.strict_enforcement, SandboxEnforcement::kFull);
  EXPECT_TRUE(confined.ungoverned.empty());
  EXPECT_EQ(confined.denial_signatures, Argv{"read-only file system"});
  EXPECT_EQ(
      confined.runner_failure_rules,
      (std::vector<RunnerFailureRule>{{std::vector<int>{125}, {"dsh-seccomp-exec: "}, std::nullopt},
                                      {std::nullopt, {"bwrap: "}, std::nullopt}}));
  EXPECT_EQ(confined.layers,
            (std::vector<RunnerLayer>{RunnerLayer::kSeccompExec, RunnerLayer::kBwrap}));
  EXPECT_EQ(confined.backend, "bwrap");
}

TEST(Wrap, BwrapLayeredOverLandlockRunsTheLauncherInsideTheNamespace) {
  const ConfinedArgv confined = wrap_of({SandboxBackend::kBwrap, kAbi7}, kWw);
  Argv expected = {"/usr/bin/bwrap"};
  // Under workspace-write the launcher's supervisor decides the writes (--rule-writes), so it
  // runs even where no status channel reads its records.
  for (const Argv& part :
       {bwrap_args(kWw), Argv{"--", "/opt/dsh/landlock-run"},
        landlock_args(kWw, kAbi7, LandlockPlace::kInsideBwrap), Argv{"--evidence", "--rule-writes"},
        Argv{"--", "bash", "-c", "echo hi"}}) {
    expected.insert(expected.end(), part.begin(), part.end());
  }
  EXPECT_EQ(confined.argv, expected);
  // The inner launcher installs the filter itself: bwrap loads none.
  EXPECT_TRUE(confined.provided_fds.empty());
  EXPECT_EQ(index_of(confined.argv, {"--seccomp"}), -1);
  EXPECT_EQ(confined.enforcement, SandboxEnforcement::kFull);
  EXPECT_EQ(confined.backend, "bwrap+landlock");
  // Only the dialect of the layer that refuses the mode's writes: bwrap's read-only binds.
  EXPECT_EQ(confined.denial_signatures, Argv{"read-only file system"});
  EXPECT_EQ(
      confined.runner_failure_rules,
      (std::vector<RunnerFailureRule>{{std::nullopt, {"bwrap: "}, std::nullopt},
                                      {std::vector<int>{125}, {"landlock-run: "}, Argv{kNotice}}}));
}

TEST(Wrap, LandlockReadOnlyOnAbi7WithMetadataDenialIsFull) {
  const ConfinedArgv confined = wrap_of({SandboxBackend::kLandlock, kAbi7}, kRo);
  EXPECT_EQ(confined.argv, (Argv{"/opt/dsh/landlock-run", "--ro", "/", "--rw", "/dev/null",
                                 "--scope-ipc", "--deny-metadata", "--", "bash", "-c", "echo hi"}));
  EXPECT_EQ(confined.enforcement, SandboxEnforcement::kFull);
  EXPECT_TRUE(confined.ungoverned.empty());
  EXPECT_EQ(confined.denial_signatures, Argv{"permission denied"});
  EXPECT_EQ(
      confined.runner_failure_rules,
      (std::vector<RunnerFailureRule>{{std::vector<int>{125}, {"landlock-run: "}, Argv{kNotice}}}));
}

TEST(Wrap, EveryLinuxBackendNamesWhatItRefuses) {
  const auto mentions = [](const Argv& refused, const std::string& word) {
    return std::any_of(refused.begin(), refused.end(), [&](const std::string& line) {
      return line.find(word) != std::string::npos;
    });
  };
  for (const Selection& selection :
       {Selection{SandboxBackend::kBwrap, std::nullopt}, Selection{SandboxBackend::kBwrap, kAbi7},
        Selection{SandboxBackend::kLandlock, kAbi7}}) {
    for (const SandboxPolicy& policy : {kRo, kWw}) {
      const ConfinedArgv confined = wrap_of(selection, policy);
      for (const char* word : {"shmget", "keyctl", "request_key", "CLONE_NEWUSER", "clone3",
                               "personality", "EPERM", "ENOSYS"}) {
        EXPECT_TRUE(mentions(confined.refused, word)) << confined.backend << " " << word;
      }
      // Refusals are the boundary holding: they never make enforcement partial.
      if (selection.backend == SandboxBackend::kBwrap) {
        EXPECT_EQ(confined.enforcement, SandboxEnforcement::kFull);
      }
      const bool host_dev = selection.backend == SandboxBackend::kLandlock;
      EXPECT_EQ(mentions(confined.refused, "/dev/pts"), host_dev) << confined.backend;
      EXPECT_EQ(mentions(confined.refused, "/dev/shm"), host_dev) << confined.backend;
    }
  }
  EXPECT_TRUE(wrap_of({SandboxBackend::kSeatbelt, std::nullopt}, kRo).refused.empty());
}

// Both readings. The contract's enforcement is the launcher's verdict (full at ABI 7, as the
// reference says). File metadata is Landlock's gap under workspace-write: the launcher's
// supervisor performs those calls inside the writable roots (--contain-metadata), so the strict
// reading is full too, unless evidence is switched off, when it is partial naming metadata.
TEST(Wrap, LandlockWorkspaceWriteNamesFileMetadataOnlyWithoutTheSupervisor) {
  const ConfinedArgv supervised = wrap_of({SandboxBackend::kLandlock, kAbi7}, kWw);
  EXPECT_EQ(supervised.enforcement, SandboxEnforcement::kFull);
  EXPECT_EQ(supervised.strict_enforcement, SandboxEnforcement::kFull);
  EXPECT_TRUE(supervised.ungoverned.empty());
  EXPECT_NE(std::find(supervised.argv.begin(), supervised.argv.end(), "--contain-metadata"),
            supervised.argv.end());
  const ConfinedArgv bare = wrap(Selection{SandboxBackend::kLandlock, kAbi7}, kRunners, kCommand,
                                 kWw, {}, "/tmp/user", RunNeeds{"", false, false});
  EXPECT_EQ(bare.enforcement, SandboxEnforcement::kFull);
  EXPECT_EQ(bare.strict_enforcement, SandboxEnforcement::kPartial);
  ASSERT_EQ(bare.ungoverned.size(), 1u);
  EXPECT_EQ(bare.ungoverned[0].rfind("file metadata outside the workspace", 0), 0u);
  EXPECT_EQ(std::find(bare.argv.begin(), bare.argv.end(), "--contain-metadata"), bare.argv.end());
  const ConfinedArgv read_only = wrap_of({SandboxBackend::kLandlock, kAbi7}, kRo);
  EXPECT_EQ(read_only.enforcement, SandboxEnforcement::kFull);
  EXPECT_EQ(read_only.strict_enforcement, SandboxEnforcement::kFull);
  EXPECT_TRUE(read_only.ungoverned.empty());
}

TEST(Wrap, LandlockOnAnOlderAbiNamesWhatItCannotGovern) {
  const LandlockFeatures abi2{SandboxEnforcement::kPartial, 2, true, false, true};
  const ConfinedArgv confined = wrap_of({SandboxBackend::kLandlock, abi2}, kRo);
  EXPECT_EQ(confined.enforcement, SandboxEnforcement::kPartial);  // the launcher's verdict
  EXPECT_EQ(confined.strict_enforcement, SandboxEnforcement::kPartial);
  EXPECT_EQ(confined.ungoverned, (Argv{"file truncation (Landlock ABI < 3)",
                                       "ioctl on device files (Landlock ABI < 5)"}));
}

TEST(Wrap, LandlockWithoutSeccompLeavesReadOnlyMetadataUngoverned) {
  const LandlockFeatures no_seccomp{SandboxEnforcement::kFull, 7, false, true, false};
  const ConfinedArgv confined = wrap_of({SandboxBackend::kLandlock, no_seccomp}, kRo);
  EXPECT_EQ(confined.enforcement, SandboxEnforcement::kFull);  // the launcher's verdict
  EXPECT_EQ(confined.strict_enforcement, SandboxEnforcement::kPartial);
  EXPECT_EQ(index_of(confined.argv, {"--deny-metadata"}), -1);
}

TEST(Wrap, SeatbeltPassesTheProfileAndTheSeparator) {
  const Argv roots = {"/ws", "/private/tmp"};
  const ConfinedArgv confined = wrap_of({SandboxBackend::kSeatbelt, std::nullopt}, kWw, roots);
  EXPECT_EQ(confined.argv, (Argv{"/usr/bin/sandbox-exec", "-p", seatbelt_profile(kWw, roots), "--",
                                 "bash", "-c", "echo hi"}));
  EXPECT_EQ(confined.enforcement, SandboxEnforcement::kFull);
  EXPECT_EQ(confined.denial_signatures, Argv{"operation not permitted"});
  EXPECT_EQ(confined.runner_failure_rules,
            (std::vector<RunnerFailureRule>{{std::nullopt, {"sandbox-exec: "}, std::nullopt}}));
}

TEST(Wrap, WindowsAclIsAlwaysPartialWithTheAclDialect) {
  const ConfinedArgv confined = wrap_of({SandboxBackend::kWindowsAcl, std::nullopt}, kRo);
  EXPECT_EQ(confined.argv,
            (Argv{"node", "/opt/dsh/windows-acl-runner.js", "--workspace", "/ws", "--temp",
                  "/tmp/user", "--mode", "read-only", "--", "bash", "-c", "echo hi"}));
  EXPECT_EQ(confined.enforcement, SandboxEnforcement::kPartial);
  EXPECT_EQ(confined.strict_enforcement, SandboxEnforcement::kPartial);
  EXPECT_FALSE(confined.ungoverned.empty());
  EXPECT_EQ(confined.denial_signatures,
            (Argv{"access is denied", "access to the path", "permission denied"}));
  EXPECT_EQ(confined.runner_failure_rules,
            (std::vector<RunnerFailureRule>{
                {std::vector<int>{127}, {"windows-acl-run: "}, std::nullopt}}));
}

TEST(Wrap, NetworkFactIsWhatWasApplied) {
  EXPECT_EQ(wrap_of({SandboxBackend::kBwrap, std::nullopt}, with_network_denied(kRo)).network,
            NetworkPolicy::kDeny);
  EXPECT_EQ(wrap_of({SandboxBackend::kBwrap, std::nullopt}, kRo).network, NetworkPolicy::kInherit);
}

TEST(UnsupportedReason, NetworkDenialEachBackendCannotGiveIsNamed) {
  const SandboxPolicy deny = with_network_denied(kRo);
  const LandlockFeatures no_seccomp{SandboxEnforcement::kFull, 7, false, true, false};
  EXPECT_EQ(unsupported_reason({SandboxBackend::kBwrap, std::nullopt}, kRunners, deny),
            std::nullopt);
  EXPECT_EQ(unsupported_reason({SandboxBackend::kLandlock, kAbi7}, kRunners, deny), std::nullopt);
  EXPECT_NE(unsupported_reason({SandboxBackend::kLandlock, no_seccomp}, kRunners, deny),
            std::nullopt);
  EXPECT_NE(unsupported_reason({SandboxBackend::kWindowsAcl, std::nullopt}, kRunners, deny),
            std::nullopt);
  EXPECT_EQ(unsupported_reason({SandboxBackend::kWindowsAcl, std::nullopt}, kRunners, kRo),
            std::nullopt);
}

Runners with_launcher(const std::string& launcher) {
  Runners runners = kRunners;
  runners.landlock_run = launcher;
  return runners;
}

TEST(HostWritable, WorkspaceUnderWorkspaceWriteAndTmpUnderLandlockOnly) {
  EXPECT_FALSE(host_writable("/ws/bin/x", SandboxBackend::kLandlock, kRo));
  EXPECT_TRUE(host_writable("/ws/bin/x", SandboxBackend::kBwrap, kWw));
  EXPECT_TRUE(host_writable("/ws", SandboxBackend::kBwrap, kWw));
  EXPECT_FALSE(host_writable("/wsx/bin/x", SandboxBackend::kBwrap, kWw));
  EXPECT_TRUE(host_writable("/tmp/b/landlock-run", SandboxBackend::kLandlock, kWw));
  EXPECT_FALSE(host_writable("/tmp/b/landlock-run", SandboxBackend::kBwrap, kWw));
  EXPECT_TRUE(host_writable("/usr/bin/x", SandboxBackend::kBwrap,
                            {ConfinedSandboxMode::kWorkspaceWrite, "/", std::nullopt}));
}

TEST(UnsupportedReason, ALauncherTheCommandCouldReplaceIsRefused) {
  const Selection landlock{SandboxBackend::kLandlock, kAbi7};
  const std::optional<std::string> in_workspace =
      unsupported_reason(landlock, with_launcher("/ws/build/landlock-run"), kWw);
  ASSERT_NE(in_workspace, std::nullopt);
  EXPECT_NE(in_workspace->find("/ws/build/landlock-run"), std::string::npos);
  EXPECT_NE(unsupported_reason(landlock, with_launcher("/tmp/build/landlock-run"), kWw),
            std::nullopt);
  EXPECT_EQ(unsupported_reason(landlock, with_launcher("/tmp/build/landlock-run"), kRo),
            std::nullopt);
}

TEST(UnsupportedReason, ABwrapTheCommandCouldReplaceIsRefused) {
  Runners runners = kRunners;
  runners.bwrap = "/ws/tools/bwrap";
  EXPECT_NE(unsupported_reason({SandboxBackend::kBwrap, std::nullopt}, runners, kWw), std::nullopt);
  EXPECT_EQ(unsupported_reason({SandboxBackend::kBwrap, std::nullopt}, runners, kRo), std::nullopt);
}

// The layer is refused, never dropped: without it the run would be weaker than its facts.
TEST(UnsupportedReason, ALayeredLauncherTheCommandCouldReplaceIsRefused) {
  const Selection layered{SandboxBackend::kBwrap, kAbi7};
  const auto reason = unsupported_reason(layered, with_launcher("/ws/build/landlock-run"), kWw);
  ASSERT_NE(reason, std::nullopt);
  EXPECT_NE(reason->find("/ws/build/landlock-run"), std::string::npos);
  EXPECT_EQ(unsupported_reason(layered, with_launcher("/ws/build/landlock-run"), kRo),
            std::nullopt);
  // bwrap's private /tmp under workspace-write: a launcher there is out of the command's reach.
  EXPECT_EQ(unsupported_reason(layered, with_launcher("/tmp/b/landlock-run"), kWw), std::nullopt);
}

TEST(Wrap, BwrapKeepsALauncherUnderTmpVisibleOverTheTmpfs) {
  const ConfinedArgv confined =
      wrap({SandboxBackend::kBwrap, kAbi7}, with_launcher("/tmp/b/landlock-run"), kCommand, kWw, {},
           "/tmp/user");
  EXPECT_EQ(confined.backend, "bwrap+landlock");
  const auto tmpfs = index_of(confined.argv, {"--tmpfs", "/tmp"});
  const auto bind =
      index_of(confined.argv, {"--ro-bind", "/tmp/b/landlock-run", "/tmp/b/landlock-run"});
  ASSERT_GE(tmpfs, 0);
  EXPECT_LT(tmpfs, bind);
}

TEST(Wrap, BwrapBindsTheLauncherOnlyWhereAProfileMountCoversIt) {
  for (const SandboxPolicy& policy : {kRo, kWw}) {
    const ConfinedArgv confined =
        wrap({SandboxBackend::kBwrap, kAbi7}, with_launcher("/opt/dsh/landlock-run"), kCommand,
             policy, {}, "/tmp/user");
    EXPECT_EQ(confined.backend, "bwrap+landlock");
    EXPECT_EQ(std::count(confined.argv.begin(), confined.argv.end(), "/opt/dsh/landlock-run"), 1);
  }
  const ConfinedArgv read_only =
      wrap({SandboxBackend::kBwrap, kAbi7}, with_launcher("/tmp/b/landlock-run"), kCommand, kRo, {},
           "/tmp/user");
  EXPECT_EQ(std::count(read_only.argv.begin(), read_only.argv.end(), "/tmp/b/landlock-run"), 1);
  const ConfinedArgv under_dev =
      wrap({SandboxBackend::kBwrap, kAbi7}, with_launcher("/dev/shm/landlock-run"), kCommand, kRo,
           {}, "/tmp/user");
  EXPECT_GE(
      index_of(under_dev.argv, {"--ro-bind", "/dev/shm/landlock-run", "/dev/shm/landlock-run"}), 0);
}

TEST(Wrap, RogueBackendValueThrowsInsteadOfWrapping) {
  EXPECT_THROW((void)wrap_of({static_cast<SandboxBackend>(42), std::nullopt}, kRo),
               std::logic_error);
  EXPECT_THROW((void)backend_name(static_cast<SandboxBackend>(42)), std::logic_error);
}

// The documented bwrap-compatible profile, exactly: a runner built to it rejects anything more.
TEST(WrapRunnerCommand, RunnerGetsTheDocumentedProfileExactly) {
  const Argv runner = {"fake-runner", "--flag"};
  const Argv signatures = {"fake-runner: "};
  const ConfinedArgv ro = wrap_runner_command(runner, signatures, kCommand, kRo);
  EXPECT_EQ(ro.argv,
            (Argv{"fake-runner", "--flag", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid",
                  "--proc", "/proc", "--die-with-parent", "--", "bash", "-c", "echo hi"}));
  const ConfinedArgv ww = wrap_runner_command(runner, signatures, kCommand, kWw);
  EXPECT_EQ(ww.argv, (Argv{"fake-runner",
                           "--flag",
                           "--ro-bind",
                           "/",
                           "/",
                           "--dev",
                           "/dev",
                           "--unshare-pid",
                           "--proc",
                           "/proc",
                           "--die-with-parent",
                           "--tmpfs",
                           "/tmp",
                           "--bind",
                           "/ws",
                           "/ws",
                           "--",
                           "bash",
                           "-c",
                           "echo hi"}));
  EXPECT_EQ(ro.denial_signatures, (Argv{"read-only file system", "permission denied"}));
  EXPECT_EQ(ro.runner_failure_rules,
            (std::vector<RunnerFailureRule>{{std::nullopt, signatures, std::nullopt}}));
  // The contract: the operator asserts full. Honest: what the hardening options would close is
  // named, so the strict reading is partial.
  EXPECT_EQ(ro.enforcement, SandboxEnforcement::kFull);
  EXPECT_EQ(ro.strict_enforcement, SandboxEnforcement::kPartial);
  EXPECT_EQ(ro.ungoverned, runner_command_ungoverned());
  EXPECT_EQ(ro.ungoverned.size(), 3U);
  EXPECT_EQ(runner_command_unsupported_reason(kRo, false), std::nullopt);
  EXPECT_NE(runner_command_unsupported_reason(with_network_denied(kRo), false), std::nullopt);
}

TEST(WrapRunnerCommand, HardeningOnlyWhenTheOperatorSaysTheRunnerAcceptsIt) {
  const Argv runner = {"fake-runner"};
  const ConfinedArgv confined =
      wrap_runner_command(runner, Argv{"fake-runner: "}, kCommand, kRo, true);
  Argv expected = runner;
  const Argv profile = bwrap_args(kRo);
  expected.insert(expected.end(), profile.begin(), profile.end());
  expected.insert(expected.end(), {"--", "bash", "-c", "echo hi"});
  EXPECT_EQ(confined.argv, expected);
  EXPECT_NE(index_of(confined.argv, {"--cap-drop", "ALL"}), -1);
  EXPECT_EQ(confined.enforcement, SandboxEnforcement::kFull);  // the operator's assertion
  EXPECT_EQ(confined.strict_enforcement, SandboxEnforcement::kFull);
  EXPECT_TRUE(confined.ungoverned.empty());
  EXPECT_EQ(runner_command_unsupported_reason(with_network_denied(kRo), true), std::nullopt);
  const ConfinedArgv denied =
      wrap_runner_command(runner, Argv{"r: "}, kCommand, with_network_denied(kRo), true);
  EXPECT_NE(index_of(denied.argv, {"--unshare-net"}), -1);
}

// A launcher without --features (the reference's) reports only full or partial: its gaps are
// named as that, never as "ABI < 3" of an ABI it may not have.
TEST(Wrap, LandlockWithoutFeaturesIsProbedAsWhatItIs) {
  const LandlockFeatures full_unknown{SandboxEnforcement::kFull, 0, false, false, false};
  const ConfinedArgv full = wrap_of({SandboxBackend::kLandlock, full_unknown}, kRo);
  for (const std::string& gap : full.ungoverned) {
    EXPECT_EQ(gap.find("ABI <"), std::string::npos) << gap;
  }
  EXPECT_EQ(full.ungoverned,
            (Argv{"file metadata: chmod, chown, utimes and extended attributes (Landlock does not "
                  "govern them and this launcher has no seccomp metadata filter)"}));
  EXPECT_EQ(index_of(full.argv, {"--deny-metadata"}), -1);
  EXPECT_EQ(index_of(full.argv, {"--scope-ipc"}), -1);
  const LandlockFeatures partial_unknown{SandboxEnforcement::kPartial, 0, false, false, false};
  const ConfinedArgv partial = wrap_of({SandboxBackend::kLandlock, partial_unknown}, kRo);
  ASSERT_FALSE(partial.ungoverned.empty());
  EXPECT_EQ(partial.ungoverned[0].find("the file accesses this kernel's older Landlock ABI"), 0U);
  for (const std::string& gap : partial.ungoverned) {
    EXPECT_EQ(gap.find("ABI <"), std::string::npos) << gap;
  }
}

TEST(WrapRunnerCommand, IsItsOwnLayerWithoutChannels) {
  const ConfinedArgv confined =
      wrap_runner_command(Argv{"/opt/runner"}, Argv{"r: "}, kCommand, kRo);
  EXPECT_EQ(confined.layers, std::vector<RunnerLayer>{RunnerLayer::kRunnerCommand});
  EXPECT_EQ(confined.backend, "runner-command");
  EXPECT_TRUE(confined.status_channels.empty());
}

// What a run needs (status channels, the workdir) lands in the argv confine() returns: each
// runner's flags right after its program name, and the channels they name.
const RunNeeds kNeeds{"/ws/sub", true};

TEST(WrapWithRunNeeds, LayeredBwrapNamesBothChannelsAndEntersTheWorkdir) {
  const ConfinedArgv confined = wrap(Selection{SandboxBackend::kBwrap, kAbi7}, kRunners, kCommand,
                                     kWw, {}, "/tmp/user", kNeeds);
  Argv expected = {"/usr/bin/bwrap", "--json-status-fd", "3", "--chdir", "/ws/sub"};
  for (const Argv& part :
       {bwrap_args(kWw), Argv{"--", "/opt/dsh/landlock-run", "--status-fd", "4", "--evidence"},
        landlock_args(kWw, kAbi7, LandlockPlace::kInsideBwrap), Argv{"--rule-writes"},
        Argv{"--", "bash", "-c", "echo hi"}}) {
    expected.insert(expected.end(), part.begin(), part.end());
  }
  EXPECT_EQ(confined.argv, expected);
  EXPECT_EQ(confined.status_channels,
            (std::vector<StatusChannel>{
                {kBwrapStatusFd, RunnerLayer::kBwrap, StatusFormat::kBwrapJson},
                {kLauncherStatusFd, RunnerLayer::kLandlockRun, StatusFormat::kLauncherLines}}));
  EXPECT_EQ(confined.layers,
            (std::vector<RunnerLayer>{RunnerLayer::kBwrap, RunnerLayer::kLandlockRun}));
  EXPECT_EQ(confined.backend, "bwrap+landlock");
  EXPECT_TRUE(confined.provided_fds.empty());
}

TEST(WrapWithRunNeeds, BwrapAloneHasItsStatusChannelBehindTheExecShim) {
  const ConfinedArgv confined = wrap(Selection{SandboxBackend::kBwrap, std::nullopt}, kRunners,
                                     kCommand, kRo, {}, "/tmp/user", kNeeds);
  Argv expected = {"/opt/dsh/dsh-seccomp-exec",
                   "--seccomp-fd",
                   "5",
                   "--",
                   "/usr/bin/bwrap",
                   "--json-status-fd",
                   "3",
                   "--chdir",
                   "/ws/sub"};
  const Argv profile = bwrap_args(kRo);
  expected.insert(expected.end(), profile.begin(), profile.end());
  expected.insert(expected.end(), {"--seccomp", "5", "--", "bash", "-c", "echo hi"});
  EXPECT_EQ(confined.argv, expected);
  EXPECT_EQ(confined.status_channels,
            (std::vector<StatusChannel>{
                {kBwrapStatusFd, RunnerLayer::kBwrap, StatusFormat::kBwrapJson}}));
  EXPECT_TRUE(confined.provided_fds.empty());
  EXPECT_EQ(confined.layers,
            (std::vector<RunnerLayer>{RunnerLayer::kSeccompExec, RunnerLayer::kBwrap}));
}

TEST(WrapWithRunNeeds, TheWorkdirAloneGivesBwrapChdirWithoutChannels) {
  const ConfinedArgv confined = wrap(Selection{SandboxBackend::kBwrap, kAbi7}, kRunners, kCommand,
                                     kRo, {}, "/tmp/user", RunNeeds{"/ws", false});
  EXPECT_EQ(Argv(confined.argv.begin(), confined.argv.begin() + 4),
            (Argv{"/usr/bin/bwrap", "--chdir", "/ws", "--ro-bind"}));
  EXPECT_EQ(index_of(confined.argv, {"--json-status-fd"}), -1);
  EXPECT_EQ(index_of(confined.argv, {"--status-fd"}), -1);
  EXPECT_TRUE(confined.status_channels.empty());
}

// The launcher enters the workdir itself, as bwrap's --chdir does, so the argv starts the command
// in the same directory whichever backend confines it.
TEST(WrapWithRunNeeds, LandlockAloneHasItsChannelAndEntersTheWorkdir) {
  const ConfinedArgv confined = wrap(Selection{SandboxBackend::kLandlock, kAbi7}, kRunners,
                                     kCommand, kRo, {}, "/tmp/user", kNeeds);
  EXPECT_EQ(confined.argv, (Argv{"/opt/dsh/landlock-run", "--status-fd", "4", "--evidence",
                                 "--chdir", "/ws/sub", "--ro", "/", "--rw", "/dev/null",
                                 "--scope-ipc", "--deny-metadata", "--", "bash", "-c", "echo hi"}));
  EXPECT_EQ(confined.status_channels,
            (std::vector<StatusChannel>{
                {kLauncherStatusFd, RunnerLayer::kLandlockRun, StatusFormat::kLauncherLines}}));
  EXPECT_EQ(confined.layers, std::vector<RunnerLayer>{RunnerLayer::kLandlockRun});
  EXPECT_EQ(confined.backend, "landlock");
}

TEST(WrapWithRunNeeds, SeatbeltAndWindowsAclHaveNoChannelsAndTheSameArgv) {
  for (const Selection& selection : {Selection{SandboxBackend::kSeatbelt, std::nullopt},
                                     Selection{SandboxBackend::kWindowsAcl, std::nullopt}}) {
    const ConfinedArgv plain = wrap_of(selection, kRo);
    const ConfinedArgv needing = wrap(selection, kRunners, kCommand, kRo, {}, "/tmp/user", kNeeds);
    EXPECT_EQ(needing, plain);
    EXPECT_TRUE(needing.status_channels.empty());
    EXPECT_EQ(needing.layers.size(), 1U);
    EXPECT_EQ(needing.backend, selection_name(selection));
  }
}

TEST(Layers, TheBackendLabelIsDerivedFromTheTypedList) {
  for (const Selection& selection :
       {Selection{SandboxBackend::kBwrap, std::nullopt}, Selection{SandboxBackend::kBwrap, kAbi7},
        Selection{SandboxBackend::kLandlock, kAbi7},
        Selection{SandboxBackend::kSeatbelt, std::nullopt},
        Selection{SandboxBackend::kWindowsAcl, std::nullopt}}) {
    const ConfinedArgv confined = wrap_of(selection, kRo);
    EXPECT_EQ(confined.layers, selection_layers(selection));
    EXPECT_EQ(confined.backend, backend_label(confined.layers));
  }
  EXPECT_EQ(selection_name({SandboxBackend::kBwrap, kAbi7}), "bwrap+landlock");
  EXPECT_EQ(selection_name({SandboxBackend::kBwrap, std::nullopt}), "bwrap");
  EXPECT_EQ(selection_name({SandboxBackend::kLandlock, kAbi7}), "landlock");
  EXPECT_EQ(selection_name({SandboxBackend::kWindowsAcl, std::nullopt}), "windows-acl");
}

TEST(BwrapHides, ItsOwnDevProcAndTheTmpfsOfWorkspaceWrite) {
  EXPECT_TRUE(bwrap_hides("/dev/shm/x", kRo));
  EXPECT_TRUE(bwrap_hides("/proc/1", kRo));
  EXPECT_FALSE(bwrap_hides("/tmp/x", kRo));
  EXPECT_TRUE(bwrap_hides("/tmp/x", kWw));
  EXPECT_FALSE(bwrap_hides("/opt/dsh/landlock-run", kWw));
  EXPECT_FALSE(bwrap_hides("/devx", kRo));
}

// The status parsers: what each runner's channel says about a run that exited nonzero.
ConfinedArgv channels_of(const Selection& selection) {
  return wrap(selection, kRunners, kCommand, kRo, {}, "/tmp/user", kNeeds);
}

const std::string kExited = R"({ "child-pid": 7 }
{ "exit-code": 1 })";

TEST(StatusReports, ACleanExitOrASignalIsNeverARunnersReport) {
  const ConfinedArgv layered = channels_of({SandboxBackend::kBwrap, kAbi7});
  const Argv silent = {"", "landlock-run: cannot open rule path /x: No such file or directory"};
  EXPECT_EQ(read_status_reports(layered, silent, 0, "bwrap: x"), RunnerReport{});
  EXPECT_EQ(read_status_reports(layered, silent, std::nullopt, "bwrap: x"), RunnerReport{});
}

TEST(StatusReports, TheLaunchersLineIsItsFailureOrTheCommandsExecRefusal) {
  const ConfinedArgv alone = channels_of({SandboxBackend::kLandlock, kAbi7});
  const std::string line = "landlock-run: cannot open rule path /x: No such file or directory";
  EXPECT_EQ(read_status_reports(alone, Argv{line + "\n"}, 125, "").failure, line);
  EXPECT_EQ(read_status_reports(
                alone, Argv{"landlock-run: exec failed: /x: No such file or directory\n"}, 125, "")
                .exec_refused,
            127);
  EXPECT_EQ(
      read_status_reports(alone, Argv{"landlock-run: exec failed: /x: Permission denied"}, 125, "")
          .exec_refused,
      126);
  // Nothing on the channel: the command's own status, whatever it printed.
  EXPECT_EQ(read_status_reports(alone, Argv{""}, 125, "landlock-run: exec failed: spoofed"),
            RunnerReport{});
}

TEST(StatusReports, BwrapWithoutItsExitReportFailedWithItsFirstLine) {
  const ConfinedArgv alone = channels_of({SandboxBackend::kBwrap, std::nullopt});
  EXPECT_EQ(read_status_reports(alone, Argv{kExited}, 1, "bwrap: spoofed\n"), RunnerReport{});
  EXPECT_EQ(read_status_reports(alone, Argv{R"({ "child-pid": 7 })"}, 1,
                                "noise\nbwrap: Can't find source path /no: No such file\n")
                .failure,
            "bwrap: Can't find source path /no: No such file");
  EXPECT_EQ(read_status_reports(alone, Argv{""}, 1, "").failure,
            "bwrap: exited before running the command");
  EXPECT_EQ(read_status_reports(alone, Argv{""}, 1,
                                "bwrap: Can't chdir to /tmp/wd: No such file or directory")
                .workdir_refused,
            ENOENT);
}

TEST(StatusReports, BwrapsExecIsTheCommandsOnlyWithoutTheLauncherInside) {
  const std::string missing = "bwrap: execvp /x: No such file or directory";
  const ConfinedArgv alone = channels_of({SandboxBackend::kBwrap, std::nullopt});
  EXPECT_EQ(read_status_reports(alone, Argv{""}, 1, missing).exec_refused, 127);
  EXPECT_EQ(
      read_status_reports(alone, Argv{""}, 1, "bwrap: execvp /x: Permission denied").exec_refused,
      126);
  const ConfinedArgv layered = channels_of({SandboxBackend::kBwrap, kAbi7});
  EXPECT_EQ(read_status_reports(layered, Argv{"", ""}, 1, missing).failure, missing);
  // The launcher's line comes first: it is the innermost runner.
  EXPECT_EQ(read_status_reports(layered, Argv{"", "landlock-run: broken"}, 125, missing).failure,
            "landlock-run: broken");
}

}  // namespace
}  // namespace dsh::sandbox::profiles
