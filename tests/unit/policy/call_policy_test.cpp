// SPDX-License-Identifier: Apache-2.0
// build_call_policy, the one builder of a call's policy (the CLI's and the SandboxExecutor's):
// the mode's precedence, the network with the config's allow-list, the path rules in order and
// held to the mode, the files that decide later runs, and a rule path planted through a symlink.
#include "policy/call_policy.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "dsh/sandbox/errors.h"
#include "paths.h"
#include "temp_dir.h"

namespace dsh::sandbox::policy {
namespace {

namespace fs = std::filesystem;
using dsh::testing::native_realpath;
using dsh::testing::TempDir;

class CallPolicyTest : public ::testing::Test {
 protected:
  CallPolicyTest() {
    fs::create_directories(dir_ / "ws");
    workspace_ = native_realpath(dir_ / "ws");
    inputs_.workspace = ResolvedWorkspace::resolve(workspace_).value();
  }

  TempDir dir_;
  std::string workspace_;
  CallInputs inputs_;
};

TEST_F(CallPolicyTest, TheCallsModeWinsOverTheSessionsWhichWinsOverTheConfigs) {
  inputs_.defaults.mode = SandboxMode::kWorkspaceWrite;
  EXPECT_EQ(build_call_policy(inputs_).mode, SandboxMode::kWorkspaceWrite);
  const SessionLog session = SessionLog::create(dir_ / "s.jsonl", "s1", workspace_);
  set_sandbox_mode(session, SandboxMode::kReadOnly);
  inputs_.session = &session;
  SandboxExecutionPolicy policy = build_call_policy(inputs_);
  EXPECT_EQ(policy.mode, SandboxMode::kReadOnly);
  EXPECT_EQ(policy.session_id, "s1");
  EXPECT_EQ(policy.workspace_root, workspace_);
  inputs_.request.mode = SandboxMode::kDangerFullAccess;
  EXPECT_EQ(build_call_policy(inputs_).mode, SandboxMode::kDangerFullAccess);
}

TEST_F(CallPolicyTest, TheConfigsAllowListIsTheDefaultNetworkAndJoinsTheCallsOwn) {
  inputs_.defaults.network_allow = {"example.com"};
  inputs_.defaults.network_deny = {"bad.example.com"};
  SandboxExecutionPolicy policy = build_call_policy(inputs_);
  EXPECT_EQ(policy.network, NetworkPolicy::kAllowList);
  EXPECT_EQ(policy.network_allow.allow, std::vector<std::string>{"example.com"});
  EXPECT_EQ(policy.network_allow.deny, std::vector<std::string>{"bad.example.com"});
  // --network allow:: the config's entries first, each once.
  inputs_.request.network = NetworkPolicy::kAllowList;
  inputs_.request.network_allow.allow = {"other.org", "example.com"};
  policy = build_call_policy(inputs_);
  EXPECT_EQ(policy.network_allow.allow, (std::vector<std::string>{"example.com", "other.org"}));
  // --network deny stands as given.
  inputs_.request.network = NetworkPolicy::kDeny;
  inputs_.request.network_allow = {};
  EXPECT_EQ(build_call_policy(inputs_).network, NetworkPolicy::kDeny);
}

TEST_F(CallPolicyTest, UnconfinedTheNetworkIsInheritedUnlessTheCallNamedOne) {
  inputs_.request.mode = SandboxMode::kDangerFullAccess;
  inputs_.defaults.network_allow = {"example.com"};
  SandboxExecutionPolicy policy = build_call_policy(inputs_);
  EXPECT_EQ(policy.network, NetworkPolicy::kInherit);
  EXPECT_TRUE(policy.network_allow.allow.empty());
  // Named, deny or an allow-list is refused for every caller rather than ignored: nothing
  // would enforce it; inherit says what an unconfined command has anyway.
  for (const NetworkPolicy network : {NetworkPolicy::kDeny, NetworkPolicy::kAllowList}) {
    inputs_.request.network = network;
    try {
      build_call_policy(inputs_);
      ADD_FAILURE() << "an unenforceable --network " << wire_name(network) << " was accepted";
    } catch (const InvalidSandboxInputError& refused) {
      EXPECT_NE(std::string(refused.what())
                    .find(std::string("--network ") + std::string(wire_name(network))),
                std::string::npos)
          << refused.what();
      EXPECT_NE(std::string(refused.what()).find("nothing would enforce it"), std::string::npos)
          << refused.what();
    }
  }
  inputs_.request.network = NetworkPolicy::kInherit;
  EXPECT_EQ(build_call_policy(inputs_).network, NetworkPolicy::kInherit);
}

TEST_F(CallPolicyTest, TheConfigsRulesComeFirstAndTheCallsAreHeldToItsMode) {
  inputs_.defaults.mode = SandboxMode::kWorkspaceWrite;
  inputs_.defaults.rules.deny_read = {dir_ / "config-secret"};
  inputs_.request.deny_read = {"relative-secret"};
  inputs_.request.allow_cache = {"npm,pip"};
  const SandboxExecutionPolicy policy = build_call_policy(inputs_);
  ASSERT_EQ(policy.deny_read.size(), 2U);
  EXPECT_EQ(policy.deny_read[0], dir_ / "config-secret");
  EXPECT_TRUE(policy.deny_read[1].starts_with('/')) << policy.deny_read[1];
  EXPECT_EQ(policy.allow_cache, (std::vector<std::string>{"npm", "pip"}));
  // Read-only makes nothing writable: an --allow-write of the call is an error, never dropped.
  inputs_.request.mode = SandboxMode::kReadOnly;
  inputs_.request.allow_write = {workspace_};
  EXPECT_THROW(build_call_policy(inputs_), InvalidSandboxInputError);
}

TEST_F(CallPolicyTest, NoExtraWritableRootMayCoverAFileThatDecidesLaterRuns) {
  inputs_.request.mode = SandboxMode::kWorkspaceWrite;
  inputs_.request.allow_write = {dir_.path()};
  inputs_.request.config_path = dir_ / "config.json";
  try {
    (void)build_call_policy(inputs_);
    FAIL() << "an --allow-write over the config was accepted";
  } catch (const InvalidSandboxInputError& error) {
    EXPECT_NE(std::string(error.what()).find("decides later runs"), std::string::npos);
  }
}

TEST_F(CallPolicyTest, ARulePathReachedThroughASymlinkInAnEarlierRootIsRefused) {
  fs::create_directories(dir_ / "earlier");
  fs::create_directories(dir_ / "elsewhere");
  fs::create_directory_symlink(dir_ / "elsewhere", dir_ / "earlier/link");
  inputs_.request.deny_read = {dir_ / "earlier/link/secret"};
  // Without roots to hold it to (a view), the rule is taken as given.
  EXPECT_NO_THROW((void)build_call_policy(inputs_));
  inputs_.planted_roots = {native_realpath(dir_ / "earlier")};
  EXPECT_THROW(build_call_policy(inputs_), InvalidSandboxInputError);
  // Unconfined, no rule applies at all: the call's own rules are refused first.
  inputs_.request.mode = SandboxMode::kDangerFullAccess;
  EXPECT_THROW(build_call_policy(inputs_), InvalidSandboxInputError);
}

TEST(CallPolicy, AnUnresolvedRootIsMadeAbsoluteAndTheCallersIdKept) {
  const TempDir dir;
  CallInputs inputs;
  inputs.workspace_root = dir.path() + "/.";
  inputs.session_id = "harness-7";
  const SandboxExecutionPolicy policy = build_call_policy(inputs);
  EXPECT_EQ(policy.workspace_root, native_realpath(dir.path()));
  EXPECT_EQ(policy.session_id, "harness-7");
  EXPECT_EQ(policy.mode, SandboxMode::kReadOnly);
  EXPECT_EQ(policy.network, NetworkPolicy::kDeny);
}

}  // namespace
}  // namespace dsh::sandbox::policy
