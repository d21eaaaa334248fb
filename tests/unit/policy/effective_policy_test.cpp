// SPDX-License-Identifier: Apache-2.0
// The path rules made effective on a real (temporary) tree: the git state of a repository, a
// worktree and a submodule, the home's secrets and startup files, lifted defaults, globs, the
// cache presets' variables, the refusals, and Landlock's read grants.
#include "policy/effective_policy.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "files.h"
#include "temp_dir.h"

namespace dsh::sandbox::policy {
namespace {

using dsh::testing::TempDir;

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

std::vector<std::string> paths_of(const std::vector<profiles::PlannedPath>& planned) {
  std::vector<std::string> paths;
  for (const auto& p : planned) paths.push_back(p.path);
  return paths;
}

class EffectivePolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = canonical(dir_.path());
    home_ = dir_.mkdir("home", 0700);
    home_ = root_ + "/home";
    workspace_ = root_ + "/ws";
    ::mkdir(workspace_.c_str(), 0755);
    ::mkdir((workspace_ + "/.git").c_str(), 0755);
    testing::write_file(workspace_ + "/.git/config", "[core]\n\tbare = false\n");
  }
  static std::string canonical(const std::string& path) {
    char* resolved = ::realpath(path.c_str(), nullptr);
    std::string out = resolved != nullptr ? resolved : path;
    std::free(resolved);  // NOLINT(cppcoreguidelines-no-malloc)
    return out;
  }
  PathContext context(std::map<std::string, std::string> env = {}) const {
    return {home_, [env](std::string_view name) {
              const auto it = env.find(std::string(name));
              return it == env.end() ? std::string() : it->second;
            }};
  }
  SandboxPolicy policy(ConfinedSandboxMode mode = ConfinedSandboxMode::kWorkspaceWrite) const {
    return {mode, workspace_, std::nullopt};
  }
  EffectivePolicy resolve(const SandboxPolicy& p, const PathContext& c) const {
    auto result = effective_policy(p, c);
    EXPECT_TRUE(result) << (result ? "" : result.error().message);
    return result ? std::move(result).value() : EffectivePolicy{};
  }

  TempDir dir_;
  std::string root_, home_, workspace_;
};

TEST_F(EffectivePolicyTest, GitStateIsPinnedAndReadOnlyAndAMissingHooksDirIsCreated) {
  const EffectivePolicy e = resolve(policy(), context());
  EXPECT_EQ(e.plan.pinned, (std::vector<std::string>{workspace_ + "/.git"}));
  const auto read_only = paths_of(e.plan.read_only);
  EXPECT_TRUE(contains(read_only, workspace_ + "/.git/config"));
  EXPECT_TRUE(contains(read_only, workspace_ + "/.git/hooks"));
  struct stat info {};
  EXPECT_EQ(::lstat((workspace_ + "/.git/hooks").c_str(), &info), 0);
  EXPECT_TRUE(S_ISDIR(info.st_mode));
  EXPECT_TRUE(contains(e.protected_paths, workspace_ + "/.git/config"));
  EXPECT_EQ(e.policy.deny_write, read_only);
}

TEST_F(EffectivePolicyTest, AViewChangesNothingOnDisk) {
  PathContext c = context();
  c.create_missing = false;
  SandboxPolicy p = policy();
  p.allow_cache = {"npm"};
  const EffectivePolicy e = resolve(p, c);
  EXPECT_FALSE(testing::exists(workspace_ + "/.git/hooks"));
  EXPECT_FALSE(testing::exists(home_ + "/.npm"));
  EXPECT_EQ(e.policy.allow_write, (std::vector<std::string>{home_ + "/.npm/_cacache"}));
}

TEST_F(EffectivePolicyTest, ReadOnlyModeHasNoCarveOutsButHidesSecrets) {
  ::mkdir((home_ + "/.ssh").c_str(), 0700);
  testing::write_file(home_ + "/.netrc", "x");
  const EffectivePolicy e = resolve(policy(ConfinedSandboxMode::kReadOnly), context());
  EXPECT_TRUE(e.plan.read_only.empty());
  EXPECT_TRUE(e.plan.pinned.empty());
  EXPECT_EQ(paths_of(e.plan.unreadable),
            (std::vector<std::string>{home_ + "/.ssh", home_ + "/.netrc"}));
  EXPECT_TRUE(e.plan.unreadable[0].directory);
  EXPECT_FALSE(e.plan.unreadable[1].directory);
  // Landlock's grants: everything around them, never them or their ancestors.
  EXPECT_FALSE(contains(e.plan.read_grants, home_ + "/.ssh"));
  EXPECT_FALSE(contains(e.plan.read_grants, home_));
  EXPECT_FALSE(contains(e.plan.read_grants, "/"));
  EXPECT_TRUE(contains(e.plan.read_grants, "/usr"));
  EXPECT_TRUE(contains(e.plan.read_grants, workspace_));
  EXPECT_TRUE(contains(e.plan.unlisted, home_));
}

TEST_F(EffectivePolicyTest, APathBeneathAnUnreadableDirectoryIsHiddenWithIt) {
  ::mkdir((home_ + "/.ssh").c_str(), 0700);
  testing::write_file(home_ + "/.ssh/id", "k");
  SandboxPolicy p = policy(ConfinedSandboxMode::kReadOnly);
  p.deny_read = {home_ + "/.ssh/id"};
  const EffectivePolicy e = resolve(p, context());
  EXPECT_EQ(paths_of(e.plan.unreadable), (std::vector<std::string>{home_ + "/.ssh"}));
}

TEST_F(EffectivePolicyTest, AHookWithAPlantedHardLinkIsRefused) {
  ::mkdir((workspace_ + "/.git/hooks").c_str(), 0755);
  testing::write_file(workspace_ + "/.git/hooks/pre-commit", "#!/bin/sh\n");
  ASSERT_EQ(::link((workspace_ + "/.git/hooks/pre-commit").c_str(), (workspace_ + "/x").c_str()),
            0);
  auto result = effective_policy(policy(), context());
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("hard links"), std::string::npos);
}

TEST_F(EffectivePolicyTest, SymlinksAreNeverGrantedSinceAccessIsCheckedAtTheTarget) {
  ::mkdir((home_ + "/.ssh").c_str(), 0700);
  ASSERT_EQ(::symlink("/", (home_ + "/to-root").c_str()), 0);
  const EffectivePolicy e = resolve(policy(ConfinedSandboxMode::kReadOnly), context());
  EXPECT_FALSE(contains(e.plan.read_grants, home_ + "/to-root"));
}

TEST_F(EffectivePolicyTest, ADefaultIsLiftedByABangEntry) {
  ::mkdir((home_ + "/.ssh").c_str(), 0700);
  SandboxPolicy p = policy();
  p.deny_read = {"!" + home_ + "/.ssh"};
  p.deny_write = {"!" + workspace_ + "/.git/hooks"};
  const EffectivePolicy e = resolve(p, context());
  EXPECT_TRUE(e.plan.unreadable.empty());
  EXPECT_FALSE(contains(paths_of(e.plan.read_only), workspace_ + "/.git/hooks"));
  EXPECT_TRUE(contains(paths_of(e.plan.read_only), workspace_ + "/.git/config"));
}

TEST_F(EffectivePolicyTest, AGlobInTheLastComponentMatchesWhatExists) {
  testing::write_file(workspace_ + "/.env", "a");
  testing::write_file(workspace_ + "/.env.local", "b");
  testing::write_file(workspace_ + "/env.txt", "c");
  SandboxPolicy p = policy(ConfinedSandboxMode::kReadOnly);
  p.deny_read = {workspace_ + "/.env*"};
  const EffectivePolicy e = resolve(p, context());
  EXPECT_EQ(e.policy.deny_read,
            (std::vector<std::string>{workspace_ + "/.env", workspace_ + "/.env.local"}));
  EXPECT_TRUE(e.protected_paths.empty());  // the caller's own, not a default
}

TEST_F(EffectivePolicyTest, AWorktreeGitFileItsGitDirAndCommonDirAreProtected) {
  const std::string main_git = workspace_ + "/.git";
  ::mkdir((main_git + "/worktrees").c_str(), 0755);
  ::mkdir((main_git + "/worktrees/wt").c_str(), 0755);
  testing::write_file(main_git + "/worktrees/wt/commondir", "../..\n");
  const std::string linked = root_ + "/linked";
  ::mkdir(linked.c_str(), 0755);
  testing::write_file(linked + "/.git", "gitdir: " + main_git + "/worktrees/wt\n");
  SandboxPolicy p{ConfinedSandboxMode::kWorkspaceWrite, linked, std::nullopt};
  const EffectivePolicy e = resolve(p, context());
  const auto read_only = paths_of(e.plan.read_only);
  EXPECT_TRUE(contains(read_only, linked + "/.git"));
  EXPECT_TRUE(contains(e.policy.deny_write, main_git + "/config"));
  EXPECT_TRUE(contains(e.policy.deny_write, main_git + "/worktrees/wt/commondir"));
}

TEST_F(EffectivePolicyTest, AHooksPathInTheWorkspaceIsProtectedToo) {
  testing::write_file(workspace_ + "/.git/config", "[core]\n\thooksPath = .husky\n");
  ::mkdir((workspace_ + "/.husky").c_str(), 0755);
  const EffectivePolicy e = resolve(policy(), context());
  EXPECT_TRUE(contains(paths_of(e.plan.read_only), workspace_ + "/.husky"));
}

TEST_F(EffectivePolicyTest, StartupFilesAreReadOnlyOnlyWhenAWritableRootCoversTheHome) {
  testing::write_file(home_ + "/.bashrc", "x");
  EXPECT_FALSE(contains(resolve(policy(), context()).policy.deny_write, home_ + "/.bashrc"));
  SandboxPolicy p = policy();
  p.allow_write = {home_};
  EXPECT_TRUE(contains(resolve(p, context()).policy.deny_write, home_ + "/.bashrc"));
}

TEST_F(EffectivePolicyTest, CachePresetsHonourTheToolsVariables) {
  SandboxPolicy p = policy();
  p.allow_cache = {"npm", "go"};
  const std::string npm = root_ + "/npm-cache";
  const EffectivePolicy e =
      resolve(p, context({{"npm_config_cache", npm}, {"GOMODCACHE", "relative/ignored"}}));
  EXPECT_EQ(e.policy.allow_write,
            (std::vector<std::string>{npm + "/_cacache", home_ + "/go/pkg/mod/cache/download"}));
  EXPECT_TRUE(testing::exists(npm + "/_cacache"));
  EXPECT_EQ(e.plan.writable.size(), 2U);
}

TEST_F(EffectivePolicyTest, CachePresetsWhoseToolRunsTheCacheInPlaceAreRefused) {
  for (const std::string name : {"gradle", "maven", "pnpm", "bun", "uv"}) {
    SandboxPolicy p = policy();
    p.allow_cache = {name};
    auto result = effective_policy(p, context());
    ASSERT_FALSE(result) << name;
    EXPECT_NE(result.error().message.find("cache preset is refused"), std::string::npos);
  }
}

TEST_F(EffectivePolicyTest, AMissingStartupFileSealsItsDirectoryWithTheRestWritableAgain) {
  ::mkdir(home_.c_str(), 0700);
  testing::write_file(home_ + "/.bashrc", "x");
  testing::write_file(home_ + "/notes", "x");
  ::mkdir((home_ + "/.config").c_str(), 0755);
  ::mkdir((home_ + "/.config/other").c_str(), 0755);
  ::mkdir((home_ + "/proj").c_str(), 0755);
  SandboxPolicy p = policy();
  p.allow_write = {home_, home_ + "/proj"};
  const EffectivePolicy e = resolve(p, context());
  ASSERT_EQ(e.plan.sealed.size(), 2U);
  EXPECT_EQ(e.plan.sealed[0].path, home_);
  // .bashrc is kept read-only and .config is sealed itself: neither is opened again.
  EXPECT_EQ(e.plan.sealed[0].reopened,
            (std::vector<std::string>{home_ + "/notes", home_ + "/proj"}));
  EXPECT_EQ(e.plan.sealed[1].path, home_ + "/.config");
  EXPECT_EQ(e.plan.sealed[1].reopened, (std::vector<std::string>{home_ + "/.config/other"}));
  EXPECT_EQ(e.plan.rebound, (std::vector<std::string>{home_ + "/proj"}));
  EXPECT_TRUE(contains(paths_of(e.plan.read_only), home_ + "/.bashrc"));
  EXPECT_TRUE(contains(e.plan.startup_guarded, home_ + "/.bash_aliases"));
  EXPECT_TRUE(contains(e.plan.startup_guarded, home_ + "/.config/git"));
  EXPECT_TRUE(contains(e.protected_paths, home_ + "/.local/bin"));
}

TEST_F(EffectivePolicyTest, ARootBeneathTheHomeSealsOnlyWhatItReaches) {
  ::mkdir(home_.c_str(), 0700);
  ::mkdir((home_ + "/.config").c_str(), 0755);
  SandboxPolicy p = policy();
  p.allow_write = {home_ + "/.config"};
  const EffectivePolicy e = resolve(p, context());
  ASSERT_EQ(e.plan.sealed.size(), 1U);
  EXPECT_EQ(e.plan.sealed[0].path, home_ + "/.config");
  EXPECT_FALSE(contains(e.plan.startup_guarded, home_ + "/.bashrc"));
  EXPECT_TRUE(contains(e.plan.startup_guarded, home_ + "/.config/git"));
  // Another user's home (from /etc/passwd) is guarded the same way.
  PathContext other = context();
  other.home = root_ + "/elsewhere";
  other.other_homes = {home_};
  EXPECT_EQ(resolve(p, other).plan.sealed, e.plan.sealed);
  // A lifted default is left as it is.
  p.deny_write = {"!" + home_ + "/.config/git"};
  EXPECT_FALSE(contains(resolve(p, context()).plan.startup_guarded, home_ + "/.config/git"));
}

TEST_F(EffectivePolicyTest, RefusalsNameWhatToFix) {
  const auto error_of = [&](const SandboxPolicy& p) {
    auto result = effective_policy(p, context());
    return result ? std::string("accepted") : result.error().message;
  };
  SandboxPolicy missing = policy();
  missing.allow_write = {root_ + "/nope"};
  EXPECT_NE(error_of(missing).find("not an existing directory"), std::string::npos);
  SandboxPolicy covering = policy();
  covering.allow_write = {home_};
  covering.deny_read = {root_};
  EXPECT_NE(error_of(covering).find("contains"), std::string::npos);
  ASSERT_EQ(::link((workspace_ + "/.git/config").c_str(), (workspace_ + "/planted").c_str()), 0);
  EXPECT_NE(error_of(policy()).find("hard links"), std::string::npos);
}

TEST(EffectivePolicyJson, ShowsEveryFieldUnderItsContractName) {
  EffectivePolicy e;
  e.policy = {ConfinedSandboxMode::kWorkspaceWrite, "/ws", std::nullopt};
  e.policy.allow_write = {"/c"};
  e.protected_paths = {"/ws/.git/config"};
  const nlohmann::json value = effective_policy_json(e);
  EXPECT_EQ(value["mode"], "workspace-write");
  EXPECT_EQ(value["network"], "deny");  // no network unless the call opens it
  EXPECT_EQ(value["allowWrite"], nlohmann::json::array({"/c"}));
  EXPECT_EQ(value["protected"], nlohmann::json::array({"/ws/.git/config"}));
  for (const char* key : {"workspaceRoot", "denyWrite", "denyRead", "allowCache"}) {
    EXPECT_TRUE(value.contains(key)) << key;
  }
}

TEST(AbsoluteRulePath, ExpandsHomeAndRelativeAndKeepsTheBang) {
  EXPECT_EQ(absolute_rule_path("~/.ssh", "/cwd", "/home/u"), "/home/u/.ssh");
  EXPECT_EQ(absolute_rule_path("!~/.aws", "/cwd", "/home/u"), "!/home/u/.aws");
  EXPECT_EQ(absolute_rule_path("sub/../x", "/cwd", "/home/u"), "/cwd/x");
  EXPECT_EQ(absolute_rule_path("/a//b/", "/cwd", "/home/u"), "/a/b");
  EXPECT_EQ(split_cache_names({"npm, pip", "cargo"}),
            (std::vector<std::string>{"npm", "pip", "cargo"}));
}

}  // namespace
}  // namespace dsh::sandbox::policy
