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

// A model may ask for exactly what the denial named instead of a wider mode; the schema says
// danger-full-access is the last resort, and the timeout's bounds are the CLI's.
TEST(ToolSchema, NarrowGrantsAreOfferedBesideTheModesAndTheTimeoutHasTheCliBounds) {
  const json tool = definition(SandboxMode::kWorkspaceWrite);
  const json& properties = tool["input_schema"]["properties"];
  for (const char* field : {"allow_write", "network_allow", "allow_cache"}) {
    EXPECT_EQ(properties[field]["type"], "array") << field;
    EXPECT_NE(properties[field]["description"].get<std::string>().find("justification"),
              std::string::npos)
        << field;
  }
  EXPECT_EQ(properties["allow_cache"]["items"]["enum"][0], "npm");
  EXPECT_NE(properties["sandbox_permissions"]["description"].get<std::string>().find(
                "only when no narrower grant"),
            std::string::npos);
  EXPECT_NE(tool["description"].get<std::string>().find("allow_write"), std::string::npos);
  EXPECT_EQ(properties["timeoutMs"]["maximum"], 365.0 * 86'400'000);
  EXPECT_EQ(properties["timeoutMs"]["exclusiveMinimum"], 0);
  EXPECT_FALSE(definition(std::nullopt)["input_schema"]["properties"].contains("allow_write"));
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

// A narrow grant adds exactly its entries for that one call, under the standing mode (read-only
// becomes workspace-write for a directory, which --allow-write needs), after one question
// naming them; the rest of the policy is kept.
TEST(ToolCallPolicy, ANarrowGrantAddsExactlyItsEntriesAfterOneQuestion) {
  FakeApprover approver(EscalationOutcome::kAllowedOnce);
  ToolEscalation escalation{std::nullopt, "the build writes /data/out and fetches from it"};
  escalation.grant.allow_write = {"/data/out/"};
  escalation.grant.network_allow = {"Registry.Test"};
  const SandboxExecutionPolicy granted =
      tool_call_policy(standing_policy(SandboxMode::kReadOnly), escalation, kConfining,
                       {"agent", "bash", "call-2", &approver});
  EXPECT_EQ(granted.mode, SandboxMode::kWorkspaceWrite);
  EXPECT_EQ(granted.allow_write, std::vector<std::string>{"/data/out/"});
  EXPECT_EQ(granted.network, NetworkPolicy::kAllowList);
  EXPECT_EQ(granted.network_allow.allow,
            (std::vector<std::string>{"example.com", "registry.test"}));
  EXPECT_EQ(granted.workspace_root, "/ws");
  ASSERT_EQ(approver.requests.size(), 1U);
  EXPECT_EQ(approver.requests[0].reason,
            "grant --allow-write /data/out/, --network allow:registry.test under workspace-write: "
            "the build writes /data/out and fetches from it");
  // Under workspace-write, a cache preset alone: the same mode, nothing else opened.
  ToolEscalation cache{std::nullopt, "npm install writes its cache"};
  cache.grant.allow_cache = {"npm"};
  const SandboxExecutionPolicy cached =
      tool_call_policy(standing_policy(SandboxMode::kWorkspaceWrite), cache, kConfining,
                       {"agent", "bash", "c", &approver});
  EXPECT_EQ(cached.mode, SandboxMode::kWorkspaceWrite);
  EXPECT_EQ(cached.allow_cache, std::vector<std::string>{"npm"});
  EXPECT_EQ(approver.requests.back().reason,
            "grant --allow-cache npm: npm install writes its cache");
}

// A grant names one destination or directory or preset each, with a justification, and is
// never paired with danger-full-access; anything else asks no one and grants nothing.
TEST(ToolCallPolicy, ABadOrRejectedGrantRunsNothing) {
  FakeApprover yes(EscalationOutcome::kAllowedOnce);
  const SandboxExecutionPolicy standing = standing_policy(SandboxMode::kWorkspaceWrite);
  const auto message = [&](NarrowGrant grant, std::optional<std::string> why,
                           std::optional<SandboxMode> mode, Approver* approver) -> std::string {
    ToolEscalation escalation{mode, std::move(why), std::move(grant)};
    try {
      tool_call_policy(standing, escalation, kConfining, {"agent", "bash", "c", approver});
    } catch (const std::exception& error) {
      return error.what();
    }
    return "granted";
  };
  EXPECT_EQ(message({{"/data"}, {}, {}}, std::nullopt, std::nullopt, &yes),
            kGrantNeedsJustification);
  EXPECT_NE(message({{"/data"}, {}, {}}, " ", std::nullopt, &yes), "granted");
  for (const std::string dir : {"relative", "/", "/proc/self", "/dev", "/sys/fs"}) {
    EXPECT_NE(message({{dir}, {}, {}}, "why", std::nullopt, &yes).find("allow_write entry"),
              std::string::npos)
        << dir;
  }
  for (const std::string host : {"*.test", "10.0.0.0/8", "127.0.0.1", "localhost", "a.test:80"}) {
    EXPECT_NE(message({{}, {host}, {}}, "why", std::nullopt, &yes).find("network_allow entry"),
              std::string::npos)
        << host;
  }
  EXPECT_NE(message({{}, {}, {"npmm"}}, "why", std::nullopt, &yes).find("allow_cache entry"),
            std::string::npos);
  EXPECT_NE(message({{"/data"}, {}, {}}, "why", SandboxMode::kDangerFullAccess, &yes), "granted");
  EXPECT_TRUE(yes.requests.empty());
  FakeApprover no(EscalationOutcome::kRejected);
  EXPECT_EQ(message({{"/data"}, {}, {}}, "why", std::nullopt, &no),
            "the user rejected escalating this command to --allow-write /data");
  EXPECT_EQ(no.requests.size(), 1U);
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
