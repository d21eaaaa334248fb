// SPDX-License-Identifier: Apache-2.0
// Policy narrowing and the pure input checks: NUL bytes, relative roots, empty argv.
#include "dsh/sandbox/policy.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dsh::sandbox {
namespace {

using namespace std::string_literals;

SandboxPolicy policy_with_root(std::string root) {
  return {ConfinedSandboxMode::kWorkspaceWrite, std::move(root), std::nullopt};
}

TEST(ToSandboxPolicy, NarrowsConfinedModesAndKeepsRootAndSession) {
  const SandboxExecutionPolicy execution{SandboxMode::kWorkspaceWrite, "/ws", "session-1"};
  const std::optional<SandboxPolicy> policy = to_sandbox_policy(execution);
  ASSERT_TRUE(policy);
  EXPECT_EQ(*policy, (SandboxPolicy{ConfinedSandboxMode::kWorkspaceWrite, "/ws", "session-1"}));
}

TEST(ToSandboxPolicy, DangerFullAccessNeverBecomesAProviderPolicy) {
  EXPECT_EQ(to_sandbox_policy({SandboxMode::kDangerFullAccess, "/ws", std::nullopt}), std::nullopt);
}

TEST(ValidatePolicy, AbsoluteRootIsValid) {
  EXPECT_TRUE(validate_policy(policy_with_root("/ws")));
  EXPECT_TRUE(validate_policy({ConfinedSandboxMode::kReadOnly, "/", "s"}));
}

TEST(ValidatePolicy, AResolvedWorkspaceMustNameTheRoot) {
  const ResolvedWorkspace root = ResolvedWorkspace::resolve("/").value();
  SandboxPolicy policy{ConfinedSandboxMode::kWorkspaceWrite, "/", std::nullopt,
                       NetworkPolicy::kInherit, root};
  EXPECT_TRUE(validate_policy(policy));
  policy.workspace_root = "/elsewhere";
  const Result<void> mismatch = validate_policy(policy);
  ASSERT_FALSE(mismatch);
  EXPECT_NE(mismatch.error().message.find("differs from the workspace resolved"),
            std::string::npos);
  // Narrowing keeps it.
  const SandboxExecutionPolicy execution{SandboxMode::kReadOnly, "/", std::nullopt,
                                         NetworkPolicy::kInherit, root};
  EXPECT_EQ(to_sandbox_policy(execution)->resolved_workspace, root);
}

TEST(ValidatePolicy, RelativeRootIsRejectedWithTheFix) {
  const Result<void> result = validate_policy(policy_with_root("ws/sub"));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message,
            "workspace root \"ws/sub\" is not an absolute path; pass a path that starts with "
            "\"/\" (resolve a relative path against the working directory first)");
}

TEST(ValidatePolicy, EmptyRootIsRejected) { EXPECT_FALSE(validate_policy(policy_with_root(""))); }

TEST(ValidatePolicy, NulByteInRootIsRejected) {
  const Result<void> result = validate_policy(policy_with_root("/ws\0/../etc"s));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message,
            "workspace root \"/ws\\x00/../etc\" contains a NUL byte; a path cannot contain NUL");
}

TEST(ValidatePolicy, EmptyOrNulSessionIdIsRejected) {
  EXPECT_FALSE(validate_policy({ConfinedSandboxMode::kReadOnly, "/ws", ""}));
  EXPECT_FALSE(validate_policy({ConfinedSandboxMode::kReadOnly, "/ws", "a\0b"s}));
}

TEST(ValidateArgv, ProgramAndArgumentsAreValid) {
  const std::vector<std::string> argv = {"bash", "-c", "echo hi"};
  EXPECT_TRUE(validate_argv(argv));
  const std::vector<std::string> empty_argument = {"true", ""};
  EXPECT_TRUE(validate_argv(empty_argument));
}

TEST(ValidateArgv, EmptyArgvIsRejected) {
  const Result<void> result = validate_argv({});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message,
            "argv is empty; pass the program to run followed by its arguments");
}

TEST(ValidateArgv, EmptyProgramIsRejected) {
  const std::vector<std::string> argv = {"", "x"};
  EXPECT_FALSE(validate_argv(argv));
}

TEST(ValidateArgv, NulByteInAnyArgumentIsRejectedNamingItsIndex) {
  const std::vector<std::string> argv = {"bash", "-c", "echo ok\0; rm -rf ~"s};
  const Result<void> result = validate_argv(argv);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message.rfind("argv[2] \"echo ok\\x00; rm -rf ~\" contains a NUL", 0),
            0u)
      << result.error().message;
}

TEST(ToSandboxPolicy, CarriesThePathRules) {
  SandboxExecutionPolicy execution{SandboxMode::kWorkspaceWrite, "/ws", std::nullopt};
  execution.allow_write = {"/cache"};
  execution.deny_write = {"/ws/conf"};
  execution.deny_read = {"/home/u/.ssh"};
  execution.allow_cache = {"npm"};
  const std::optional<SandboxPolicy> policy = to_sandbox_policy(execution);
  ASSERT_TRUE(policy);
  EXPECT_EQ(policy->allow_write, execution.allow_write);
  EXPECT_EQ(policy->deny_write, execution.deny_write);
  EXPECT_EQ(policy->deny_read, execution.deny_read);
  EXPECT_EQ(policy->allow_cache, execution.allow_cache);
}

TEST(ValidatePolicy, PathRulesMustBeAbsoluteAndNulFree) {
  SandboxPolicy policy = policy_with_root("/ws");
  policy.allow_write = {"/cache", "relative/dir"};
  auto checked = validate_policy(policy);
  ASSERT_FALSE(checked);
  EXPECT_NE(checked.error().message.find("allow_write entry \"relative/dir\" is not an absolute"),
            std::string::npos);
  policy.allow_write = {"/ca\0che"s};
  EXPECT_FALSE(validate_policy(policy));
  policy.allow_write.clear();
  policy.deny_read = {"!/home/u/.ssh", "/ws/.env"};  // "!" lifts a default
  policy.deny_write = {"!/ws/.git/hooks"};
  EXPECT_TRUE(validate_policy(policy));
  policy.deny_write = {"!relative"};
  EXPECT_FALSE(validate_policy(policy));
}

TEST(ValidatePolicy, AWritableRootIsNeitherTheHostNorAKernelFilesystem) {
  for (const char* root : {"/", "/proc/self", "/dev", "/sys/fs/cgroup", "/ws/../"}) {
    SandboxPolicy policy = policy_with_root("/ws");
    policy.allow_write = {root};
    EXPECT_FALSE(validate_policy(policy)) << root;
  }
  SandboxPolicy policy = policy_with_root("/ws");
  policy.allow_write = {"/devices", "/process"};  // whole components only
  EXPECT_TRUE(validate_policy(policy));
}

TEST(ValidatePolicy, AnUnreadablePathCannotContainTheWorkspace) {
  SandboxPolicy policy = policy_with_root("/home/u/ws");
  policy.deny_read = {"/home/u"};
  auto checked = validate_policy(policy);
  ASSERT_FALSE(checked);
  EXPECT_NE(checked.error().message.find("contains the workspace"), std::string::npos);
  policy.deny_read = {"/home/u/ws/.env"};
  EXPECT_TRUE(validate_policy(policy));
}

TEST(ValidatePolicy, CachePresetsAreKnownNames) {
  SandboxPolicy policy = policy_with_root("/ws");
  policy.allow_cache = {"npm", "pip", "cargo", "go"};
  EXPECT_TRUE(validate_policy(policy));
  policy.allow_cache = {"npmm"};
  auto checked = validate_policy(policy);
  ASSERT_FALSE(checked);
  EXPECT_NE(checked.error().message.find("known presets: npm"), std::string::npos);
}

}  // namespace
}  // namespace dsh::sandbox
