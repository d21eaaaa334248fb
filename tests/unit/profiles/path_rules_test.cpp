// SPDX-License-Identifier: Apache-2.0
// The generators with a filesystem plan: bwrap's mounts in their load-bearing order, Landlock's
// read grants in place of `--ro /` and its honest ungoverned list, Seatbelt's deny rules after
// its allows. Golden: the exact words.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "profiles/profiles.h"

namespace dsh::sandbox::profiles {
namespace {

using Argv = std::vector<std::string>;

SandboxPolicy workspace_write() {
  // The network as the caller has it: these profiles are about paths (our default is deny).
  SandboxPolicy policy{ConfinedSandboxMode::kWorkspaceWrite, "/ws", std::nullopt,
                       NetworkPolicy::kInherit};
  policy.allow_write = {"/cache"};
  return policy;
}

FsPlan plan() {
  FsPlan plan;
  plan.writable = {"/cache"};
  plan.pinned = {"/ws/.git"};
  plan.read_only = {{"/ws/.git/config", false}, {"/ws/.git/hooks", true}};
  plan.unreadable = {{"/home/u/.ssh", true}, {"/home/u/.netrc", false}};
  plan.read_grants = {"/bin", "/home/u/.bashrc", "/tmp/x", "/usr"};
  plan.unlisted = {"/", "/home", "/home/u"};
  return plan;
}

Argv tail_after(const Argv& args, const std::string& word) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == word) return Argv(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  }
  return {};
}

TEST(PathRulesBwrap, MountsWritableThenPinnedThenReadOnlyThenUnreadable) {
  const Argv args = bwrap_args(workspace_write(), plan());
  EXPECT_EQ(tail_after(args, "--tmpfs"), (Argv{"--tmpfs",
                                               "/tmp",
                                               "--bind",
                                               "/ws",
                                               "/ws",
                                               "--bind",
                                               "/cache",
                                               "/cache",
                                               "--bind",
                                               "/ws/.git",
                                               "/ws/.git",
                                               "--ro-bind",
                                               "/ws/.git/config",
                                               "/ws/.git/config",
                                               "--ro-bind",
                                               "/ws/.git/hooks",
                                               "/ws/.git/hooks",
                                               "--perms",
                                               "0000",
                                               "--size",
                                               "4096",
                                               "--tmpfs",
                                               "/home/u/.ssh",
                                               "--ro-bind",
                                               "/dev/null",
                                               "/home/u/.netrc"}));
}

TEST(PathRulesBwrap, ReadOnlyModeHidesSecretsAndMakesNothingWritable) {
  SandboxPolicy policy{ConfinedSandboxMode::kReadOnly, "/ws", std::nullopt};
  const Argv args = bwrap_args(policy, plan());
  EXPECT_EQ(tail_after(args, "--perms"),
            (Argv{"--perms", "0000", "--size", "4096", "--tmpfs", "/home/u/.ssh", "--ro-bind",
                  "/dev/null", "/home/u/.netrc"}));
  EXPECT_TRUE(tail_after(args, "--bind").empty());
}

TEST(PathRulesBwrap, AnExtraWritableRootIsHostWritableAndItsSiblingIsNot) {
  EXPECT_TRUE(bwrap_host_writable("/cache/x", workspace_write()));
  EXPECT_FALSE(bwrap_host_writable("/cachex", workspace_write()));
}

TEST(PathRulesLandlock, ReadGrantsReplaceTheRootAndWritableRootsFollow) {
  LandlockFeatures features{SandboxEnforcement::kFull, 7, true, true, true};
  const Argv args = landlock_args(workspace_write(), features, LandlockPlace::kHost, plan());
  EXPECT_EQ(Argv(args.begin(), args.begin() + 22),
            (Argv{"--ro-try", "/bin",    "--ro-try", "/home/u/.bashrc",
                  "--ro-try", "/tmp/x",  "--ro-try", "/usr",
                  "--list",   "/",       "--list",   "/home",
                  "--list",   "/home/u", "--rw",     "/dev/null",
                  "--rw",     "/tmp",    "--rw",     "/ws",
                  "--rw",     "/cache"}));
  // `/` is only ever listed, never read: no `--ro /`.
  EXPECT_EQ(std::count(args.begin(), args.end(), "/"), 1);
  EXPECT_EQ(std::count(args.begin(), args.end(), "--ro"), 0);
}

TEST(PathRulesLandlock, InsideBwrapTheRootStaysOneGrantSinceBwrapHidesThePaths) {
  LandlockFeatures features{SandboxEnforcement::kFull, 7, true, true, true};
  const Argv args = landlock_args(workspace_write(), features, LandlockPlace::kInsideBwrap, plan());
  EXPECT_EQ(Argv(args.begin(), args.begin() + 2), (Argv{"--ro", "/"}));
  EXPECT_EQ(std::count(args.begin(), args.end(), "--ro-try"), 0);
}

TEST(PathRulesLandlock, WithoutUnreadablePathsTheRootStaysOneGrant) {
  LandlockFeatures features{SandboxEnforcement::kFull, 7, true, true, true};
  const Argv args = landlock_args(workspace_write(), features);
  EXPECT_EQ(Argv(args.begin(), args.begin() + 2), (Argv{"--ro", "/"}));
}

// Host Unix sockets are network: with the network denied (or allow-listed with the launcher's TCP
// rule) the launcher is given the listed sockets, and bwrap binds one beneath its private /tmp;
// with the network inherited nothing is listed, every socket is reachable.
TEST(PathRulesLandlock, AllowedUnixSocketsReachTheLauncherAndBwrap) {
  LandlockFeatures features{SandboxEnforcement::kFull, 7, true, true, true};
  SandboxPolicy policy = workspace_write();
  policy.network = NetworkPolicy::kDeny;
  policy.network_allow.unix_sockets = {"/run/user/0/bus", "/tmp/ssh-x/agent.1"};
  const Argv args = landlock_args(policy, features, LandlockPlace::kInsideBwrap, plan());
  EXPECT_EQ(tail_after(args, "--allow-unix-socket"),
            (Argv{"--allow-unix-socket", "/run/user/0/bus", "--allow-unix-socket",
                  "/tmp/ssh-x/agent.1"}));
  const Argv mounts = bwrap_args(policy, plan());
  const Argv bound = tail_after(mounts, "--ro-bind-try");
  ASSERT_GE(bound.size(), 3U);
  EXPECT_EQ(Argv(bound.begin(), bound.begin() + 3),
            (Argv{"--ro-bind-try", "/tmp/ssh-x/agent.1", "/tmp/ssh-x/agent.1"}));
  EXPECT_EQ(std::count(mounts.begin(), mounts.end(), "/run/user/0/bus"), 0);
  policy.network = NetworkPolicy::kAllowList;
  features.abi = 3;  // no TCP rule: no --allow-connect-port, so no guard to hand them to
  const Argv old_abi = landlock_args(policy, features, LandlockPlace::kInsideBwrap, plan());
  EXPECT_EQ(std::count(old_abi.begin(), old_abi.end(), "--allow-unix-socket"), 0);
}

TEST(PathRulesLandlock, CarveOutsInsideWritableRootsAreNamedUngoverned) {
  LandlockFeatures features{SandboxEnforcement::kFull, 7, true, true, true};
  FsPlan with_env = plan();
  with_env.unreadable.push_back({"/ws/.env", false});
  const std::vector<std::string> gaps = landlock_ungoverned(workspace_write(), features, with_env);
  const std::string joined = ::testing::PrintToString(gaps);
  EXPECT_NE(joined.find("read-only carve-out /ws/.git/config"), std::string::npos) << joined;
  EXPECT_NE(joined.find("read-only carve-out /ws/.git/hooks"), std::string::npos) << joined;
  EXPECT_NE(joined.find("unreadable path /ws/.env"), std::string::npos) << joined;
  EXPECT_EQ(joined.find("/home/u/.ssh"), std::string::npos) << joined;  // governed by grants
  // Through the composer: the Landlock backend is partial in the strict reading (full by the
  // contract: the launcher's verdict), bwrap+landlock governs them.
  const Runners runners{"/usr/bin/bwrap", "/opt/landlock-run"};
  const Argv command = {"true"};
  const ConfinedArgv alone = wrap({SandboxBackend::kLandlock, features}, runners, command,
                                  workspace_write(), {}, "/tmp", {}, with_env);
  EXPECT_EQ(alone.enforcement, SandboxEnforcement::kFull);
  EXPECT_EQ(alone.strict_enforcement, SandboxEnforcement::kPartial);
  const ConfinedArgv layered = wrap({SandboxBackend::kBwrap, features}, runners, command,
                                    workspace_write(), {}, "/tmp", {}, with_env);
  EXPECT_EQ(layered.enforcement, SandboxEnforcement::kFull);
  EXPECT_TRUE(layered.ungoverned.empty());
}

TEST(PathRulesSeatbelt, DenyRulesFollowTheAllowsOnCanonicalPaths) {
  const std::vector<std::string> roots = {"/private/ws", "/private/tmp"};
  FsPlan seatbelt_plan;
  seatbelt_plan.writable = {"/Users/u/.npm"};
  seatbelt_plan.pinned = {"/private/ws/.git"};
  seatbelt_plan.read_only = {{"/private/ws/.git/config", false}};
  seatbelt_plan.unreadable = {{"/Users/u/.ssh", true}};
  EXPECT_EQ(seatbelt_profile(workspace_write(), roots, seatbelt_plan),
            "(version 1) (allow default) (deny file-write*) (allow file-write* (literal "
            "\"/dev/null\")) (allow file-write* (subpath \"/private/ws\") (subpath "
            "\"/private/tmp\") (subpath \"/Users/u/.npm\")) (deny file-write* (literal "
            "\"/private/ws/.git\") (subpath \"/private/ws/.git/config\")) (deny file-read* "
            "(subpath \"/Users/u/.ssh\"))");
  SandboxPolicy read_only{ConfinedSandboxMode::kReadOnly, "/ws", std::nullopt,
                          NetworkPolicy::kInherit};
  EXPECT_EQ(seatbelt_profile(read_only, {}, seatbelt_plan),
            "(version 1) (allow default) (deny file-write*) (allow file-write* (literal "
            "\"/dev/null\")) (deny file-read* (subpath \"/Users/u/.ssh\"))");
}

}  // namespace
}  // namespace dsh::sandbox::profiles
