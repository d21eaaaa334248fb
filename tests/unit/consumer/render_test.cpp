// SPDX-License-Identifier: Apache-2.0
// The agent render (spec §5.7, §7.5 tools.spec and the acp-agent snapshots).
#include "render.h"

#include <gtest/gtest.h>

#include <csignal>

namespace dsh::sandbox::consumer {
namespace {

RunOutcome outcome(std::optional<int> exit_code, std::string out, std::string err,
                   bool denied = false, SandboxMode mode = SandboxMode::kReadOnly) {
  RunOutcome result;
  result.process.exit_code = exit_code;
  result.process.out.tail = std::move(out);
  result.process.err.tail = std::move(err);
  result.sandbox.mode = mode;
  result.sandbox.denied = denied;
  return result;
}

TEST(RenderForAgent, PartialLandlockNoticeWithFalseMatchesTheSnapshot) {
  EXPECT_EQ(
      render_for_agent(outcome(1, "", "landlock-run: partial enforcement (older Landlock ABI)\n"),
                       true, 120000),
      "[stderr]\nlandlock-run: partial enforcement (older Landlock ABI)\n[exit code: 1]");
}

TEST(RenderForAgent, DenialMarkerComesBeforeTheExitCodeWhichIsLast) {
  const std::string text =
      render_for_agent(outcome(1, "", "sh: /x: Permission denied\n", true), false, 120000);
  EXPECT_EQ(text,
            "[stderr]\nsh: /x: Permission denied\n[sandbox: file access denied under read-only "
            "mode]\n[exit code: 1]");
}

TEST(RenderForAgent, HintAppearsOnlyWhenEscalationIsAdvertised) {
  const std::string hinted = render_for_agent(outcome(1, "", "denied\n", true), true, 120000);
  EXPECT_NE(hinted.find("[sandbox: escalation available"), std::string::npos);
  EXPECT_LT(hinted.find("file access denied"), hinted.find("escalation available"));
  const std::string plain = render_for_agent(outcome(1, "", "denied\n", true), false, 120000);
  EXPECT_EQ(plain.find("escalation available"), std::string::npos);
}

TEST(RenderForAgent, EmptyOutputSaysSoAndACleanExitHasNoMarker) {
  EXPECT_EQ(render_for_agent(outcome(0, "", ""), true, 120000), "(no output)");
  EXPECT_EQ(render_for_agent(outcome(0, "hello\n", ""), true, 120000), "hello");
}

TEST(RenderForAgent, StdoutThenStderr) {
  EXPECT_EQ(render_for_agent(outcome(2, "out", "err\n"), false, 120000),
            "out\n[stderr]\nerr\n[exit code: 2]");
}

TEST(RenderForAgent, TimeoutThenSignalAreTheLastMarkers) {
  RunOutcome timed_out = outcome(std::nullopt, "partial\n", "");
  timed_out.process.timed_out = true;
  timed_out.process.signal = SIGTERM;
  EXPECT_EQ(render_for_agent(timed_out, false, 5000),
            "partial\n[timed out after 5000ms]\n[killed by signal: SIGTERM]");
}

TEST(RenderForAgent, TruncationNamesTheSpillFile) {
  RunOutcome big = outcome(0, "tail\n", "");
  big.process.out.truncated = true;
  big.process.out.spill_path = "/tmp/dsh-spill/out";
  EXPECT_EQ(render_for_agent(big, false, 120000),
            "tail\n[output truncated; full output: /tmp/dsh-spill/out]");
}

TEST(RenderForAgent, ErrorsArePrefixed) {
  EXPECT_EQ(render_error_for_agent("sandbox mode \"read-only\" is requested"),
            "Error: sandbox mode \"read-only\" is requested");
}

TEST(SignalName, NamesKnownSignals) {
  EXPECT_EQ(signal_name(SIGKILL), "SIGKILL");
  EXPECT_EQ(signal_name(SIGTERM), "SIGTERM");
}

}  // namespace
}  // namespace dsh::sandbox::consumer
