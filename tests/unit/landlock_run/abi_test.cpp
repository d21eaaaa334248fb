// SPDX-License-Identifier: Apache-2.0
// The ABI table, iterated over ABI 0..N+1 as rust-landlock's abi tests do.
#include <sys/syscall.h>

#include <gtest/gtest.h>

#include "abi.h"

namespace landlock_run {
namespace {

TEST(LandlockRunAbi, EachAbiAddsExactlyItsRights) {
  EXPECT_EQ(handled_fs_for_abi(0), 0U);
  EXPECT_EQ(handled_fs_for_abi(-5), 0U);
  EXPECT_EQ(handled_fs_for_abi(1), 0x1FFFU);  // bits 0..12
  EXPECT_EQ(handled_fs_for_abi(2), 0x1FFFU | kFsRefer);
  EXPECT_EQ(handled_fs_for_abi(3), 0x1FFFU | kFsRefer | kFsTruncate);
  EXPECT_EQ(handled_fs_for_abi(4), handled_fs_for_abi(3));  // ABI 4 added only TCP rights
  EXPECT_EQ(handled_fs_for_abi(5), 0xFFFFU);
  EXPECT_EQ(handled_fs_for_abi(6), 0xFFFFU);
  EXPECT_EQ(handled_fs_for_abi(7), 0xFFFFU);
}

TEST(LandlockRunAbi, NewerAbisAreMonotonicAndUnknownOnesUseTheNewestKnown) {
  for (int abi = 1; abi <= kNewestKnownAbi + 3; ++abi) {
    EXPECT_EQ(handled_fs_for_abi(abi) & handled_fs_for_abi(abi - 1), handled_fs_for_abi(abi - 1))
        << abi;
    EXPECT_EQ(handled_net_for_abi(abi) & handled_net_for_abi(abi - 1),
              handled_net_for_abi(abi - 1));
    EXPECT_EQ(scopes_for_abi(abi) & scopes_for_abi(abi - 1), scopes_for_abi(abi - 1));
  }
  EXPECT_EQ(handled_fs_for_abi(kNewestKnownAbi + 1), handled_fs_for_abi(kNewestKnownAbi));
  EXPECT_EQ(handled_fs_for_abi(1000), handled_fs_for_abi(kNewestKnownAbi));
}

TEST(LandlockRunAbi, NetworkFromAbi4ScopesFromAbi6) {
  EXPECT_EQ(handled_net_for_abi(3), 0U);
  EXPECT_EQ(handled_net_for_abi(4), kNetBindTcp | kNetConnectTcp);
  EXPECT_EQ(handled_net_for_abi(7), 3U);
  EXPECT_EQ(scopes_for_abi(5), 0U);
  EXPECT_EQ(scopes_for_abi(6), kScopeAbstractUnixSocket | kScopeSignal);
  EXPECT_EQ(scopes_for_abi(7), 3U);
}

TEST(LandlockRunAbi, PartialBelowAbi5AndNotClampedAbove) {
  for (int abi = 1; abi <= 4; ++abi) {
    EXPECT_TRUE(is_partial(abi));
    EXPECT_STREQ(probe_report_line(abi), "landlock: partially enforced (older ABI)\n");
  }
  for (int abi = 5; abi <= 9; ++abi) {
    EXPECT_FALSE(is_partial(abi));
    EXPECT_STREQ(probe_report_line(abi), "landlock: fully enforced\n");
  }
}

TEST(LandlockRunAbi, EffectiveAbiHonoursTheCapAndRefusals) {
  EXPECT_EQ(effective_abi(7, -1), 7);
  EXPECT_EQ(effective_abi(7, 3), 3);
  EXPECT_EQ(effective_abi(7, 9), 7);     // a cap never raises
  EXPECT_EQ(effective_abi(7, 0), 0);     // --max-abi 0 forces "not enforced"
  EXPECT_EQ(effective_abi(-38, -1), 0);  // -ENOSYS
  EXPECT_EQ(effective_abi(-95, 5), 0);   // -EOPNOTSUPP
}

TEST(LandlockRunAbi, FileRulesKeepOnlyFileCompatibleRights) {
  const std::uint64_t handled = handled_fs_for_abi(7);
  EXPECT_EQ(rule_access(handled, true, true), handled);
  EXPECT_EQ(rule_access(handled, true, false),
            kFsExecute | kFsWriteFile | kFsReadFile | kFsTruncate | kFsIoctlDev);
  EXPECT_EQ(rule_access(handled, false, true), kFsExecute | kFsReadFile | kFsReadDir);
  EXPECT_EQ(rule_access(handled, false, false), kFsExecute | kFsReadFile);
  // On ABI 2 a read-write file rule cannot carry TRUNCATE or IOCTL_DEV: they are not handled.
  EXPECT_EQ(rule_access(handled_fs_for_abi(2), true, false),
            kFsExecute | kFsWriteFile | kFsReadFile);
}

TEST(LandlockRunAbi, RuleRightsAreAlwaysHandledRights) {
  for (int abi = 1; abi <= kNewestKnownAbi; ++abi) {
    const std::uint64_t handled = handled_fs_for_abi(abi);
    for (const bool rw : {false, true}) {
      for (const bool dir : {false, true}) {
        const std::uint64_t access = rule_access(handled, rw, dir);
        EXPECT_NE(access, 0U);  // the kernel refuses an empty rule with ENOMSG
        EXPECT_EQ(access & ~handled, 0U);
      }
    }
  }
}

TEST(LandlockRunAbi, UapiLayoutsMatchTheKernel) {
  EXPECT_EQ(sizeof(PathBeneathAttr), 12U);
  EXPECT_EQ(sizeof(RulesetAttr), 24U);
  // The local syscall numbers are the contract's, and the C library's where its headers know
  // them (Linux 5.13 gave every architecture the same three).
  EXPECT_EQ(kSysCreateRuleset, 444);
  EXPECT_EQ(kSysAddRule, 445);
  EXPECT_EQ(kSysRestrictSelf, 446);
#ifdef SYS_landlock_create_ruleset
  EXPECT_EQ(kSysCreateRuleset, SYS_landlock_create_ruleset);
  EXPECT_EQ(kSysAddRule, SYS_landlock_add_rule);
  EXPECT_EQ(kSysRestrictSelf, SYS_landlock_restrict_self);
#endif
}

}  // namespace
}  // namespace landlock_run
