// SPDX-License-Identifier: Apache-2.0
// One truth about enforcement: for every confined mode, what `probe` reports (library and CLI,
// --json and text) is what `confine` answers on the same host with the same config, for each
// backend this host can select and for the operator's runnerCommand.
#include <algorithm>

#include "local_harness.h"
#include "must_run.h"
#include "scripts.h"

namespace dsh::local_it {
namespace {

using sandbox::SandboxEnforcement;

const ConfinedSandboxMode kModes[] = {ConfinedSandboxMode::kReadOnly,
                                      ConfinedSandboxMode::kWorkspaceWrite};

std::string mode_name(ConfinedSandboxMode mode) {
  return mode == ConfinedSandboxMode::kReadOnly ? "read-only" : "workspace-write";
}

class ProbeConfineParity : public LocalBackendTest {
 protected:
  TempDir workspace_;
};

TEST_P(ProbeConfineParity, LibraryProbeAndConfineAgreeForEveryMode) {
  auto prober = make_provider(GetParam());
  const sandbox::ProbeSummary summary = prober->probe_all();
  EXPECT_EQ(summary.selected, expected_backend_name(GetParam()));
  ASSERT_EQ(summary.modes.size(), 2U);
  auto confiner = make_provider(GetParam());
  for (std::size_t i = 0; i < 2; ++i) {
    // The probe stands for a call with the default policy: the network denied.
    const ConfinedArgv confined =
        confine(*confiner, {"/bin/true"}, kModes[i], workspace_.path(), NetworkPolicy::kDeny);
    EXPECT_EQ(summary.modes[i].mode, kModes[i]);
    EXPECT_EQ(summary.modes[i].enforcement, confined.enforcement) << mode_name(kModes[i]);
    EXPECT_EQ(summary.modes[i].strict_enforcement, confined.strict_enforcement)
        << mode_name(kModes[i]);
    EXPECT_EQ(summary.modes[i].ungoverned, confined.ungoverned) << mode_name(kModes[i]);
  }
  // The selected backend's own report says the same, and its enforcement is never stronger
  // than its weakest mode.
  for (const sandbox::BackendReport& report : summary.backends) {
    if (!report.usable) continue;
    ASSERT_EQ(report.modes.size(), 2U);
    const bool partial = std::any_of(report.modes.begin(), report.modes.end(), [](const auto& m) {
      return m.enforcement == SandboxEnforcement::kPartial;
    });
    EXPECT_EQ(report.enforcement,
              partial ? SandboxEnforcement::kPartial : SandboxEnforcement::kFull);
    const bool strictly_partial = std::any_of(
        report.modes.begin(), report.modes.end(),
        [](const auto& m) { return m.strict_enforcement == SandboxEnforcement::kPartial; });
    EXPECT_EQ(report.strict_enforcement,
              strictly_partial ? SandboxEnforcement::kPartial : SandboxEnforcement::kFull);
  }
}

// The CLI always finds its launcher beside itself, so it selects bwrap alone only where the
// launcher is missing: the library case covers that one.
class CliProbeConfineParity : public ProbeConfineParity {};

TEST_P(CliProbeConfineParity, CliProbeAndConfineAgreeForEveryMode) {
  std::vector<std::string> config;
  if (GetParam() == Backend::kLandlock) {
    config = {"--config", write_config(R"({"bwrapPath": ")" + missing_bwrap_path() + R"("})")};
  }
  std::vector<std::string> probe_args = {"probe", "--json"};
  probe_args.insert(probe_args.end(), config.begin(), config.end());
  const RunResult probe = run_cli(probe_args);
  ASSERT_TRUE(probe.exited_with(0)) << probe.describe();
  const nlohmann::json report = parse_json(probe.out);
  EXPECT_EQ(report["selected"], expected_backend_name(GetParam()));
  ASSERT_EQ(report["modes"].size(), 2U) << probe.out;
  for (std::size_t i = 0; i < 2; ++i) {
    std::vector<std::string> args = {"confine", "--mode", mode_name(kModes[i]), "--workspace",
                                     workspace_.path()};
    args.insert(args.end(), config.begin(), config.end());
    args.insert(args.end(), {"--", "true"});
    const RunResult confine = run_cli(args);
    ASSERT_TRUE(confine.exited_with(0)) << confine.describe();
    const nlohmann::json confined = parse_json(confine.out);
    const nlohmann::json& mode = report["modes"][i];
    EXPECT_EQ(mode["mode"], mode_name(kModes[i]));
    EXPECT_EQ(mode["enforcement"], confined["enforcement"]) << probe.out << confine.out;
    EXPECT_EQ(mode["strictEnforcement"], confined["strictEnforcement"]) << probe.out << confine.out;
    EXPECT_EQ(mode["ungoverned"], confined["ungoverned"]) << probe.out << confine.out;
  }
  // The text form, for a person, names the strict reading per mode.
  std::vector<std::string> text_args = {"probe"};
  text_args.insert(text_args.end(), config.begin(), config.end());
  const RunResult text = run_cli(text_args);
  ASSERT_TRUE(text.exited_with(0)) << text.describe();
  for (std::size_t i = 0; i < 2; ++i) {
    const std::string line = "  " + mode_name(kModes[i]) +
                             std::string(17 - mode_name(kModes[i]).size(), ' ') +
                             std::string(report["modes"][i]["strictEnforcement"]) + "\n";
    EXPECT_NE(text.out.find("selected: " + expected_backend_name(GetParam()) + "\n" +
                            (i == 0 ? line : "")),
              std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find(line), std::string::npos) << text.out;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ProbeConfineParity,
                         ::testing::Values(Backend::kNatural, Backend::kLandlock,
                                           Backend::kBwrapOnly),
                         param_label);

INSTANTIATE_TEST_SUITE_P(Backends, CliProbeConfineParity,
                         ::testing::Values(Backend::kNatural, Backend::kLandlock), param_label);

// The operator's runner: probe answers for it, as confine does, with and without the hardening.
// Without it every call under the default policy (no network) is refused, and probe says so: no
// selection for that policy, the refusal's cause with its fixes, 125.
class RunnerCommandParity : public LocalTest {
 protected:
  TempDir workspace_;
};

TEST_F(RunnerCommandParity, ProbeAnswersForTheOperatorsRunnerAsConfineDoes) {
  for (const char* hardening : {"false", "true"}) {
    const bool hardened = std::string(hardening) == "true";
    const std::string config = write_config(
        std::string(R"({"runnerCommand": ["/nonexistent/dsh-parity/runner"],)") +
        R"("runnerFailureSignatures": ["runner: "], "runnerAcceptsHardening": )" + hardening + "}");
    const RunResult probe = run_cli({"probe", "--json", "--config", config});
    ASSERT_TRUE(probe.exited_with(hardened ? 0 : 125)) << probe.describe();
    const nlohmann::json report = parse_json(probe.out);
    if (hardened) {
      EXPECT_EQ(report["selected"], "runner-command") << probe.out;
      EXPECT_FALSE(report.contains("defaultPolicyRefused")) << probe.out;
    } else {
      EXPECT_EQ(report["selected"], nullptr) << probe.out;
      ASSERT_TRUE(report.contains("defaultPolicyRefused")) << probe.out;
      EXPECT_EQ(report["defaultPolicyRefused"]["backend"], "runner-command") << probe.out;
      const std::string cause = report["defaultPolicyRefused"]["cause"].get<std::string>();
      EXPECT_NE(cause.find("cannot deny network access"), std::string::npos) << cause;
      EXPECT_NE(cause.find("runnerAcceptsHardening"), std::string::npos) << cause;
      EXPECT_NE(cause.find("--network inherit"), std::string::npos) << cause;
      // The same call the probe stood for is refused, for the same cause, and runs nothing.
      const RunResult refused = run_cli({"confine", "--mode", "read-only", "--workspace",
                                         workspace_.path(), "--config", config, "--", "true"});
      EXPECT_TRUE(refused.exited_with(125)) << refused.describe();
      EXPECT_NE(refused.err.find("cannot deny network access"), std::string::npos) << refused.err;
      const RunResult text = run_cli({"probe", "--config", config});
      EXPECT_TRUE(text.exited_with(125)) << text.describe();
      EXPECT_NE(text.out.find("selected: none for a call from here under the default policy "
                              "(SANDBOX_UNAVAILABLE): runner-command refuses it"),
                std::string::npos)
          << text.out;
    }
    EXPECT_EQ(report["runnerCommand"], nlohmann::json::array({"/nonexistent/dsh-parity/runner"}));
    ASSERT_EQ(report["modes"].size(), 2U) << probe.out;
    for (std::size_t i = 0; i < 2; ++i) {
      // The network open: without the hardening the documented profile cannot deny it, which the
      // probe's mode reports (about the filesystem) do not ask for.
      const RunResult confine =
          run_cli({"confine", "--mode", mode_name(kModes[i]), "--network", "inherit", "--workspace",
                   workspace_.path(), "--config", config, "--", "true"});
      ASSERT_TRUE(confine.exited_with(0)) << confine.describe();
      const nlohmann::json confined = parse_json(confine.out);
      EXPECT_EQ(report["modes"][i]["enforcement"], confined["enforcement"]) << hardening;
      // The probe stands for the default call, the network denied, where the operator's runner
      // leaves host Unix sockets ungoverned; with the network inherited there is none to refuse.
      nlohmann::json probed = report["modes"][i]["ungoverned"];
      ASSERT_FALSE(probed.empty()) << probe.out;
      EXPECT_EQ(probed.back().get<std::string>().rfind("named Unix sockets of the host", 0), 0U)
          << probe.out;
      probed.erase(probed.size() - 1);
      EXPECT_EQ(probed, confined["ungoverned"]) << hardening;
      EXPECT_EQ(report["modes"][i]["strictEnforcement"], "partial") << hardening;
      // The operator's assertion is the contract's; the strict reading names what is missing.
      EXPECT_EQ(confined["enforcement"], "full");
      EXPECT_EQ(confined["strictEnforcement"],
                std::string(hardening) == "true" ? "full" : "partial");
    }
  }
}

}  // namespace
}  // namespace dsh::local_it

namespace dsh::local_it {
namespace {

// A runner built to the documented bwrap-compatible profile and nothing more: any other option
// is refused in its own failure line; the documented ones are handed to the real bwrap.
constexpr const char* kStrictRunner = R"(
n=0
skip=0
for a in "$@"; do
  n=$((n + 1))
  if [ "$skip" -gt 0 ]; then skip=$((skip - 1)); continue; fi
  case "$a" in
    --) exec /usr/bin/bwrap "$@" ;;
    --ro-bind|--bind) skip=2 ;;
    --dev|--proc|--tmpfs) skip=1 ;;
    --unshare-pid|--die-with-parent) ;;
    *) echo "strict-runner: unknown option: $a" >&2; exit 1 ;;
  esac
done
echo "strict-runner: missing --" >&2
exit 1
)";

class StrictRunner : public LocalTest {
 protected:
  void SetUp() override {
    LocalTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    runner_ = dsh::testing::write_script(dir_ / "strict-runner", kStrictRunner);
  }
  ConfinedArgv confine_with(bool hardening, ConfinedSandboxMode mode, const std::string& script) {
    sandbox::LocalSandboxConfig config{{runner_}, {"strict-runner: "}};
    config.runner_accepts_hardening = hardening;
    sandbox::LocalSandboxHooks hooks;
    // The runner lives in a test directory under /tmp: its trust check is tested apart.
    hooks.check_runner = [](const std::string&, std::span<const std::string>) {
      return sandbox::Result<void>{};
    };
    sandbox::LocalSandboxProvider provider(config, hooks);
    sandbox::SandboxPolicy policy{mode, workspace_.path(), std::nullopt};
    // Without the hardening the documented profile cannot deny the network (the default): it is
    // opened there, so that what is tested is the filesystem.
    if (!hardening) policy.network = sandbox::NetworkPolicy::kInherit;
    return provider.confine(bash(script), policy);
  }
  TempDir workspace_;
  std::string runner_;
};

TEST_F(StrictRunner, DocumentedProfileIsAcceptedAndConfines) {
  const std::string inside = workspace_ / "inside";
  const std::string sibling = dir_ / "sibling";
  const RunResult ww = spawn(confine_with(false, ConfinedSandboxMode::kWorkspaceWrite,
                                          "echo ok > " + inside + " && echo ran"));
  EXPECT_TRUE(ww.exited_with(0)) << ww.describe();
  EXPECT_EQ(ww.out, "ran\n");
  EXPECT_TRUE(testing::exists(inside));
  const RunResult ro =
      spawn(confine_with(false, ConfinedSandboxMode::kReadOnly, "echo no > " + sibling));
  EXPECT_FALSE(ro.exited_with(0)) << ro.describe();
  EXPECT_NE(lower(ro.err).find("read-only file system"), std::string::npos) << ro.err;
  EXPECT_FALSE(testing::exists(sibling));
}

TEST_F(StrictRunner, HardeningOptionsReachItOnlyWhenTheConfigSaysSo) {
  const std::string marker = workspace_ / "marker";
  const ConfinedArgv hardened =
      confine_with(true, ConfinedSandboxMode::kWorkspaceWrite, "echo ran > " + marker);
  const RunResult refused = spawn(hardened);
  EXPECT_TRUE(refused.exited_with(1)) << refused.describe();
  EXPECT_EQ(refused.err.rfind("strict-runner: unknown option: --", 0), 0U) << refused.err;
  EXPECT_FALSE(testing::exists(marker));
}

}  // namespace
}  // namespace dsh::local_it
