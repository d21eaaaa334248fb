// SPDX-License-Identifier: Apache-2.0
// A root caller's confined command has no capabilities under either backend (issue 4 point 4:
// without --cap-drop ALL bwrap leaves root every capability, and root can remount / read-write).
// The capability sets are read from outside, in /proc/<pid>/status of the confined process
// itself; the nobody leg checks that the same holds for an unprivileged caller.
#include <unistd.h>

#include <cstdio>

#include "local_harness.h"
#include "must_run.h"

namespace dsh::local_it {
namespace {

constexpr char kNoCapabilities[] = "0000000000000000";

class Privileges : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (const std::string missing = MissingHostFeature(); !missing.empty()) {
      DSH_SKIP_OR_FAIL(missing);
    }
    provider_ = MakeProvider(GetParam());
    probe_ = CopyOfProbe(workspace_);
  }
  ConfinedArgv Wrap(ConfinedSandboxMode mode, const std::vector<std::string>& argv) {
    ConfinedArgv confined = Confine(*provider_, argv, mode, workspace_.path());
    EXPECT_EQ(confined.backend, ExpectedBackendName(GetParam()));
    return confined;
  }
  std::unique_ptr<sandbox::LocalSandboxProvider> provider_;
  WorkDir workspace_;
  std::string probe_;
};

TEST_P(Privileges, ConfinedCommandHasNoCapabilitiesAndNoNewPrivs) {
  for (const ConfinedSandboxMode mode :
       {ConfinedSandboxMode::kReadOnly, ConfinedSandboxMode::kWorkspaceWrite}) {
    llrt::Held held(Wrap(mode, {probe_, "hold"}).argv);
    ASSERT_TRUE(held.ready()) << held.Finish().Describe();
    const bool direct =
        llrt::ReadFile("/proc/" + std::to_string(held.pid()) + "/comm") == "ll_probe\n";
    const int pid = direct ? held.pid() : FindDescendant(held.pid(), "ll_probe");
    ASSERT_GT(pid, 0) << "the confined ll_probe is not among the descendants of " << held.pid();
    for (const char* set : {"CapEff", "CapPrm", "CapInh", "CapAmb"}) {
      EXPECT_EQ(StatusField(pid, set), kNoCapabilities) << set << " of pid " << pid;
    }
    EXPECT_EQ(StatusField(pid, "NoNewPrivs"), "1") << "pid " << pid;
    // The confined process runs as the caller (root stays uid 0, without its capabilities).
    EXPECT_EQ(StatusField(pid, "Uid").substr(0, StatusField(pid, "Uid").find('\t')), llrt::Uid());
    const RunResult finished = held.Finish();
    EXPECT_TRUE(finished.ExitedWith(0)) << finished.Describe();
  }
}

TEST_P(Privileges, CannotRemountRootReadWriteNorWriteARootOwnedPath) {
  const std::string marker = "/var/lib/" + Unique("dsh-test");
  if (IsRoot()) {
    // Control: unconfined, the caller can write there, so the denial below means something.
    llrt::WriteFile(marker, "control");
    ASSERT_EQ(std::remove(marker.c_str()), 0);
  }
  for (const ConfinedSandboxMode mode :
       {ConfinedSandboxMode::kReadOnly, ConfinedSandboxMode::kWorkspaceWrite}) {
    const RunResult result = Spawn(Wrap(mode, Bash("mount -o remount,rw /; echo mount=$?; "
                                                   "printf x > " +
                                                   marker + "; echo write=$?")));
    EXPECT_TRUE(result.ExitedWith(0)) << result.Describe();
    EXPECT_EQ(result.out.find("mount=0\n"), std::string::npos) << result.Describe();
    EXPECT_NE(result.out.find("mount="), std::string::npos) << result.Describe();
    EXPECT_EQ(result.out.find("write=0\n"), std::string::npos) << result.Describe();
    EXPECT_FALSE(llrt::Exists(marker)) << result.Describe();
    std::remove(marker.c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Privileges,
                         ::testing::Values(Backend::kNatural, Backend::kLandlock), ParamLabel);

}  // namespace
}  // namespace dsh::local_it
