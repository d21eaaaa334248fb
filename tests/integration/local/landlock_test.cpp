// SPDX-License-Identifier: Apache-2.0
// Landlock alone (bwrap forced off by a missing path), run for real with real bash: read-only
// denials with the probe's enforcement, a writable /dev/null but not /dev/shm, workspace-write
// inside vs. beside, and the host /tmp shared and persistent.
#include <cstdio>

#include "local_harness.h"
#include "must_run.h"

namespace dsh::local_it {
namespace {

class Landlock : public ProviderTest {
 protected:
  Landlock() : ProviderTest(Backend::kLandlock) {}
  ConfinedArgv wrap(ConfinedSandboxMode mode, const std::string& script) {
    ConfinedArgv confined = confine(*provider_, bash(script), mode, workspace_);
    EXPECT_EQ(confined.backend, "landlock");
    EXPECT_EQ(confined.argv.front(), llrt::launcher());
    EXPECT_EQ(confined.denial_signatures, std::vector<std::string>{"permission denied"});
    return confined;
  }
};

TEST_F(Landlock, ReadOnlyWriteIsDeniedWithTheProbesEnforcement) {
  const sandbox::ProbeSummary summary = provider_->probe_all();
  ASSERT_EQ(summary.selected, "landlock");
  const std::string target = workspace_ + "/" + unique("file");
  const ConfinedArgv confined = wrap(ConfinedSandboxMode::kReadOnly, "printf x > " + target);
  // The probe's verdict for this mode (a backend's own enforcement is its weakest mode's).
  ASSERT_EQ(summary.backends.at(1).modes.size(), 2U);
  EXPECT_EQ(confined.enforcement, summary.backends.at(1).modes[0].enforcement);
  EXPECT_EQ(confined.ungoverned, summary.backends.at(1).modes[0].ungoverned);
  const RunResult result = spawn(confined);
  EXPECT_FALSE(result.exited_with(0)) << result.describe();
  EXPECT_NE(lower(result.err).find("permission denied"), std::string::npos) << result.describe();
  EXPECT_FALSE(llrt::exists(target));
}

TEST_F(Landlock, DevNullIsWritableAndDevShmIsNotInEitherMode) {
  for (const ConfinedSandboxMode mode :
       {ConfinedSandboxMode::kReadOnly, ConfinedSandboxMode::kWorkspaceWrite}) {
    const RunResult null = spawn(wrap(mode, "printf x > /dev/null && echo null-ok"));
    EXPECT_TRUE(null.exited_with(0)) << null.describe();
    EXPECT_EQ(null.out, "null-ok\n") << null.describe();

    const std::string shm = "/dev/shm/" + unique("dsh-local-shm");
    const RunResult denied = spawn(wrap(mode, "printf x > " + shm));
    EXPECT_FALSE(denied.exited_with(0)) << denied.describe();
    EXPECT_NE(lower(denied.err).find("permission denied"), std::string::npos) << denied.describe();
    EXPECT_FALSE(llrt::exists(shm)) << "a read-only command left a file in the host's /dev/shm";
    std::remove(shm.c_str());
  }
}

TEST_F(Landlock, WorkspaceWriteLandsInsideAndIsDeniedBeside) {
  const std::string inside = workspace_ + "/" + unique("inside");
  const std::string beside = sibling_ + "/" + unique("beside");
  const RunResult in = spawn(wrap(ConfinedSandboxMode::kWorkspaceWrite, "printf in > " + inside));
  EXPECT_TRUE(in.exited_with(0)) << in.describe();
  EXPECT_EQ(llrt::read_file(inside), "in");

  const RunResult out = spawn(wrap(ConfinedSandboxMode::kWorkspaceWrite, "printf x > " + beside));
  EXPECT_FALSE(out.exited_with(0)) << out.describe();
  EXPECT_NE(lower(out.err).find("permission denied"), std::string::npos) << out.describe();
  EXPECT_FALSE(llrt::exists(beside));
}

// Landlock has no mount namespace: the granted /tmp is the host's, and a write there persists.
TEST_F(Landlock, WorkspaceWriteToTheHostTmpSucceedsAndPersists) {
  const std::string tmp = "/tmp/" + unique("dsh-local-tmp");
  const RunResult result = spawn(wrap(ConfinedSandboxMode::kWorkspaceWrite, "printf tmp > " + tmp));
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(llrt::read_file(tmp), "tmp");
  EXPECT_EQ(std::remove(tmp.c_str()), 0);
}

}  // namespace
}  // namespace dsh::local_it
