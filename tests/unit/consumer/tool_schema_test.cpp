// SPDX-License-Identifier: Apache-2.0
// The bash tool definition: the schema enum exact, the escalation fields only when the session's
// mode confines, the load error and the composition text byte for byte, and the workdir rule.
#include "consumer/tool_schema.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "fake_approver.h"
#include "policy/call_policy.h"

namespace dsh::sandbox::consumer {
namespace {

using nlohmann::json;

json definition(std::optional<SandboxMode> mode, bool policy = true) {
  const Result<json> made = bash_tool_definition({mode, policy, true});
  EXPECT_TRUE(made) << made.error().message;
  return made ? made.value() : json();
}

TEST(ToolSchema, ConfinedModesOfferTheExactEscalationEnumAndJustification) {
  for (const SandboxMode mode : {SandboxMode::kReadOnly, SandboxMode::kWorkspaceWrite}) {
    const json tool = definition(mode);
    const json& properties = tool["input_schema"]["properties"];
    EXPECT_EQ(properties["sandbox_permissions"]["enum"],
              json::array({"workspace-write", "danger-full-access"}));
    EXPECT_TRUE(properties.contains("justification"));
    EXPECT_EQ(tool["input_schema"]["required"], json::array({"command", "description"}));
    EXPECT_EQ(tool["name"], "bash");
  }
}

TEST(ToolSchema, NoEscalationFieldsWhenNothingConfines) {
  for (const std::optional<SandboxMode> mode :
       {std::optional(SandboxMode::kDangerFullAccess), std::optional<SandboxMode>()}) {
    const json properties = definition(mode)["input_schema"]["properties"];
    EXPECT_FALSE(properties.contains("sandbox_permissions"));
    EXPECT_FALSE(properties.contains("justification"));
    EXPECT_TRUE(properties.contains("command"));
  }
}

TEST(ToolSchema, TextsAreTheReferencesExactly) {
  const Result<json> missing = bash_tool_definition({SandboxMode::kReadOnly, false, true});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message,
            "tool-bash: the mounted bash executor confines but ctx.sandboxPolicy is missing");
  const json texts = definition(std::nullopt)["texts"];
  EXPECT_EQ(texts["notAvailable"],
            "sandbox_permissions is not available in this composition (no sandboxing executor "
            "to escalate)");
  EXPECT_EQ(texts["pairing"],
            json::array({"invalid escalation: sandbox_permissions requires a justification",
                         "invalid escalation: justification is only valid together with "
                         "sandbox_permissions",
                         "invalid justification: expected a non-empty sentence"}));
}

TEST(ToolSchema, WorkdirIsTheRootOrTheCanonicalCwdAndRelativeAgainstIt) {
  EXPECT_EQ(policy::resolve_workdir("/ws", "/elsewhere", std::nullopt), "/ws");
  EXPECT_EQ(policy::resolve_workdir("/ws", std::nullopt, "sub/dir"), "/ws/sub/dir");
  EXPECT_EQ(policy::resolve_workdir("/ws", std::nullopt, "/abs"), "/abs");
  // No root: the session's cwd, canonical (a missing path stays as spelled).
  EXPECT_EQ(policy::resolve_workdir("", "/nonexistent-dsh/cwd", std::nullopt),
            "/nonexistent-dsh/cwd");
  EXPECT_EQ(policy::resolve_workdir("", "/", "tmp"), "/tmp");
  // Neither: the process's directory, absolute (never a relative "." left for the spawn).
  const std::string here = std::filesystem::current_path().string();
  EXPECT_EQ(policy::resolve_workdir("", std::nullopt, std::nullopt), here);
  EXPECT_EQ(policy::resolve_workdir("", std::nullopt, "sub"), here + "/sub");
}

using dsh::testing::FakeApprover;

SandboxExecutionPolicy standing_policy(SandboxMode mode) {
  SandboxExecutionPolicy policy;
  policy.mode = mode;
  policy.workspace_root = "/ws";
  policy.session_id = "s";
  policy.network = NetworkPolicy::kAllowList;
  policy.network_allow.allow = {"example.com"};
  return policy;
}

const ToolComposition kConfining{SandboxMode::kReadOnly, true, true, NetworkPolicy::kDeny};

// One rule for a call and a job: a grant replaces the mode for that call only, keeping the
// rest; the person is asked once, with the reference's reason.
TEST(ToolCallPolicy, AGrantReplacesTheModeAndKeepsTheRest) {
  FakeApprover approver(EscalationOutcome::kAllowedOnce);
  const SandboxExecutionPolicy standing = standing_policy(SandboxMode::kReadOnly);
  const SandboxExecutionPolicy granted =
      tool_call_policy(standing, {SandboxMode::kWorkspaceWrite, "the build writes ./out"},
                       kConfining, {"agent", "bash", "call-1", &approver});
  EXPECT_EQ(granted.mode, SandboxMode::kWorkspaceWrite);
  EXPECT_EQ(granted.workspace_root, "/ws");
  EXPECT_EQ(granted.session_id, "s");
  EXPECT_EQ(granted.network, NetworkPolicy::kAllowList);
  ASSERT_EQ(approver.requests.size(), 1U);
  EXPECT_EQ(approver.requests[0].reason,
            "escalate sandbox to workspace-write: the build writes ./out");
  EXPECT_EQ(approver.requests[0].call_id, "call-1");
  // Unconfined, nothing could enforce the allow-list: the process's own network.
  const SandboxExecutionPolicy full =
      tool_call_policy(standing, {SandboxMode::kDangerFullAccess, "why"}, kConfining,
                       {"agent", "bash", "c", &approver});
  EXPECT_EQ(full.mode, SandboxMode::kDangerFullAccess);
  EXPECT_EQ(full.network, NetworkPolicy::kInherit);
  EXPECT_TRUE(full.network_allow.allow.empty());
}

TEST(ToolCallPolicy, WithoutEscalationTheStandingPolicyHolds) {
  FakeApprover approver(EscalationOutcome::kAllowedOnce);
  const SandboxExecutionPolicy standing = standing_policy(SandboxMode::kReadOnly);
  EXPECT_EQ(tool_call_policy(standing, {}, kConfining, {"agent", "bash", "c", &approver}),
            standing);
  EXPECT_TRUE(approver.requests.empty());
}

TEST(ToolCallPolicy, RefusalsRunNothingAndAskNoOneWhenTheyCannot) {
  FakeApprover yes(EscalationOutcome::kAllowedOnce);
  const SandboxExecutionPolicy standing = standing_policy(SandboxMode::kWorkspaceWrite);
  const ToolCall call{"agent", "bash", "c", &yes};
  const auto message = [&](const ToolEscalation& escalation, const ToolComposition& composition,
                           const ToolCall& asked) -> std::string {
    try {
      tool_call_policy(standing, escalation, composition, asked);
    } catch (const std::exception& error) {
      return error.what();
    }
    return "granted";
  };
  EXPECT_EQ(message({SandboxMode::kWorkspaceWrite, std::nullopt}, kConfining, call),
            "invalid escalation: sandbox_permissions requires a justification");
  EXPECT_EQ(message({std::nullopt, "why"}, kConfining, call),
            "invalid escalation: justification is only valid together with sandbox_permissions");
  EXPECT_EQ(message({SandboxMode::kDangerFullAccess, "why"}, ToolComposition{}, call),
            kToolNotAvailable);
  // Not strictly wider than the standing workspace-write: no person is asked.
  EXPECT_NE(message({SandboxMode::kWorkspaceWrite, "why"}, kConfining, call), "granted");
  EXPECT_TRUE(yes.requests.empty());
  FakeApprover no(EscalationOutcome::kRejected);
  EXPECT_NE(
      message({SandboxMode::kDangerFullAccess, "why"}, kConfining, {"agent", "bash", "c", &no}),
      "granted");
  EXPECT_EQ(no.requests.size(), 1U);
}

}  // namespace
}  // namespace dsh::sandbox::consumer
