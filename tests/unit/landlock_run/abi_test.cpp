// SPDX-License-Identifier: Apache-2.0
// The ABI table, iterated over ABI 0..N+1 as rust-landlock's abi tests do.
#include <gtest/gtest.h>

#include "abi.h"

namespace landlock_run {
namespace {

TEST(LandlockRunAbi, EachAbiAddsExactlyItsRights) {
  EXPECT_EQ(HandledFsForAbi(0), 0U);
  EXPECT_EQ(HandledFsForAbi(-5), 0U);
  EXPECT_EQ(HandledFsForAbi(1), 0x1FFFU);  // bits 0..12
  EXPECT_EQ(HandledFsForAbi(2), 0x1FFFU | kFsRefer);
  EXPECT_EQ(HandledFsForAbi(3), 0x1FFFU | kFsRefer | kFsTruncate);
  EXPECT_EQ(HandledFsForAbi(4), HandledFsForAbi(3));  // ABI 4 added only TCP rights
  EXPECT_EQ(HandledFsForAbi(5), 0xFFFFU);
  EXPECT_EQ(HandledFsForAbi(6), 0xFFFFU);
  EXPECT_EQ(HandledFsForAbi(7), 0xFFFFU);
}

TEST(LandlockRunAbi, NewerAbisAreMonotonicAndUnknownOnesUseTheNewestKnown) {
  for (int abi = 1; abi <= kNewestKnownAbi + 3; ++abi) {
    EXPECT_EQ(HandledFsForAbi(abi) & HandledFsForAbi(abi - 1), HandledFsForAbi(abi - 1)) << abi;
    EXPECT_EQ(HandledNetForAbi(abi) & HandledNetForAbi(abi - 1), HandledNetForAbi(abi - 1));
    EXPECT_EQ(ScopesForAbi(abi) & ScopesForAbi(abi - 1), ScopesForAbi(abi - 1));
  }
  EXPECT_EQ(HandledFsForAbi(kNewestKnownAbi + 1), HandledFsForAbi(kNewestKnownAbi));
  EXPECT_EQ(HandledFsForAbi(1000), HandledFsForAbi(kNewestKnownAbi));
}

TEST(LandlockRunAbi, NetworkFromAbi4ScopesFromAbi6) {
  EXPECT_EQ(HandledNetForAbi(3), 0U);
  EXPECT_EQ(HandledNetForAbi(4), kNetBindTcp | kNetConnectTcp);
  EXPECT_EQ(HandledNetForAbi(7), 3U);
  EXPECT_EQ(ScopesForAbi(5), 0U);
  EXPECT_EQ(ScopesForAbi(6), kScopeAbstractUnixSocket | kScopeSignal);
  EXPECT_EQ(ScopesForAbi(7), 3U);
}

TEST(LandlockRunAbi, PartialBelowAbi5AndNotClampedAbove) {
  for (int abi = 1; abi <= 4; ++abi) {
    EXPECT_TRUE(IsPartial(abi));
    EXPECT_STREQ(ProbeReportLine(abi), "landlock: partially enforced (older ABI)\n");
  }
  for (int abi = 5; abi <= 9; ++abi) {
    EXPECT_FALSE(IsPartial(abi));
    EXPECT_STREQ(ProbeReportLine(abi), "landlock: fully enforced\n");
  }
}

TEST(LandlockRunAbi, EffectiveAbiHonoursTheCapAndRefusals) {
  EXPECT_EQ(EffectiveAbi(7, -1), 7);
  EXPECT_EQ(EffectiveAbi(7, 3), 3);
  EXPECT_EQ(EffectiveAbi(7, 9), 7);     // a cap never raises
  EXPECT_EQ(EffectiveAbi(7, 0), 0);     // --max-abi 0 forces "not enforced"
  EXPECT_EQ(EffectiveAbi(-38, -1), 0);  // -ENOSYS
  EXPECT_EQ(EffectiveAbi(-95, 5), 0);   // -EOPNOTSUPP
}

TEST(LandlockRunAbi, FileRulesKeepOnlyFileCompatibleRights) {
  const std::uint64_t handled = HandledFsForAbi(7);
  EXPECT_EQ(RuleAccess(handled, true, true), handled);
  EXPECT_EQ(RuleAccess(handled, true, false),
            kFsExecute | kFsWriteFile | kFsReadFile | kFsTruncate | kFsIoctlDev);
  EXPECT_EQ(RuleAccess(handled, false, true), kFsExecute | kFsReadFile | kFsReadDir);
  EXPECT_EQ(RuleAccess(handled, false, false), kFsExecute | kFsReadFile);
  // On ABI 2 a read-write file rule cannot carry TRUNCATE or IOCTL_DEV: they are not handled.
  EXPECT_EQ(RuleAccess(HandledFsForAbi(2), true, false), kFsExecute | kFsWriteFile | kFsReadFile);
}

TEST(LandlockRunAbi, RuleRightsAreAlwaysHandledRights) {
  for (int abi = 1; abi <= kNewestKnownAbi; ++abi) {
    const std::uint64_t handled = HandledFsForAbi(abi);
    for (const bool rw : {false, true}) {
      for (const bool dir : {false, true}) {
        const std::uint64_t access = RuleAccess(handled, rw, dir);
        EXPECT_NE(access, 0U);  // the kernel refuses an empty rule with ENOMSG
        EXPECT_EQ(access & ~handled, 0U);
      }
    }
  }
}

TEST(LandlockRunAbi, UapiLayoutsMatchTheKernel) {
  EXPECT_EQ(sizeof(PathBeneathAttr), 12U);
  EXPECT_EQ(sizeof(RulesetAttr), 24U);
}

}  // namespace
}  // namespace landlock_run
