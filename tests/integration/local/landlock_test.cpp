// SPDX-License-Identifier: Apache-2.0
// Landlock alone (bwrap forced off by a missing path), run for real with real bash (spec §7.3
// "landlock"): read-only denials with the probe's enforcement, a writable /dev/null but not
// /dev/shm, workspace-write inside vs. beside, and the host /tmp shared and persistent.
#include <cstdio>

#include "local_harness.h"
#include "must_run.h"

namespace dsh::local_it {
namespace {

class Landlock : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string missing = MissingHostFeature(); !missing.empty()) {
      DSH_SKIP_OR_FAIL(missing);
    }
    workspace_ = base_.Mkdir("workspace");
    sibling_ = base_.Mkdir("sibling");
  }
  ConfinedArgv Wrap(ConfinedSandboxMode mode, const std::string& script) {
    ConfinedArgv confined = Confine(*provider_, Bash(script), mode, workspace_);
    EXPECT_EQ(confined.backend, "landlock");
    EXPECT_EQ(confined.argv.front(), llrt::Launcher());
    EXPECT_EQ(confined.denial_signatures, std::vector<std::string>{"permission denied"});
    return confined;
  }
  std::unique_ptr<sandbox::LocalSandboxProvider> provider_ = MakeProvider(Backend::kLandlock);
  WorkDir base_;
  std::string workspace_;
  std::string sibling_;
};

TEST_F(Landlock, ReadOnlyWriteIsDeniedWithTheProbesEnforcement) {
  const sandbox::ProbeSummary summary = provider_->probe_all();
  ASSERT_EQ(summary.selected, "landlock");
  const std::string target = workspace_ + "/" + Unique("file");
  const ConfinedArgv confined = Wrap(ConfinedSandboxMode::kReadOnly, "printf x > " + target);
  EXPECT_EQ(confined.enforcement, summary.backends.at(1).enforcement);
  const RunResult result = Spawn(confined);
  EXPECT_FALSE(result.ExitedWith(0)) << result.Describe();
  EXPECT_NE(Lower(result.err).find("permission denied"), std::string::npos) << result.Describe();
  EXPECT_FALSE(llrt::Exists(target));
}

TEST_F(Landlock, DevNullIsWritableAndDevShmIsNotInEitherMode) {
  for (const ConfinedSandboxMode mode :
       {ConfinedSandboxMode::kReadOnly, ConfinedSandboxMode::kWorkspaceWrite}) {
    const RunResult null = Spawn(Wrap(mode, "printf x > /dev/null && echo null-ok"));
    EXPECT_TRUE(null.ExitedWith(0)) << null.Describe();
    EXPECT_EQ(null.out, "null-ok\n") << null.Describe();

    const std::string shm = "/dev/shm/" + Unique("dsh-local-shm");
    const RunResult denied = Spawn(Wrap(mode, "printf x > " + shm));
    EXPECT_FALSE(denied.ExitedWith(0)) << denied.Describe();
    EXPECT_NE(Lower(denied.err).find("permission denied"), std::string::npos) << denied.Describe();
    EXPECT_FALSE(llrt::Exists(shm)) << "a read-only command left a file in the host's /dev/shm";
    std::remove(shm.c_str());
  }
}

TEST_F(Landlock, WorkspaceWriteLandsInsideAndIsDeniedBeside) {
  const std::string inside = workspace_ + "/" + Unique("inside");
  const std::string beside = sibling_ + "/" + Unique("beside");
  const RunResult in = Spawn(Wrap(ConfinedSandboxMode::kWorkspaceWrite, "printf in > " + inside));
  EXPECT_TRUE(in.ExitedWith(0)) << in.Describe();
  EXPECT_EQ(llrt::ReadFile(inside), "in");

  const RunResult out = Spawn(Wrap(ConfinedSandboxMode::kWorkspaceWrite, "printf x > " + beside));
  EXPECT_FALSE(out.ExitedWith(0)) << out.Describe();
  EXPECT_NE(Lower(out.err).find("permission denied"), std::string::npos) << out.Describe();
  EXPECT_FALSE(llrt::Exists(beside));
}

// Landlock has no mount namespace: the granted /tmp is the host's, and a write there persists.
TEST_F(Landlock, WorkspaceWriteToTheHostTmpSucceedsAndPersists) {
  const std::string tmp = "/tmp/" + Unique("dsh-local-tmp");
  const RunResult result = Spawn(Wrap(ConfinedSandboxMode::kWorkspaceWrite, "printf tmp > " + tmp));
  EXPECT_TRUE(result.ExitedWith(0)) << result.Describe();
  EXPECT_EQ(llrt::ReadFile(tmp), "tmp");
  EXPECT_EQ(std::remove(tmp.c_str()), 0);
}

}  // namespace
}  // namespace dsh::local_it
