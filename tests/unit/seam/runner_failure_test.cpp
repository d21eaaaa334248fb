// SPDX-License-Identifier: Apache-2.0
// classify_runner_failure over the reference's classifyRunnerFailure cases.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dsh/sandbox/confined_argv.h"

namespace dsh::sandbox {
namespace {

const std::string kNotice = "landlock-run: partial enforcement (older Landlock ABI)";

std::vector<RunnerFailureRule> landlock_rules() {
  return {RunnerFailureRule{std::vector<int>{125}, {"landlock-run: "}, std::vector{kNotice}}};
}

std::optional<std::string> detail(std::optional<int> exit_code, const std::string& stderr_text,
                                  const std::vector<RunnerFailureRule>& rules) {
  const auto match = classify_runner_failure(exit_code, stderr_text, rules);
  if (!match) return std::nullopt;
  return match->detail;
}

TEST(ClassifyRunnerFailure, BlankSignaturesNeverMatchWhileValidOnesBesideThemStayActive) {
  const std::vector<RunnerFailureRule> blank{{std::nullopt, {"", "  ", "\t"}, std::nullopt}};
  EXPECT_EQ(detail(1, "anything at all\n", blank), std::nullopt);
  EXPECT_EQ(detail(1, "", blank), std::nullopt);
  const std::vector<RunnerFailureRule> mixed{{std::nullopt, {"", "  ", "runner: "}, std::nullopt}};
  EXPECT_EQ(detail(1, "ok\nrunner: broke\n", mixed), "runner: broke");
}

TEST(ClassifyRunnerFailure, NoticeAtExitOneOrTwoIsNotARunnerFailure) {
  EXPECT_EQ(detail(1, kNotice + "\n", landlock_rules()), std::nullopt);
  EXPECT_EQ(detail(2, kNotice + "\n", landlock_rules()), std::nullopt);
}

TEST(ClassifyRunnerFailure, OnlyTheNoticeAtExit125IsNotARunnerFailure) {
  EXPECT_EQ(detail(125, kNotice + "\n", landlock_rules()), std::nullopt);
}

TEST(ClassifyRunnerFailure, UppercasedNoticeIsStillInformational) {
  EXPECT_EQ(
      detail(125, "LANDLOCK-RUN: PARTIAL ENFORCEMENT (OLDER LANDLOCK ABI)\n", landlock_rules()),
      std::nullopt);
}

TEST(ClassifyRunnerFailure, NoticeWithTrailingTextIsFatalEvidence) {
  const std::string line = kNotice + ": extra detail";
  EXPECT_EQ(detail(125, line + "\n", landlock_rules()), line);
}

TEST(ClassifyRunnerFailure, DetailIsTheFatalLineNotThePrecedingNotice) {
  const std::string fatal = "landlock-run: exec failed: No such file or directory";
  EXPECT_EQ(detail(125, kNotice + "\n" + fatal + "\n", landlock_rules()), fatal);
}

TEST(ClassifyRunnerFailure, EveryKnownLauncherFatalLineMatchesAt125) {
  const std::vector<std::string> fatal_lines = {
      "landlock-run: usage error: --probe takes no other arguments",
      "landlock-run: usage error: --ro requires a path",
      "landlock-run: usage error: unknown argument: --bogus",
      "landlock-run: usage error: missing `-- <argv>...` command",
      "landlock-run: landlock is not enforced by this kernel (ABI unsupported or disabled)",
      "landlock-run: cannot open rule path: /no/such: No such file or directory",
      "landlock-run: landlock ruleset error: Invalid argument",
      "landlock-run: exec failed: Permission denied",
      "landlock-run: out of memory",
      "landlock-run: a future failure this build has never heard of",
  };
  for (const std::string& line : fatal_lines) {
    EXPECT_EQ(detail(125, line + "\n", landlock_rules()), line) << line;
  }
}

TEST(ClassifyRunnerFailure, ExitGateSkipsTheRuleForOtherCodes) {
  const std::string fatal = "landlock-run: exec failed: Permission denied";
  EXPECT_EQ(detail(1, fatal + "\n", landlock_rules()), std::nullopt);
  EXPECT_EQ(detail(126, fatal + "\n", landlock_rules()), std::nullopt);
}

TEST(ClassifyRunnerFailure, ExitZeroIsNeverARunnerFailure) {
  const std::vector<RunnerFailureRule> ungated{{std::nullopt, {"bwrap: "}, std::nullopt}};
  EXPECT_EQ(detail(0, "bwrap: setting up uid map: Permission denied\n", ungated), std::nullopt);
}

TEST(ClassifyRunnerFailure, DeathBySignalIsNeverARunnerFailure) {
  const std::vector<RunnerFailureRule> ungated{{std::nullopt, {"bwrap: "}, std::nullopt}};
  EXPECT_EQ(detail(std::nullopt, "bwrap: Creating new namespace failed\n", ungated), std::nullopt);
}

TEST(ClassifyRunnerFailure, UngatedRuleMatchesAnyNonzeroExitCaseInsensitively) {
  const std::vector<RunnerFailureRule> ungated{{std::nullopt, {"BWRAP: "}, std::nullopt}};
  const std::string line = "bwrap: No permissions to create new namespace";
  EXPECT_EQ(detail(1, "first\n" + line + "\nlast\n", ungated), line);
  EXPECT_EQ(detail(42, line, ungated), line);
}

TEST(ClassifyRunnerFailure, SignatureMustLieWithinOneLine) {
  const std::vector<RunnerFailureRule> rules{{std::nullopt, {"runner: fatal"}, std::nullopt}};
  EXPECT_EQ(detail(1, "runner:\nfatal\n", rules), std::nullopt);
}

TEST(ClassifyRunnerFailure, CrLfLinesAreSplitAndTheDetailHasNoCarriageReturn) {
  EXPECT_EQ(detail(125, kNotice + "\r\nlandlock-run: out of memory\r\n", landlock_rules()),
            "landlock-run: out of memory");
}

TEST(ClassifyRunnerFailure, DetailKeepsTheRunnersOriginalCase) {
  const std::vector<RunnerFailureRule> rules{{std::nullopt, {"sandbox-exec: "}, std::nullopt}};
  EXPECT_EQ(detail(65, "Sandbox-Exec: Profile Rejected\n", rules),
            "Sandbox-Exec: Profile Rejected");
}

TEST(ClassifyRunnerFailure, RulesAreEvaluatedInOrderAndTheFirstMatchWins) {
  const std::vector<RunnerFailureRule> rules{
      {std::vector<int>{127}, {"windows-acl-run: "}, std::nullopt},
      {std::nullopt, {"second: "}, std::nullopt},
      {std::nullopt, {"third: "}, std::nullopt},
  };
  EXPECT_EQ(detail(127, "third: x\nwindows-acl-run: missing --workspace\n", rules),
            "windows-acl-run: missing --workspace");
  EXPECT_EQ(detail(1, "third: x\nsecond: y\n", rules), "second: y");
}

TEST(ClassifyRunnerFailure, InformationalLinesBelongToTheirOwnRule) {
  const std::vector<RunnerFailureRule> rules{
      {std::nullopt, {"runner: "}, std::vector<std::string>{"runner: notice"}},
      {std::nullopt, {"runner: "}, std::nullopt},
  };
  EXPECT_EQ(detail(1, "runner: notice\n", rules), "runner: notice");
}

TEST(ClassifyRunnerFailure, NoRulesMeansNoRunnerFailure) {
  EXPECT_EQ(detail(125, "landlock-run: out of memory\n", {}), std::nullopt);
}

}  // namespace
}  // namespace dsh::sandbox
