// SPDX-License-Identifier: Apache-2.0
// Diagnoses of unusable backends: one line of cause and one line of fix, naming the setting.
#include "local/probes.h"

#include <gtest/gtest.h>

#include <array>

#include "local/verdict_codec.h"

namespace dsh::sandbox::local {
namespace {

// The spec says when a runner is probed; this table says how: every runner that heads a chain
// backend has its probe here, and no other runner is probed as a backend.
TEST(BackendProbes, EachRunnerThatHeadsABackendHasItsProbe) {
  for (const profiles::RunnerSpec* spec : profiles::runner_specs()) {
    SCOPED_TRACE(std::string(layer_name(spec->layer)));
    EXPECT_EQ(backend_probe(spec->layer) != nullptr,
              spec->probe == profiles::RunnerProbe::kBackend);
  }
}

BackendReport diagnosed_bwrap(const HostFacts& host, const std::string& stderr_text) {
  BackendReport report;
  report.runner = "/usr/bin/bwrap";
  ProbeRun run;
  run.exit_code = 1;
  run.err = stderr_text;
  diagnose_bwrap(report, run, host);
  return report;
}

void expect_one_line_each(const BackendReport& report) {
  EXPECT_FALSE(report.usable);
  EXPECT_EQ(report.cause.find('\n'), std::string::npos) << report.cause;
  EXPECT_EQ(report.fix.find('\n'), std::string::npos) << report.fix;
}

TEST(DiagnoseBwrap, UbuntuAppArmorRestrictionIsNamedWithItsSysctl) {
  HostFacts host;
  host.apparmor_restrict_userns = "1";
  const BackendReport report =
      diagnosed_bwrap(host, "bwrap: setting up uid map: Permission denied\n");
  expect_one_line_each(report);
  EXPECT_NE(report.cause.find("kernel.apparmor_restrict_unprivileged_userns=1"), std::string::npos);
  EXPECT_NE(report.fix.find("apparmor"), std::string::npos);
}

TEST(DiagnoseBwrap, DisabledUserNamespacesAreNamedWithTheirSysctl) {
  HostFacts host;
  host.max_user_namespaces = "0";
  const BackendReport report =
      diagnosed_bwrap(host, "bwrap: No permissions to create new namespace\n");
  expect_one_line_each(report);
  EXPECT_NE(report.cause.find("user.max_user_namespaces=0"), std::string::npos);
  EXPECT_EQ(report.fix, "sudo sysctl user.max_user_namespaces=15000");
}

TEST(DiagnoseBwrap, ContainerSeccompProfileIsNamed) {
  HostFacts host;
  host.seccomp_filtered = true;
  const BackendReport report =
      diagnosed_bwrap(host, "bwrap: Creating new namespace failed: Operation not permitted\n");
  expect_one_line_each(report);
  EXPECT_NE(report.cause.find("seccomp"), std::string::npos);
  EXPECT_NE(report.cause.find("Operation not permitted"), std::string::npos);
}

TEST(DiagnoseBwrap, AppArmorRestrictionDoesNotApplyToRoot) {
  HostFacts host;
  host.apparmor_restrict_userns = "1";
  host.root = true;
  const BackendReport report = diagnosed_bwrap(host, "bwrap: something else\nsecond line\n");
  expect_one_line_each(report);
  EXPECT_EQ(report.cause, "bwrap cannot create its sandbox: bwrap: something else");
}

TEST(DiagnoseLandlock, LandlockMissingFromLsmListIsNamedWithTheBootParameter) {
  HostFacts host;
  host.lsm_list = "lockdown,capability,yama,apparmor";
  BackendReport report;
  ProbeRun run;
  run.exit_code = 125;
  run.err =
      "landlock-run: landlock is not enforced by this kernel (ABI unsupported or "
      "disabled)\n";
  diagnose_landlock(report, run, host);
  expect_one_line_each(report);
  EXPECT_NE(report.cause.find("lsm=lockdown,capability,yama,apparmor"), std::string::npos);
  EXPECT_EQ(report.fix,
            "add landlock to the kernel command line: lsm=landlock,lockdown,capability,yama,"
            "apparmor");
}

TEST(DiagnoseLandlock, UnknownLsmListStillExplainsTheKernel) {
  BackendReport report;
  ProbeRun run;
  run.exit_code = 125;
  run.err =
      "landlock-run: landlock is not enforced by this kernel (ABI unsupported or "
      "disabled)\n";
  diagnose_landlock(report, run, HostFacts{});
  expect_one_line_each(report);
  EXPECT_NE(report.fix.find("CONFIG_SECURITY_LANDLOCK"), std::string::npos);
}

TEST(LandlockFeatures, OnlyThisProjectsHandshakeAnswers) {
  EXPECT_TRUE(
      answers_handshake("landlock-run=1\nabi=7\nstatus_fd=1\nlist_grants=1\nfuture_key=9\n"));
  // A launcher without listing-only grants cannot keep / listable above a hidden path.
  EXPECT_FALSE(answers_handshake("landlock-run=1\nabi=7\nstatus_fd=1\n"));
  EXPECT_FALSE(answers_handshake(""));
  EXPECT_FALSE(answers_handshake("landlock: fully enforced\n"));
  EXPECT_FALSE(answers_handshake("landlock-run=1\nabi=7\n"));
  EXPECT_FALSE(answers_handshake("abi=7\nstatus_fd=1\n"));
  EXPECT_FALSE(answers_handshake("landlock-run=12\nstatus_fd=1\n"));
}

TEST(LandlockFeatures, ReadsAbiAndSeccompAndIgnoresUnknownKeys) {
  BackendReport report;
  report.enforcement = SandboxEnforcement::kFull;
  read_landlock_features(report, "landlock-run=1\nabi=7\nseccomp=1\nfuture_key=9\n");
  EXPECT_EQ(report.landlock_abi, 7);
  EXPECT_TRUE(report.landlock_seccomp);
  EXPECT_EQ(landlock_features(report),
            (profiles::LandlockFeatures{SandboxEnforcement::kFull, 7, true, true, true}));
  report.landlock_abi = 5;
  EXPECT_FALSE(landlock_features(report).scope_ipc);
}

constexpr std::array kLinux = {SandboxBackend::kBwrap, SandboxBackend::kLandlock};
const std::string kLauncher = "/opt/dsh/bin/landlock-run";

std::optional<profiles::Selection> decode(const std::string& text) {
  return decode_selection(text, kLinux, kLauncher);
}

TEST(VerdictCodec, RoundTripsSelections) {
  for (const profiles::Selection& selection :
       {profiles::Selection{SandboxBackend::kBwrap, std::nullopt},
        profiles::Selection{
            SandboxBackend::kBwrap,
            profiles::LandlockFeatures{SandboxEnforcement::kFull, 7, true, true, true}},
        profiles::Selection{
            SandboxBackend::kLandlock,
            profiles::LandlockFeatures{SandboxEnforcement::kPartial, 3, false, false, false}}}) {
    EXPECT_EQ(decode(encode_selection(selection, kLauncher)), selection);
  }
}

TEST(VerdictCodec, AnythingUnexpectedIsNoVerdict) {
  EXPECT_EQ(decode(""), std::nullopt);
  EXPECT_EQ(decode("{"), std::nullopt);
  EXPECT_EQ(decode("[]"), std::nullopt);
  EXPECT_EQ(decode(R"({"backend":"chroot"})"), std::nullopt);
  EXPECT_EQ(decode(R"({"backend":"landlock"})"), std::nullopt);
  EXPECT_EQ(decode(R"({"backend":"bwrap","landlock":{"abi":"7"}})"), std::nullopt);
  EXPECT_EQ(decode(R"({"backend":"bwrap","extra":1})"), std::nullopt);
}

TEST(VerdictCodec, OnlyTheBackendsOfThisPlatformsChain) {
  EXPECT_EQ(decode(R"({"backend":"windows-acl"})"), std::nullopt);
  EXPECT_EQ(decode(R"({"backend":"seatbelt"})"), std::nullopt);
  constexpr std::array kWindows = {SandboxBackend::kWindowsAcl};
  EXPECT_NE(decode_selection(R"({"backend":"windows-acl"})", kWindows, ""), std::nullopt);
}

TEST(VerdictCodec, EveryLandlockFieldIsCheckedForTypeRangeAndConsistency) {
  const auto layered = [](const std::string& features, const std::string& launcher = kLauncher) {
    return decode(R"({"backend":"bwrap","launcher":")" + launcher + R"(","landlock":)" + features +
                  "}");
  };
  const std::string good =
      R"({"enforcement":"full","abi":7,"denyNetwork":true,"scopeIpc":true,"denyMetadata":true})";
  EXPECT_NE(layered(good), std::nullopt);
  // Another launcher than the provider's, or none, or a relative one.
  EXPECT_EQ(layered(good, "/tmp/landlock-run"), std::nullopt);
  EXPECT_EQ(layered(good, "landlock-run"), std::nullopt);
  EXPECT_EQ(decode(R"({"backend":"bwrap","landlock":)" + good + "}"), std::nullopt);
  // Features no probe of this launcher reports: IPC scoping dropped at ABI 7, metadata filtering
  // dropped while seccomp filters the network, ABIs out of range, unknown enforcement words.
  EXPECT_EQ(layered(R"({"enforcement":"full","abi":7,"denyNetwork":true,"scopeIpc":false,)"
                    R"("denyMetadata":true})"),
            std::nullopt);
  EXPECT_EQ(layered(R"({"enforcement":"full","abi":7,"denyNetwork":true,"scopeIpc":true,)"
                    R"("denyMetadata":false})"),
            std::nullopt);
  // ABI 0 was a launcher without --features, which is no longer usable: a stale verdict.
  EXPECT_EQ(layered(R"({"enforcement":"full","abi":0,"denyNetwork":false,"scopeIpc":false,)"
                    R"("denyMetadata":false})"),
            std::nullopt);
  EXPECT_EQ(layered(R"({"enforcement":"full","abi":0,"denyNetwork":true,"scopeIpc":false,)"
                    R"("denyMetadata":true})"),
            std::nullopt);
  EXPECT_EQ(layered(R"({"enforcement":"full","abi":-1,"denyNetwork":false,"scopeIpc":false,)"
                    R"("denyMetadata":false})"),
            std::nullopt);
  EXPECT_EQ(layered(R"({"enforcement":"full","abi":99999999999,"denyNetwork":false,)"
                    R"("scopeIpc":true,"denyMetadata":false})"),
            std::nullopt);
  EXPECT_EQ(layered(R"({"enforcement":"total","abi":7,"denyNetwork":true,"scopeIpc":true,)"
                    R"("denyMetadata":true})"),
            std::nullopt);
  EXPECT_EQ(layered(R"({"enforcement":"full","abi":7.5,"denyNetwork":true,"scopeIpc":true,)"
                    R"("denyMetadata":true})"),
            std::nullopt);
  EXPECT_EQ(layered(R"({"enforcement":"full","abi":7,"denyNetwork":1,"scopeIpc":true,)"
                    R"("denyMetadata":true})"),
            std::nullopt);
}

TEST(VerdictCodec, OversizedTextIsRefusedUnparsed) {
  std::string padded = R"({"backend":"bwrap")";
  padded += std::string(kMaxVerdictBytes, ' ');
  padded += "}";
  EXPECT_EQ(decode(padded), std::nullopt);
}

}  // namespace
}  // namespace dsh::sandbox::local
