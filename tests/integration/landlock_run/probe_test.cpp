// SPDX-License-Identifier: Apache-2.0
// --probe proves what a run needs: on a host where the launcher's seccomp filter cannot be
// installed (every confined run there fails with 125), the probe says unusable; and the shipped
// launcher does not know the test build's ABI cap.
#include "harness.h"
#include "must_run.h"

namespace llrt {
namespace {

std::vector<std::string> without_seccomp(const std::vector<std::string>& argv) {
  std::vector<std::string> full = {DENY_SECCOMP_PATH};
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

class LandlockRunProbe : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kernel_abi() < 1) DSH_SKIP_OR_FAIL("this kernel does not enforce Landlock (lsm=landlock)");
  }
  TempDir dir_;
};

TEST_F(LandlockRunProbe, HostWithoutSeccompFiltersProbesUnusable) {
  // The premise, from outside: a confined run on this host never runs its command.
  const std::string marker = dir_ / "marker";
  const RunResult run = execute(without_seccomp(
      l({"--ro", "/", "--rw", dir_.path(), "--", "/bin/sh", "-c", "echo ran > " + marker})));
  EXPECT_TRUE(run.exited_with(125)) << run.describe();
  EXPECT_FALSE(exists(marker));
  // So the probe must not say usable.
  const RunResult probe = execute(without_seccomp(l({"--probe"})));
  EXPECT_TRUE(probe.exited_with(125)) << probe.describe();
  EXPECT_EQ(probe.out, "");
  EXPECT_EQ(probe.err, "landlock-run: seccomp filter error: Invalid argument\n");
}

TEST_F(LandlockRunProbe, ProbeStillPassesWhereRunsWork) {
  const RunResult probe = execute(l({"--probe"}));
  EXPECT_TRUE(probe.exited_with(0)) << probe.describe();
  EXPECT_EQ(probe.out, kernel_abi() >= 5 ? "landlock: fully enforced\n"
                                         : "landlock: partially enforced (older ABI)\n");
}

TEST(LandlockRunShipped, RefusesTheTestOnlyAbiCap) {
  TempDir dir;
  const std::string marker = dir / "marker";
  const RunResult result = execute({launcher(), "--max-abi", "0", "--rw", dir.path(), "--",
                                    "/bin/sh", "-c", "echo ran > " + marker});
  EXPECT_TRUE(result.exited_with(125)) << result.describe();
  EXPECT_EQ(result.err, "landlock-run: usage error: unknown argument: --max-abi\n");
  EXPECT_FALSE(exists(marker));
}

}  // namespace
}  // namespace llrt
