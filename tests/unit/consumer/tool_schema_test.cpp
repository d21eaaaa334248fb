// SPDX-License-Identifier: Apache-2.0
// The bash tool definition: the schema enum exact, the escalation fields only when the session's
// mode confines, the load error and the composition text byte for byte, and the workdir rule.
#include "consumer/tool_schema.h"

#include <gtest/gtest.h>

#include <filesystem>

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
  EXPECT_EQ(resolve_tool_workdir("/ws", "/elsewhere", std::nullopt), "/ws");
  EXPECT_EQ(resolve_tool_workdir("/ws", std::nullopt, "sub/dir"), "/ws/sub/dir");
  EXPECT_EQ(resolve_tool_workdir("/ws", std::nullopt, "/abs"), "/abs");
  // No root: the session's cwd, canonical (a missing path stays as spelled).
  EXPECT_EQ(resolve_tool_workdir("", "/nonexistent-dsh/cwd", std::nullopt), "/nonexistent-dsh/cwd");
  EXPECT_EQ(resolve_tool_workdir("", "/", "tmp"), "/tmp");
  // Neither: the process's directory, absolute (never a relative "." left for the spawn).
  const std::string here = std::filesystem::current_path().string();
  EXPECT_EQ(resolve_tool_workdir("", std::nullopt, std::nullopt), here);
  EXPECT_EQ(resolve_tool_workdir("", std::nullopt, "sub"), here + "/sub");
}

}  // namespace
}  // namespace dsh::sandbox::consumer
