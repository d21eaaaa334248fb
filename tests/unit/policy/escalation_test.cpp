// SPDX-License-Identifier: Apache-2.0
// Escalation: ladder, pairing, markers, approval sequence.
#include "dsh/sandbox/escalation.h"

#include <gtest/gtest.h>

#include <vector>

#include "fake_approver.h"

namespace dsh::sandbox {
namespace {

using Modes = std::vector<SandboxMode>;

Modes to_vector(std::span<const SandboxMode> modes) { return {modes.begin(), modes.end()}; }

using dsh::testing::FakeApprover;

EscalationRequest ask(SandboxMode mode, std::string effective = "read-only") {
  EscalationRequest request;
  request.mode = mode;
  request.justification = "the user asked to write in the workspace";
  request.effective_mode = std::move(effective);
  request.agent = "agent-1";
  request.tool_name = "bash";
  request.call_id = "call-7";
  return request;
}

// Runs approve_escalation, expecting a refusal; returns its message.
std::string refusal_text(const EscalationRequest& request, Approver* approver,
                         EscalationRefusal expected) {
  try {
    approve_escalation(request, approver);
  } catch (const EscalationError& error) {
    EXPECT_EQ(error.refusal(), expected);
    return error.what();
  }
  ADD_FAILURE() << "approve_escalation granted";
  return {};
}

TEST(WiderModes, IsTheLadder) {
  EXPECT_EQ(to_vector(wider_modes(SandboxMode::kReadOnly)),
            (Modes{SandboxMode::kWorkspaceWrite, SandboxMode::kDangerFullAccess}));
  EXPECT_EQ(to_vector(wider_modes(SandboxMode::kWorkspaceWrite)),
            (Modes{SandboxMode::kDangerFullAccess}));
  EXPECT_TRUE(wider_modes(SandboxMode::kDangerFullAccess).empty());
}

TEST(WiderModes, ByWireNameAndUnknownNamesWidenToNothing) {
  EXPECT_EQ(to_vector(wider_modes("read-only")), to_vector(wider_modes(SandboxMode::kReadOnly)));
  EXPECT_EQ(to_vector(wider_modes("workspace-write")), (Modes{SandboxMode::kDangerFullAccess}));
  EXPECT_TRUE(wider_modes("danger-full-access").empty());
  EXPECT_TRUE(wider_modes("yolo").empty());
  EXPECT_TRUE(wider_modes("READ-ONLY").empty());
  EXPECT_TRUE(wider_modes("").empty());
}

TEST(EscalationTargets, AreTheClosedEnumWithoutTheFloor) {
  EXPECT_EQ(Modes(kEscalationTargets.begin(), kEscalationTargets.end()),
            (Modes{SandboxMode::kWorkspaceWrite, SandboxMode::kDangerFullAccess}));
}

TEST(ValidateEscalationArgs, NeitherOrBothIsValid) {
  EXPECT_TRUE(validate_escalation_args(std::nullopt, std::nullopt).has_value());
  EXPECT_TRUE(validate_escalation_args(SandboxMode::kWorkspaceWrite, "need to write").has_value());
}

TEST(ValidateEscalationArgs, PermissionsNeedAJustification) {
  const auto result = validate_escalation_args(SandboxMode::kWorkspaceWrite, std::nullopt);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().message,
            "invalid escalation: sandbox_permissions requires a justification");
}

TEST(ValidateEscalationArgs, AJustificationNeedsPermissions) {
  for (const std::string_view just : {"because", "", "  "}) {
    const auto result = validate_escalation_args(std::nullopt, just);
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().message,
              "invalid escalation: justification is only valid together with "
              "sandbox_permissions");
  }
}

TEST(ValidateEscalationArgs, ABlankJustificationIsRefused) {
  // JavaScript's trim() whitespace: ASCII, NBSP, the typographic spaces, U+2028, the BOM.
  for (const std::string_view just :
       {"", " ", "\t\r\n\v\f", "\u00a0", "\u2003 \u3000", "\u2028\ufeff"}) {
    const auto result = validate_escalation_args(SandboxMode::kDangerFullAccess, just);
    ASSERT_FALSE(result.has_value()) << just;
    EXPECT_EQ(result.error().message, "invalid justification: expected a non-empty sentence");
  }
}

TEST(ValidateEscalationArgs, NonWhitespaceIsASentence) {
  using namespace std::string_view_literals;
  for (const std::string_view just : {" x "sv, "\u200b"sv, "\xff"sv, "\xc0\xa0"sv, "\0"sv}) {
    EXPECT_TRUE(validate_escalation_args(SandboxMode::kWorkspaceWrite, just).has_value()) << just;
  }
}

TEST(ValidateEscalationArgs, ValueThrowsInvalidInput) {
  EXPECT_THROW(validate_escalation_args(SandboxMode::kWorkspaceWrite, std::nullopt).value(),
               InvalidSandboxInputError);
}

TEST(Markers, AreExact) {
  EXPECT_EQ(sandbox_denial_marker(SandboxMode::kReadOnly),
            "[sandbox: file access denied under read-only mode]");
  EXPECT_EQ(sandbox_denial_marker(SandboxMode::kWorkspaceWrite),
            "[sandbox: file access denied under workspace-write mode]");
  EXPECT_EQ(escalation_hint_marker("command"),
            "[sandbox: escalation available \u2014 retry this exact command once with "
            "sandbox_permissions (the narrowest wider mode that suffices) + justification; the "
            "approval prompt asks the user]");
  EXPECT_EQ(escalation_hint_marker("operation"),
            "[sandbox: escalation available \u2014 retry this exact operation once with "
            "sandbox_permissions (the narrowest wider mode that suffices) + justification; the "
            "approval prompt asks the user]");
}

TEST(EscalationOutcomeNames, AreTheWireNames) {
  EXPECT_EQ(wire_name(EscalationOutcome::kAllowedOnce), "allowed-once");
  EXPECT_EQ(wire_name(EscalationOutcome::kRejected), "rejected");
  EXPECT_EQ(wire_name(EscalationOutcome::kCancelled), "cancelled");
  EXPECT_EQ(wire_name(EscalationOutcome::kUnavailable), "unavailable");
}

TEST(ApproveEscalation, AGrantReturnsTheModeAndAsksOnceWithTheAuditReason) {
  FakeApprover approver(EscalationOutcome::kAllowedOnce);
  std::stop_source stop;
  EscalationRequest request = ask(SandboxMode::kWorkspaceWrite);
  request.signal = stop.get_token();
  EXPECT_EQ(approve_escalation(request, &approver), SandboxMode::kWorkspaceWrite);
  ASSERT_EQ(approver.requests.size(), 1U);
  const ApprovalRequest& asked = approver.requests.front();
  EXPECT_EQ(asked.reason,
            "escalate sandbox to workspace-write: the user asked to write in the workspace");
  EXPECT_EQ(asked.agent, "agent-1");
  EXPECT_EQ(asked.tool_name, "bash");
  EXPECT_EQ(asked.call_id, "call-7");
  ASSERT_TRUE(asked.signal.has_value());
  stop.request_stop();
  EXPECT_TRUE(asked.signal->stop_requested());  // the same cancellation, not a copy of its state
}

TEST(ApproveEscalation, GrantsEveryStrictlyWiderStep) {
  FakeApprover approver(EscalationOutcome::kAllowedOnce);
  EXPECT_EQ(approve_escalation(ask(SandboxMode::kDangerFullAccess, "read-only"), &approver),
            SandboxMode::kDangerFullAccess);
  EXPECT_EQ(approve_escalation(ask(SandboxMode::kDangerFullAccess, "workspace-write"), &approver),
            SandboxMode::kDangerFullAccess);
  EXPECT_EQ(approver.requests.size(), 2U);
}

TEST(ApproveEscalation, AGrantIsNotRememberedByTheNextCall) {
  FakeApprover approver(EscalationOutcome::kAllowedOnce);
  approve_escalation(ask(SandboxMode::kWorkspaceWrite), &approver);
  approve_escalation(ask(SandboxMode::kWorkspaceWrite), &approver);
  EXPECT_EQ(approver.requests.size(), 2U);  // every escalation asks again
}

TEST(ApproveEscalation, NonWideningRequestsNeverPrompt) {
  FakeApprover approver(EscalationOutcome::kAllowedOnce);
  EXPECT_EQ(refusal_text(ask(SandboxMode::kReadOnly, "read-only"), &approver,
                         EscalationRefusal::kNotStrictlyWider),
            "sandbox escalation to \"read-only\" is not strictly wider than this call's current "
            "\"read-only\" mode");
  EXPECT_EQ(refusal_text(ask(SandboxMode::kWorkspaceWrite, "danger-full-access"), &approver,
                         EscalationRefusal::kNotStrictlyWider),
            "sandbox escalation to \"workspace-write\" is not strictly wider than this call's "
            "current \"danger-full-access\" mode");
  EXPECT_EQ(refusal_text(ask(SandboxMode::kWorkspaceWrite, "workspace-write"), &approver,
                         EscalationRefusal::kNotStrictlyWider),
            "sandbox escalation to \"workspace-write\" is not strictly wider than this call's "
            "current \"workspace-write\" mode");
  EXPECT_EQ(refusal_text(ask(SandboxMode::kReadOnly, "workspace-write"), &approver,
                         EscalationRefusal::kNotStrictlyWider),
            "sandbox escalation to \"read-only\" is not strictly wider than this call's current "
            "\"workspace-write\" mode");
  EXPECT_TRUE(approver.requests.empty());
}

TEST(ApproveEscalation, AnUnknownEffectiveModeIsNeverWidened) {
  FakeApprover approver(EscalationOutcome::kAllowedOnce);
  for (const SandboxMode target : kEscalationTargets) {
    EXPECT_EQ(refusal_text(ask(target, "yolo"), &approver, EscalationRefusal::kNotStrictlyWider),
              "sandbox escalation to \"" + std::string(wire_name(target)) +
                  "\" is not strictly wider than this call's current \"yolo\" mode");
  }
  EXPECT_TRUE(approver.requests.empty());
}

TEST(ApproveEscalation, NotWiderIsJudgedBeforeTheMissingApproverAndAgent) {
  EscalationRequest request = ask(SandboxMode::kReadOnly);
  request.agent.reset();
  refusal_text(request, nullptr, EscalationRefusal::kNotStrictlyWider);
}

TEST(ApproveEscalation, NoApprover) {
  EXPECT_EQ(
      refusal_text(ask(SandboxMode::kWorkspaceWrite), nullptr, EscalationRefusal::kNoApprover),
      "sandbox escalation to \"workspace-write\" requires approval, but no approval service "
      "is composed");
}

TEST(ApproveEscalation, NoApproverIsJudgedBeforeNoAgent) {
  EscalationRequest request = ask(SandboxMode::kWorkspaceWrite);
  request.agent.reset();
  refusal_text(request, nullptr, EscalationRefusal::kNoApprover);
}

TEST(ApproveEscalation, NoAgentNeverPrompts) {
  FakeApprover approver(EscalationOutcome::kAllowedOnce);
  for (const std::optional<std::string>& agent :
       {std::optional<std::string>(), std::optional<std::string>("")}) {
    EscalationRequest request = ask(SandboxMode::kDangerFullAccess);
    request.agent = agent;
    EXPECT_EQ(refusal_text(request, &approver, EscalationRefusal::kNoAgent),
              "sandbox escalation to \"danger-full-access\" requires approval, but the call has "
              "no agent to route it through");
  }
  EXPECT_TRUE(approver.requests.empty());
}

TEST(ApproveEscalation, RejectedNamesTheSubject) {
  FakeApprover approver(EscalationOutcome::kRejected);
  EXPECT_EQ(
      refusal_text(ask(SandboxMode::kWorkspaceWrite), &approver, EscalationRefusal::kRejected),
      "the user rejected escalating this command to \"workspace-write\"");
  EscalationRequest fs_request = ask(SandboxMode::kWorkspaceWrite);
  fs_request.subject = "operation";
  EXPECT_EQ(refusal_text(fs_request, &approver, EscalationRefusal::kRejected),
            "the user rejected escalating this operation to \"workspace-write\"");
}

TEST(ApproveEscalation, Cancelled) {
  FakeApprover approver(EscalationOutcome::kCancelled);
  EXPECT_EQ(
      refusal_text(ask(SandboxMode::kDangerFullAccess), &approver, EscalationRefusal::kCancelled),
      "approval for escalating to \"danger-full-access\" was cancelled");
}

TEST(ApproveEscalation, Unavailable) {
  FakeApprover approver(EscalationOutcome::kUnavailable);
  EXPECT_EQ(
      refusal_text(ask(SandboxMode::kWorkspaceWrite), &approver, EscalationRefusal::kUnavailable),
      "sandbox escalation to \"workspace-write\" requires approval, but no approval channel is "
      "available");
}

TEST(ApproveEscalation, ABogusOutcomeIsAnExhaustivenessError) {
  FakeApprover approver(static_cast<EscalationOutcome>(42));
  try {
    approve_escalation(ask(SandboxMode::kWorkspaceWrite), &approver);
    FAIL() << "a bogus outcome granted";
  } catch (const std::logic_error& error) {
    EXPECT_STREQ(error.what(), "unreachable variant in EscalationOutcome");
  }
}

TEST(ApproveEscalation, RefusalsAreNeitherInvalidInputNorUnavailability) {
  FakeApprover approver(EscalationOutcome::kRejected);
  try {
    approve_escalation(ask(SandboxMode::kWorkspaceWrite), &approver);
  } catch (const SandboxError&) {
    FAIL() << "a refusal must not be a SandboxError";
  } catch (const EscalationError&) {
    SUCCEED();
  }
}

}  // namespace
}  // namespace dsh::sandbox
