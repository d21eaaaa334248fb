// SPDX-License-Identifier: Apache-2.0
// LocalSandboxProvider without a real sandbox: injected probes and fake runners
// written as scripts, so every chain path is exercised on Linux.
#include "dsh/sandbox/local_provider.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <thread>

#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/trust.h"
#include "profiles/profiles.h"
#include "scripts.h"
#include "temp_dir.h"

namespace dsh::sandbox {
namespace {

using Argv = std::vector<std::string>;
using dsh::testing::TempDir;
using dsh::testing::write_script;

const Argv kCommand = {"bash", "-c", "echo hi"};

// The provider adds the secrets found under $HOME to every profile; these comparisons are of the
// profiles without path rules, so the tests run with a home that holds none.
class HomeWithoutSecrets : public ::testing::Environment {
 public:
  void SetUp() override { ::setenv("HOME", "/nonexistent/dsh-unit-home", 1); }
};
[[maybe_unused]] ::testing::Environment* const kHome =
    ::testing::AddGlobalTestEnvironment(new HomeWithoutSecrets);  // gtest owns it
// The reference's profiles: the network as the caller has it (our default is deny).
const SandboxPolicy kRo{ConfinedSandboxMode::kReadOnly, "/ws", std::nullopt,
                        NetworkPolicy::kInherit};
const std::string kNotice = "landlock-run: partial enforcement (older Landlock ABI)";

// A probe hook that marks the listed backends usable (Landlock at ABI 7 with seccomp).
struct FakeProbes {
  std::vector<SandboxBackend> usable;
  std::vector<std::pair<SandboxBackend, std::string>> seen;

  std::function<void(BackendReport&)> hook() {
    return [this](BackendReport& report) {
      seen.emplace_back(report.backend, report.runner);
      report.usable = std::find(usable.begin(), usable.end(), report.backend) != usable.end();
      report.enforcement = SandboxEnforcement::kFull;
      report.landlock_abi = 7;
      report.landlock_seccomp = true;
    };
  }
};

// The runners of these tests exist nowhere or under /tmp: their trust check is tested apart.
Result<void> trust_every_runner(const std::string& /*runner*/, std::span<const std::string>) {
  return {};
}

LocalSandboxHooks linux_hooks(FakeProbes& probes) {
  LocalSandboxHooks hooks;
  hooks.platform = "linux";
  hooks.probe = probes.hook();
  hooks.launcher_path = "/opt/dsh/landlock-run";
  hooks.check_runner = trust_every_runner;
  return hooks;
}

Argv concat(std::initializer_list<Argv> parts) {
  Argv all;
  for (const Argv& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

TEST(LocalProviderRunnerCommand, WrapsWithTheBwrapProfileAndNeverProbes) {
  FakeProbes probes;
  LocalSandboxProvider provider({{"/opt/fake-runner", "--flag"}, {"fake-runner: "}},
                                linux_hooks(probes));
  const ConfinedArgv confined = provider.confine(kCommand, kRo);
  EXPECT_EQ(confined.argv, concat({{"/opt/fake-runner", "--flag"},
                                   profiles::documented_bwrap_args(kRo),
                                   {"--"},
                                   kCommand}));
  EXPECT_EQ(confined.enforcement, SandboxEnforcement::kFull);  // the operator's assertion
  EXPECT_EQ(confined.strict_enforcement, SandboxEnforcement::kPartial);
  EXPECT_EQ(confined.ungoverned, profiles::runner_command_ungoverned());
  EXPECT_EQ(confined.denial_signatures, (Argv{"read-only file system", "permission denied"}));
  EXPECT_EQ(confined.runner_failure_rules,
            (std::vector<RunnerFailureRule>{{std::nullopt, {"fake-runner: "}, std::nullopt}}));
  EXPECT_EQ(provider.probes_run(), 0);
}

TEST(LocalProviderRunnerCommand, HardeningWhenTheConfigSaysTheRunnerAcceptsIt) {
  FakeProbes probes;
  LocalSandboxConfig config{{"/opt/fake-runner"}, {"fake-runner: "}};
  config.runner_accepts_hardening = true;
  LocalSandboxProvider provider(config, linux_hooks(probes));
  const ConfinedArgv confined = provider.confine(kCommand, kRo);
  EXPECT_EQ(confined.argv,
            concat({{"/opt/fake-runner"}, profiles::bwrap_args(kRo), {"--"}, kCommand}));
  EXPECT_EQ(confined.enforcement, SandboxEnforcement::kFull);
  EXPECT_EQ(provider.probes_run(), 0);
}

TEST(LocalProviderRunnerCommand, DeniedNetworkWithoutHardeningIsRefusedNotDropped) {
  FakeProbes probes;
  LocalSandboxProvider provider({{"/opt/fake-runner"}, {"fake-runner: "}}, linux_hooks(probes));
  SandboxPolicy denied = kRo;
  denied.network = NetworkPolicy::kDeny;
  EXPECT_THROW((void)provider.confine(kCommand, denied), SandboxUnavailableError);
}

TEST(LocalProviderChain, NothingUsableIsSandboxUnavailableWithEveryCandidateProbedOnce) {
  FakeProbes probes;
  LocalSandboxProvider provider({}, linux_hooks(probes));
  try {
    (void)provider.confine(kCommand, kRo);
    FAIL() << "expected SANDBOX_UNAVAILABLE";
  } catch (const SandboxUnavailableError& error) {
    EXPECT_EQ(error.code(), "SANDBOX_UNAVAILABLE");
    EXPECT_EQ(error.detail(), std::nullopt);
  }
  EXPECT_EQ(provider.probes_run(), 2);
}

TEST(LocalProviderChain, BwrapUsableAloneGivesTheBwrapWrapExactly) {
  FakeProbes probes{{SandboxBackend::kBwrap}, {}};
  LocalSandboxProvider provider({}, linux_hooks(probes));
  const ConfinedArgv confined = provider.confine(kCommand, kRo);
  ASSERT_GE(confined.argv.size(), 5U);
  // Behind the exec shim installed beside the launcher, which opens the seccomp program.
  EXPECT_EQ(Argv(confined.argv.begin(), confined.argv.begin() + 4),
            (Argv{"/opt/dsh/dsh-seccomp-exec", "--seccomp-fd", "5", "--"}));
  EXPECT_EQ(Argv(confined.argv.begin() + 5, confined.argv.end()),
            concat({profiles::bwrap_args(kRo), {"--seccomp", "5", "--"}, kCommand}));
  EXPECT_TRUE(confined.provided_fds.empty());
  EXPECT_EQ(confined.backend, "bwrap");
  EXPECT_EQ(confined.enforcement, SandboxEnforcement::kFull);
  EXPECT_EQ(
      confined.runner_failure_rules,
      (std::vector<RunnerFailureRule>{{std::vector<int>{125}, {"dsh-seccomp-exec: "}, std::nullopt},
                                      {std::nullopt, {"bwrap: "}, std::nullopt}}));
}

// Fail closed: an exec shim that fails the trust check makes bwrap alone unusable, with the
// cause on bwrap's report, and nothing else is selected in its place.
TEST(LocalProviderChain, BwrapAloneWithAnUntrustedExecShimIsUnusableAndNamed) {
  FakeProbes probes{{SandboxBackend::kBwrap}, {}};
  LocalSandboxHooks hooks = linux_hooks(probes);
  hooks.seccomp_exec_path = "/opt/elsewhere/dsh-seccomp-exec";
  hooks.check_runner = [](const std::string& runner, std::span<const std::string>) -> Result<void> {
    if (runner == "/opt/elsewhere/dsh-seccomp-exec") return InvalidInput{"writable by others"};
    return {};
  };
  LocalSandboxProvider provider({}, hooks);
  EXPECT_THROW((void)provider.confine(kCommand, kRo), SandboxUnavailableError);
  const ProbeSummary summary = LocalSandboxProvider({}, hooks).probe_all();
  EXPECT_EQ(summary.selected, "");
  ASSERT_EQ(summary.backends.size(), 2U);
  EXPECT_FALSE(summary.backends[0].usable);
  EXPECT_NE(summary.backends[0].cause.find("/opt/elsewhere/dsh-seccomp-exec cannot be trusted: "
                                           "writable by others"),
            std::string::npos)
      << summary.backends[0].cause;
  EXPECT_NE(summary.backends[0].fix.find("dsh-seccomp-exec"), std::string::npos);
}

TEST(LocalProviderChain, BwrapAndLandlockUsableLayerTheLauncherInsideBwrap) {
  FakeProbes probes{{SandboxBackend::kBwrap, SandboxBackend::kLandlock}, {}};
  LocalSandboxProvider provider({}, linux_hooks(probes));
  const ConfinedArgv confined = provider.confine(kCommand, kRo);
  const profiles::LandlockFeatures abi7{SandboxEnforcement::kFull, 7, true, true, true};
  EXPECT_EQ(Argv(confined.argv.begin() + 1, confined.argv.end()),
            concat({profiles::bwrap_args(kRo),
                    {"--", "/opt/dsh/landlock-run"},
                    profiles::landlock_args(kRo, abi7, profiles::LandlockPlace::kInsideBwrap),
                    {"--"},
                    kCommand}));
  EXPECT_EQ(confined.backend, "bwrap+landlock");
  EXPECT_EQ(confined.runner_failure_rules.size(), 2u);
}

TEST(LocalProviderChain, BwrapUnusableFallsToLandlockWithItsRuleAndTheLauncherPath) {
  FakeProbes probes{{SandboxBackend::kLandlock}, {}};
  LocalSandboxProvider provider({}, linux_hooks(probes));
  const ConfinedArgv confined = provider.confine(kCommand, kRo);
  EXPECT_EQ(confined.argv.front(), "/opt/dsh/landlock-run");
  EXPECT_EQ(confined.backend, "landlock");
  EXPECT_EQ(
      confined.runner_failure_rules,
      (std::vector<RunnerFailureRule>{{std::vector<int>{125}, {"landlock-run: "}, Argv{kNotice}}}));
  ASSERT_EQ(probes.seen.size(), 2u);
  EXPECT_EQ(probes.seen[1],
            std::make_pair(SandboxBackend::kLandlock, std::string("/opt/dsh/landlock-run")));
}

TEST(LocalProviderChain, DarwinSelectsSeatbeltWithoutProbing) {
  FakeProbes probes;
  LocalSandboxHooks hooks = linux_hooks(probes);
  hooks.platform = "darwin";
  LocalSandboxProvider provider({}, hooks);
  const ConfinedArgv confined = provider.confine(kCommand, kRo);
  EXPECT_EQ(confined.argv,
            concat({{"/usr/bin/sandbox-exec", "-p", profiles::seatbelt_profile(kRo, {})},
                    {"--"},
                    kCommand}));
  EXPECT_EQ(provider.probes_run(), 0);
}

TEST(LocalProviderChain, UnknownPlatformIsUnavailableWithoutAProbe) {
  FakeProbes probes{{SandboxBackend::kBwrap}, {}};
  LocalSandboxHooks hooks = linux_hooks(probes);
  hooks.platform = "freebsd";
  LocalSandboxProvider provider({}, hooks);
  EXPECT_THROW((void)provider.confine(kCommand, kRo), SandboxUnavailableError);
  EXPECT_EQ(provider.probes_run(), 0);
}

TEST(LocalProviderChain, UsableVerdictIsCachedAcrossWraps) {
  FakeProbes probes{{SandboxBackend::kBwrap}, {}};
  LocalSandboxProvider provider({}, linux_hooks(probes));
  for (int i = 0; i < 3; ++i) (void)provider.confine(kCommand, kRo);
  EXPECT_EQ(provider.probes_run(), 2);  // bwrap, and landlock for the second layer
}

TEST(LocalProviderChain, UnavailableVerdictIsCachedAcrossWraps) {
  FakeProbes probes;
  LocalSandboxProvider provider({}, linux_hooks(probes));
  for (int i = 0; i < 3; ++i) {
    EXPECT_THROW((void)provider.confine(kCommand, kRo), SandboxUnavailableError);
  }
  EXPECT_EQ(provider.probes_run(), 2);
}

TEST(LocalProviderChain, InvalidatedVerdictProbesAgain) {
  FakeProbes probes{{SandboxBackend::kBwrap}, {}};
  LocalSandboxProvider provider({}, linux_hooks(probes));
  (void)provider.confine(kCommand, kRo);
  provider.invalidate_verdict();
  (void)provider.confine(kCommand, kRo);
  EXPECT_EQ(provider.probes_run(), 4);
}

TEST(LocalProviderChain, TwoThreadsConfiningAtOnceProbeOnce) {
  std::atomic<int> probes{0};
  LocalSandboxHooks hooks;
  hooks.chain = std::vector{SandboxBackend::kBwrap, SandboxBackend::kSeatbelt};
  hooks.probe = [&](BackendReport& report) {
    ++probes;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    report.usable = true;
  };
  hooks.check_runner = trust_every_runner;  // bwrap alone's exec shim exists nowhere here
  LocalSandboxProvider provider({}, hooks);
  std::thread first([&] { (void)provider.confine(kCommand, kRo); });
  std::thread second([&] { (void)provider.confine(kCommand, kRo); });
  first.join();
  second.join();
  EXPECT_EQ(probes.load(), 1);
}

TEST(LocalProviderChain, ProbeAllReportsEveryBackendAndBecomesTheVerdict) {
  FakeProbes probes{{SandboxBackend::kBwrap, SandboxBackend::kLandlock}, {}};
  LocalSandboxProvider provider({}, linux_hooks(probes));
  const ProbeSummary summary = provider.probe_all();
  ASSERT_EQ(summary.backends.size(), 2u);
  EXPECT_EQ(summary.selected, "bwrap+landlock");
  EXPECT_EQ(provider.confine(kCommand, kRo).backend, "bwrap+landlock");
  EXPECT_EQ(provider.probes_run(), 2);
}

TEST(LocalProviderChain, RogueChainEntryThrowsUnreachableVariant) {
  FakeProbes probes{{SandboxBackend::kBwrap}, {}};
  LocalSandboxHooks hooks = linux_hooks(probes);
  hooks.chain = std::vector{static_cast<SandboxBackend>(42), SandboxBackend::kBwrap};
  LocalSandboxProvider provider({}, hooks);
  try {
    (void)provider.confine(kCommand, kRo);
    FAIL() << "a rogue chain entry must throw";
  } catch (const std::logic_error& error) {
    EXPECT_NE(std::string(error.what()).find("unreachable variant"), std::string::npos);
  }
}

TEST(LocalProviderChain, WindowsAclPassingIsPartialWithTheAclDialect) {
  FakeProbes probes{{SandboxBackend::kWindowsAcl}, {}};
  LocalSandboxHooks hooks = linux_hooks(probes);
  hooks.chain = std::vector{SandboxBackend::kWindowsAcl, SandboxBackend::kBwrap};
  hooks.windows_acl_runner = {"/usr/bin/node", "/opt/runner.js"};
  hooks.temp_dir = "/tmp/user";
  LocalSandboxProvider provider({}, hooks);
  const ConfinedArgv confined = provider.confine(Argv{"true"}, kRo);
  EXPECT_EQ(confined.argv, (Argv{"/usr/bin/node", "/opt/runner.js", "--workspace", "/ws", "--temp",
                                 "/tmp/user", "--mode", "read-only", "--", "true"}));
  EXPECT_EQ(confined.enforcement, SandboxEnforcement::kPartial);
  EXPECT_EQ(confined.runner_failure_rules,
            (std::vector<RunnerFailureRule>{
                {std::vector<int>{127}, {"windows-acl-run: "}, std::nullopt}}));
}

TEST(LocalProviderChain, WindowsAclFailingFallsThroughToBwrap) {
  FakeProbes probes{{SandboxBackend::kBwrap}, {}};
  LocalSandboxHooks hooks = linux_hooks(probes);
  hooks.chain = std::vector{SandboxBackend::kWindowsAcl, SandboxBackend::kBwrap};
  LocalSandboxProvider provider({}, hooks);
  EXPECT_EQ(provider.confine(kCommand, kRo).backend, "bwrap");
}

TEST(LocalProviderNetwork, DeniedNetworkTheBackendCannotGiveIsUnavailableWithTheReason) {
  FakeProbes probes{{SandboxBackend::kWindowsAcl}, {}};
  LocalSandboxHooks hooks = linux_hooks(probes);
  hooks.chain = std::vector{SandboxBackend::kWindowsAcl, SandboxBackend::kBwrap};
  LocalSandboxProvider provider({}, hooks);
  SandboxPolicy deny = kRo;
  deny.network = NetworkPolicy::kDeny;
  try {
    (void)provider.confine(kCommand, deny);
    FAIL() << "windows-acl cannot deny network";
  } catch (const SandboxUnavailableError& error) {
    EXPECT_EQ(error.refusal(), "the windows-acl runner cannot deny network access");
    EXPECT_EQ(error.detail(), std::nullopt);  // refused before anything ran: no runner failed
  }
}

TEST(LocalProviderWorkspace, WorkspaceGivenThroughASymlinkConfinesTheRealDirectory) {
  TempDir dir;
  std::filesystem::create_directories(dir / "real/ws");
  std::filesystem::create_directory_symlink(dir / "real", dir / "link");
  FakeProbes probes{{SandboxBackend::kBwrap}, {}};
  LocalSandboxProvider provider({}, linux_hooks(probes));
  const SandboxPolicy through_link{ConfinedSandboxMode::kWorkspaceWrite, dir / "link/ws/../ws",
                                   std::nullopt};
  const ConfinedArgv confined = provider.confine(kCommand, through_link);
  const std::string real = std::filesystem::canonical(dir / "real/ws").string();
  const Argv bind = {"--bind", real, real};
  EXPECT_NE(std::search(confined.argv.begin(), confined.argv.end(), bind.begin(), bind.end()),
            confined.argv.end());
}

// Real probes against fake runners written as scripts.
class LocalProviderFakeRunners : public ::testing::Test {
 protected:
  LocalSandboxHooks hooks_with(const std::string& bwrap_body, const std::string& launcher_body) {
    LocalSandboxHooks hooks;
    hooks.platform = "linux";
    hooks.launcher_path = write_script(dir_ / "landlock-run", launcher_body);
    hooks.check_runner = trust_every_runner;
    bwrap_ = write_script(dir_ / "bwrap", bwrap_body);
    // bwrap alone's exec shim, beside the launcher: it runs what follows its "--".
    write_script(dir_ / "dsh-seccomp-exec",
                 "while [ \"$1\" != -- ]; do shift; done; shift; exec \"$@\"");
    return hooks;
  }
  LocalSandboxConfig config(double timeout_ms = 5000) {
    LocalSandboxConfig config;
    config.bwrap_path = bwrap_;
    config.probe_timeout_ms = timeout_ms;
    return config;
  }
  TempDir dir_{
      std::filesystem::temp_directory_path()};  // /tmp: a root every confined mode can write
  std::string bwrap_;
};

constexpr const char* kFailingBwrap = "echo 'bwrap: Creating new namespace failed' >&2; exit 1";

TEST_F(LocalProviderFakeRunners, LandlockProbeReportingFullGivesAFullWrap) {
  LocalSandboxProvider provider(
      config(),
      hooks_with(kFailingBwrap,
                 "case \"$1\" in --probe) echo 'landlock: fully enforced';;"
                 " --features) printf "
                 "'landlock-run=1\\nabi=7\\nseccomp=1\\nstatus_fd=1\\nlist_grants=1\\n';; esac"));
  const ConfinedArgv confined = provider.confine(kCommand, kRo);
  EXPECT_EQ(confined.backend, "landlock");
  EXPECT_EQ(confined.enforcement, SandboxEnforcement::kFull);
  EXPECT_NE(std::find(confined.argv.begin(), confined.argv.end(), "--deny-metadata"),
            confined.argv.end());
}

TEST_F(LocalProviderFakeRunners, LandlockProbeReportingPartialGivesAPartialWrap) {
  LocalSandboxProvider provider(
      config(),
      hooks_with(kFailingBwrap,
                 "case \"$1\" in --probe) echo 'landlock: partially enforced (older "
                 "ABI)';; --features) printf "
                 "'landlock-run=1\\nabi=3\\nseccomp=1\\nstatus_fd=1\\nlist_grants=1\\n';; esac"));
  const ConfinedArgv confined = provider.confine(kCommand, kRo);
  EXPECT_EQ(confined.enforcement, SandboxEnforcement::kPartial);
  EXPECT_EQ(confined.ungoverned, Argv{"ioctl on device files (Landlock ABI < 5)"});
}

TEST_F(LocalProviderFakeRunners, LauncherExiting125FailsClosed) {
  LocalSandboxProvider provider(config(),
                                hooks_with(kFailingBwrap,
                                           "echo 'landlock-run: landlock is not enforced' >&2; "
                                           "exit 125"));
  EXPECT_THROW((void)provider.confine(kCommand, kRo), SandboxUnavailableError);
}

TEST_F(LocalProviderFakeRunners, MissingLauncherAndBwrapFailClosed) {
  LocalSandboxHooks hooks;
  hooks.platform = "linux";
  hooks.launcher_path = dir_ / "no-such-launcher";
  hooks.check_runner = trust_every_runner;
  LocalSandboxConfig missing;
  missing.bwrap_path = dir_ / "no-such-bwrap";
  LocalSandboxProvider provider(missing, hooks);
  EXPECT_THROW((void)provider.confine(kCommand, kRo), SandboxUnavailableError);
}

// A launcher that behaves as the reference's: it passes --probe and knows no --features, so it
// would fail every run, which passes --status-fd, --evidence and --ro-try. Unusable, with why.
TEST_F(LocalProviderFakeRunners, LauncherWithoutFeaturesIsUnusableNamingWhy) {
  const std::string reference_like = REFERENCE_LAUNCHER_PATH;
  LocalSandboxHooks hooks = hooks_with(kFailingBwrap, "exit 125");
  hooks.launcher_path = reference_like;
  LocalSandboxProvider provider(config(), hooks);
  EXPECT_THROW((void)provider.confine(kCommand, kRo), SandboxUnavailableError);
  const ProbeSummary summary = provider.probe_all();
  const auto landlock =
      std::find_if(summary.backends.begin(), summary.backends.end(),
                   [](const BackendReport& r) { return r.backend == SandboxBackend::kLandlock; });
  ASSERT_NE(landlock, summary.backends.end());
  EXPECT_FALSE(landlock->usable);
  EXPECT_NE(landlock->cause.find(reference_like + " does not answer --features"), std::string::npos)
      << landlock->cause;
}

TEST_F(LocalProviderFakeRunners, ProbeTimeoutBoundsASlowLauncher) {
  const std::string slow =
      "sleep 1; case \"$1\" in --probe) echo 'landlock: fully enforced';; --features) printf "
      "'landlock-run=1\\nstatus_fd=1\\nlist_grants=1\\n';; esac";
  LocalSandboxProvider patient(config(15000), hooks_with(kFailingBwrap, slow));
  EXPECT_EQ(patient.confine(kCommand, kRo).backend, "landlock");
  LocalSandboxProvider hasty(config(250), hooks_with(kFailingBwrap, slow));
  EXPECT_THROW((void)hasty.confine(kCommand, kRo), SandboxUnavailableError);
}

// A fake runner's body that writes its arguments to `record`, one a line, and exits 0.
std::string recording_runner(const std::string& record) {
  return "printf '%s\\n' \"$@\" > " + record + "; exit 0";
}

// The arguments a recording_runner received.
Argv recorded_args(const std::string& record) {
  std::ifstream recorded(record);
  Argv seen;
  for (std::string line; std::getline(recorded, line);) seen.push_back(line);
  return seen;
}

TEST_F(LocalProviderFakeRunners, BwrapProbeRunsTheReadOnlyProfileOfTheRoot) {
  const std::string record = dir_ / "bwrap-args";
  LocalSandboxProvider provider(
      config(), hooks_with("printf '%s\\n' \"$@\" '|' >> " + record + "; exit 0", "exit 125"));
  EXPECT_EQ(provider.confine(kCommand, kRo).backend, "bwrap");
  const SandboxPolicy root{ConfinedSandboxMode::kReadOnly, "/", std::nullopt};
  // An absolute true(1), never one found through the caller's PATH or working directory. With
  // Landlock unusable, bwrap alone's exec shim is probed too: bwrap with its seccomp program.
  EXPECT_EQ(recorded_args(record), concat({profiles::bwrap_args(root),
                                           {"--", "/usr/bin/true", "|"},
                                           profiles::bwrap_args(root),
                                           {"--seccomp", "5", "--", "/usr/bin/true", "|"}}));
}

// The reference's windows-acl probe: the runner prefix, then the temp directory as workspace and
// temp, read-only, and `cmd /c exit 0`; passing, the backend is selected as partial; failing, the
// chain goes on.
TEST_F(LocalProviderFakeRunners, WindowsAclProbeRunsTheReferencesCommand) {
  const std::string record = dir_ / "acl-args";
  LocalSandboxHooks hooks = hooks_with(kFailingBwrap, "exit 125");
  hooks.chain = std::vector{SandboxBackend::kWindowsAcl, SandboxBackend::kBwrap};
  hooks.temp_dir = dir_.path();
  hooks.windows_acl_runner = {write_script(dir_ / "acl-runner", recording_runner(record))};
  LocalSandboxProvider passing(config(), hooks);
  const ConfinedArgv confined = passing.confine(kCommand, kRo);
  EXPECT_EQ(confined.backend, "windows-acl");
  EXPECT_EQ(confined.enforcement, SandboxEnforcement::kPartial);
  EXPECT_EQ(recorded_args(record), (Argv{"--workspace", dir_.path(), "--temp", dir_.path(),
                                         "--mode", "read-only", "--", "cmd", "/c", "exit", "0"}));
  hooks.windows_acl_runner = {write_script(dir_ / "acl-runner-1", "exit 1")};
  LocalSandboxProvider failing(config(), hooks);
  EXPECT_THROW((void)failing.confine(kCommand, kRo), SandboxUnavailableError);
}

TEST_F(LocalProviderFakeRunners, SeatbeltFakeExitingZeroWrapsAndExitingOneFailsClosed) {
  LocalSandboxHooks hooks = hooks_with(kFailingBwrap, "exit 125");
  hooks.chain = std::vector{SandboxBackend::kBwrap, SandboxBackend::kSeatbelt};
  hooks.sandbox_exec_path = write_script(dir_ / "sandbox-exec", "exit 0");
  LocalSandboxProvider passing(config(), hooks);
  EXPECT_EQ(passing.confine(kCommand, kRo).argv,
            concat({{hooks.sandbox_exec_path, "-p", profiles::seatbelt_profile(kRo, {})},
                    {"--"},
                    kCommand}));
  hooks.sandbox_exec_path = write_script(dir_ / "sandbox-exec-1", "exit 1");
  LocalSandboxProvider failing(config(), hooks);
  EXPECT_THROW((void)failing.confine(kCommand, kRo), SandboxUnavailableError);
}

TEST_F(LocalProviderFakeRunners, ProbeAllReportsEveryBackendWithCauseAndFix) {
  LocalSandboxProvider provider(config(), hooks_with(kFailingBwrap, "exit 125"));
  const ProbeSummary summary = provider.probe_all();
  EXPECT_EQ(summary.platform, "linux");
  EXPECT_EQ(summary.selected, "");
  ASSERT_EQ(summary.backends.size(), 2u);
  for (const BackendReport& report : summary.backends) {
    EXPECT_FALSE(report.usable);
    EXPECT_FALSE(report.cause.empty());
    EXPECT_FALSE(report.fix.empty());
    EXPECT_EQ(report.cause.find('\n'), std::string::npos);
    EXPECT_EQ(report.fix.find('\n'), std::string::npos);
  }
}

// The default trust check against runners a confined run could have written: a launcher under
// /tmp (where TempDir puts it) is never probed, never run, and the call is unavailable.
TEST_F(LocalProviderFakeRunners, UntrustedLauncherIsNeverProbedAndTheCallIsUnavailable) {
  const std::string marker = dir_ / "probed";
  LocalSandboxHooks hooks = hooks_with(kFailingBwrap, "touch " + marker + "; exit 0");
  hooks.check_runner = nullptr;  // the real check
  LocalSandboxConfig fixed = config();
  fixed.bwrap_path = "/nonexistent/dsh-unit/bwrap";
  LocalSandboxProvider provider(fixed, hooks);
  try {
    (void)provider.confine(kCommand, kRo);
    FAIL() << "a launcher under /tmp must not be trusted";
  } catch (const SandboxUnavailableError& error) {
    const std::string detail = error.refusal().value_or("");
    EXPECT_NE(detail.find("cannot be trusted"), std::string::npos) << detail;
    EXPECT_NE(detail.find("a confined run can write"), std::string::npos) << detail;
  }
  EXPECT_FALSE(std::filesystem::exists(marker));
  EXPECT_EQ(provider.probes_run(), 0);
  // probe_all reports it unusable with the reason and the fix, without running it either.
  const ProbeSummary summary = provider.probe_all();
  ASSERT_EQ(summary.backends.size(), 2U);
  EXPECT_FALSE(summary.backends[1].usable);
  EXPECT_NE(summary.backends[1].cause.find("cannot be trusted"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(marker));
}

// The allow-list's proxy: under bwrap (the fake succeeds), with the proxy a script beside the
// launcher that leaves a marker when it is started.
class LocalProviderFakeProxy : public LocalProviderFakeRunners {
 protected:
  LocalSandboxHooks hooks_with_proxy(const std::string& proxy_body) {
    LocalSandboxHooks hooks = hooks_with("exit 0", "exit 1");
    proxy_ = write_script(dir_ / "dsh-netproxy", "touch " + marker_ + "; " + proxy_body);
    return hooks;
  }
  static SandboxPolicy allow_list() {
    SandboxPolicy policy = kRo;
    policy.network = NetworkPolicy::kAllowList;
    policy.network_allow.allow = {"example.com"};
    return policy;
  }
  static ComponentReport proxy_report(const ProbeSummary& summary) {
    EXPECT_EQ(summary.components.size(), 1U);
    return summary.components.at(0);
  }
  std::string marker_ = dir_ / "proxy-started";
  std::string proxy_;
};

// The real trust check for the proxy alone (it lies under /tmp, a root every call has); the
// other fakes are trusted. A call with an allow-list is unavailable, naming the proxy, and
// nothing starts it; a call without one never consults it.
TEST_F(LocalProviderFakeProxy, UntrustedProxyIsRefusedPerCallAndNeverStarted) {
  LocalSandboxHooks hooks = hooks_with_proxy("exit 0");
  hooks.check_runner = [proxy = proxy_](const std::string& runner,
                                        std::span<const std::string> roots) -> Result<void> {
    if (runner != proxy) return {};
    if (auto checked = check_trusted_path(runner, roots); !checked) return checked.error();
    return {};
  };
  LocalSandboxProvider provider(config(), hooks);
  try {
    (void)provider.confine(kCommand, allow_list());
    FAIL() << "a proxy under /tmp must not be trusted";
  } catch (const SandboxUnavailableError& error) {
    // Refused before anything ran: the reason is in the message, there is no runner's detail.
    const std::string detail = error.what();
    EXPECT_FALSE(error.detail()) << detail;
    EXPECT_NE(detail.find("the network allow-list's proxy " + proxy_ + " cannot be trusted"),
              std::string::npos)
        << detail;
    EXPECT_NE(detail.find("a confined run can write"), std::string::npos) << detail;
  }
  EXPECT_EQ(provider.confine(kCommand, kRo).backend, "bwrap");
  const ComponentReport report = proxy_report(provider.probe_all());
  EXPECT_EQ(report.component, "netproxy");
  EXPECT_EQ(report.runner, proxy_);
  EXPECT_FALSE(report.usable);
  EXPECT_FALSE(report.probed);
  EXPECT_NE(report.cause.find("cannot be trusted"), std::string::npos) << report.cause;
  EXPECT_FALSE(report.fix.empty());
  EXPECT_FALSE(std::filesystem::exists(marker_));
}

TEST_F(LocalProviderFakeProxy, ProbeStartsATrustedProxyOnACommand) {
  LocalSandboxProvider working(config(),
                               hooks_with_proxy(R"([ "$1" = -- ] && shift && exec "$@")"));
  const ComponentReport usable = proxy_report(working.probe_all());
  EXPECT_TRUE(usable.probed);
  EXPECT_TRUE(usable.usable) << usable.cause;
  EXPECT_TRUE(std::filesystem::exists(marker_));

  LocalSandboxProvider failing(config(),
                               hooks_with_proxy("echo 'dsh-netproxy: broken' >&2; exit 125"));
  const ComponentReport broken = proxy_report(failing.probe_all());
  EXPECT_TRUE(broken.probed);
  EXPECT_FALSE(broken.usable);
  EXPECT_NE(broken.cause.find(proxy_ + " failed to run a command: dsh-netproxy: broken"),
            std::string::npos)
      << broken.cause;
  EXPECT_NE(broken.fix.find("reinstall dsh-sandbox"), std::string::npos) << broken.fix;
}

// Only bwrap can force every connection through the proxy: under Landlock alone the component
// is unusable with that reason, and the proxy is not started.
TEST_F(LocalProviderFakeProxy, ProxyIsUnusableWithoutBwrap) {
  LocalSandboxHooks hooks = hooks_with_proxy("exit 0");
  hooks.chain = std::vector<SandboxBackend>{SandboxBackend::kLandlock};
  write_script(hooks.launcher_path,
               "case \"$1\" in --probe) echo 'landlock: fully enforced';;"
               " --features) printf "
               "'landlock-run=1\\nabi=7\\nseccomp=1\\nstatus_fd=1\\nlist_grants=1\\n';; esac");
  LocalSandboxProvider provider(config(), hooks);
  const ProbeSummary summary = provider.probe_all();
  EXPECT_EQ(summary.selected, "landlock");
  const ComponentReport report = proxy_report(summary);
  EXPECT_FALSE(report.usable);
  EXPECT_NE(report.cause.find("needs bwrap's network namespace"), std::string::npos)
      << report.cause;
  EXPECT_FALSE(std::filesystem::exists(marker_));
}

// The trust step reads the composition: every program the allow-list's argv starts (the proxy,
// bwrap alone's exec shim, bwrap, the proxy's bridge) is checked, each file once, in the order of
// its layers, last before the argv is returned; and `layers` names each of them.
TEST_F(LocalProviderFakeProxy, EveryProgramOfTheComposedArgvIsTrustCheckedInLayerOrder) {
  LocalSandboxHooks hooks = hooks_with_proxy("exit 0");
  auto checked = std::make_shared<std::vector<std::string>>();
  hooks.check_runner = [checked](const std::string& runner,
                                 std::span<const std::string>) -> Result<void> {
    checked->push_back(runner);
    return {};
  };
  LocalSandboxProvider provider(config(), hooks);
  const ConfinedArgv confined = provider.confine(kCommand, allow_list());
  const std::string shim = dir_ / "dsh-seccomp-exec";
  Argv programs = {confined.argv.front()};
  for (auto word = confined.argv.begin(); word != confined.argv.end(); ++word) {
    if (*word == "--" && std::next(word) != confined.argv.end())
      programs.push_back(*std::next(word));
  }
  programs.resize(programs.size() - 1);  // the command itself
  EXPECT_EQ(programs, (Argv{proxy_, shim, bwrap_, proxy_}));
  EXPECT_EQ(confined.layers,
            (std::vector<RunnerLayer>{RunnerLayer::kNetProxy, RunnerLayer::kSeccompExec,
                                      RunnerLayer::kBwrap, RunnerLayer::kNetProxy}));
  ASSERT_GE(checked->size(), 3U);
  EXPECT_EQ(Argv(checked->end() - 3, checked->end()), (Argv{proxy_, shim, bwrap_}));
}

TEST(LocalProviderChain, WindowsAclWithNoRunnerIsUnavailableNeverAPathLookup) {
  FakeProbes probes{{SandboxBackend::kWindowsAcl}, {}};
  LocalSandboxHooks hooks = linux_hooks(probes);
  hooks.platform = "win32";
  hooks.chain.reset();
  LocalSandboxProvider provider({}, hooks);
  try {
    (void)provider.confine(kCommand, kRo);
    FAIL() << "windows-acl without a runner must be unavailable";
  } catch (const SandboxUnavailableError& error) {
    EXPECT_NE(error.refusal().value_or("").find("no windows-acl runner is configured"),
              std::string::npos);
  }
}

// Policy travels with each call, never as provider state: one provider confines read-only, then
// workspace-write, then read-only again, and each argv is its own call's.
TEST(LocalProviderChain, EachCallIsConfinedUnderItsOwnPolicy) {
  TempDir ws;
  FakeProbes probes{{SandboxBackend::kBwrap}, {}};
  LocalSandboxProvider provider({}, linux_hooks(probes));
  const SandboxPolicy wide{ConfinedSandboxMode::kWorkspaceWrite, ws.path(), std::nullopt,
                           NetworkPolicy::kInherit};
  const ConfinedArgv first = provider.confine(kCommand, kRo);
  const ConfinedArgv widened = provider.confine(kCommand, wide);
  const ConfinedArgv again = provider.confine(kCommand, kRo);
  EXPECT_EQ(again.argv, first.argv);
  const std::string root = std::filesystem::canonical(ws.path()).string();
  for (const Argv& mount : {Argv{"--bind", root, root}, Argv{"--tmpfs", "/tmp"}}) {
    EXPECT_NE(std::search(widened.argv.begin(), widened.argv.end(), mount.begin(), mount.end()),
              widened.argv.end());
    EXPECT_EQ(std::search(first.argv.begin(), first.argv.end(), mount.begin(), mount.end()),
              first.argv.end());
  }
}

TEST(LocalProviderRunnerCommand, UntrustedRunnerCommandIsUnavailable) {
  FakeProbes probes;
  LocalSandboxHooks hooks = linux_hooks(probes);
  hooks.check_runner = nullptr;
  TempDir dir(std::filesystem::temp_directory_path());  // /tmp: a root a confined run can write
  const std::string runner = write_script(dir / "runner", "exit 0");
  LocalSandboxProvider provider({{runner}, {"runner: "}}, hooks);
  EXPECT_THROW((void)provider.confine(kCommand, kRo), SandboxUnavailableError);
}

}  // namespace
}  // namespace dsh::sandbox
