// SPDX-License-Identifier: Apache-2.0
// The git state finder and the check after a run, on real (temporary) trees: nested and bare
// repositories, submodules named with a slash, include targets and hooks paths made so they can
// be bound, config.worktree where git reads one; the config scanner's forms; what the check puts
// back, removes and names.
#include "policy/git_state.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string>
#include <vector>

#include "files.h"
#include "policy/git_guard.h"
#include "policy/host_paths.h"
#include "temp_dir.h"

namespace dsh::sandbox::policy {
namespace {

using dsh::testing::TempDir;

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

std::string canonical(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  std::string out = resolved != nullptr ? resolved : path;
  std::free(resolved);  // NOLINT(cppcoreguidelines-no-malloc)
  return out;
}

class GitStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ws_ = canonical(dir_.path()) + "/ws";
    make_repo(ws_ + "/.git");
  }
  static void make_dir(const std::string& path) { ::mkdir(path.c_str(), 0755); }
  static void make_repo(const std::string& gitdir, const std::string& config = "[core]\n") {
    const std::size_t slash = gitdir.rfind('/');
    for (std::size_t i = 1; i <= slash; ++i) {
      if (i == slash || gitdir[i] == '/') make_dir(gitdir.substr(0, i));
    }
    make_dir(gitdir);
    testing::write_file(gitdir + "/HEAD", "ref: refs/heads/main\n");
    make_dir(gitdir + "/objects");
    make_dir(gitdir + "/refs");
    testing::write_file(gitdir + "/config", config);
  }
  GitStateContext context(bool create = true) const {
    return {{ws_}, {ws_}, "", [](std::string_view) { return std::string(); }, create};
  }

  TempDir dir_;
  std::string ws_;
};

TEST(GitConfigValues, ReadsEveryFormGitWrites) {
  const std::string text =
      "[core] hooksPath = one ; a comment\n"
      "[include]\n\tpath = \"two words\" # another\n"
      "[includeIf \"gitdir:~/src/\"]\n\tpath = three\n"
      "[includeIf.gitdir:x]\n\tPATH=four\n"
      "[other]\n\tpath = not-this\n";
  EXPECT_EQ(git_config_values(text, "core", "hookspath"), (std::vector<std::string>{"one"}));
  EXPECT_EQ(git_config_values(text, "include", "path"), (std::vector<std::string>{"two words"}));
  EXPECT_EQ(git_config_values(text, "includeif", "path"),
            (std::vector<std::string>{"three", "four"}));
}

TEST_F(GitStateTest, NestedBareAndSubmoduleGitDirectoriesAreFoundAndPinned) {
  make_repo(ws_ + "/node_modules/pkg/.git");
  make_repo(ws_ + "/mirror.git");  // bare: HEAD, objects/, refs/
  make_repo(ws_ + "/.git/modules/a/b");
  const GitState state = git_state(context());
  ASSERT_FALSE(state.error) << *state.error;
  for (const std::string& dir : {ws_ + "/.git", ws_ + "/node_modules/pkg/.git", ws_ + "/mirror.git",
                                 ws_ + "/.git/modules/a/b"}) {
    EXPECT_TRUE(contains(state.pinned, dir)) << dir;
    EXPECT_TRUE(contains(state.read_only, dir + "/config")) << dir;
    EXPECT_TRUE(contains(state.read_only, dir + "/hooks")) << dir;
    EXPECT_TRUE(testing::exists(dir + "/hooks")) << dir;
  }
}

TEST_F(GitStateTest, PastTheBindBudgetNestedRepositoriesAreGuardedShallowestBoundFirst) {
  // bwrap re-reads the mount table for every bind: past kMaxBoundGitDirs git directories a
  // repository is left to the check after the run, the deepest first, and none is forgotten.
  const std::size_t deep = kMaxBoundGitDirs + 2;
  std::vector<std::string> shallow;
  std::vector<std::string> deeper;
  for (std::size_t i = 0; i < deep; ++i) {
    shallow.push_back(ws_ + "/s" + std::to_string(i) + "/.git");
    deeper.push_back(ws_ + "/d/e/r" + std::to_string(i) + "/.git");
  }
  for (const std::string& dir : shallow) make_repo(dir);
  for (const std::string& dir : deeper) make_repo(dir);
  const GitState state = git_state(context());
  ASSERT_FALSE(state.error) << *state.error;
  EXPECT_EQ(state.pinned.size(), kMaxBoundGitDirs);
  EXPECT_TRUE(contains(state.pinned, ws_ + "/.git"));
  for (const std::string& dir : deeper) {
    EXPECT_FALSE(contains(state.pinned, dir)) << dir;
    EXPECT_TRUE(contains(state.guarded_git_dirs, dir)) << dir;
    EXPECT_TRUE(contains(state.guarded_read_only, dir + "/config")) << dir;
    EXPECT_FALSE(contains(state.read_only, dir + "/config")) << dir;
  }
  for (const std::string& dir : shallow) {
    EXPECT_NE(contains(state.pinned, dir), contains(state.guarded_git_dirs, dir)) << dir;
  }
}

TEST_F(GitStateTest, MissingIncludeTargetsHooksPathAndWorktreeConfigAreMadeEmpty) {
  testing::write_file(ws_ + "/.git/config",
                      "[core]\n\thooksPath = .husky\n[extensions]\n\tworktreeConfig = true\n"
                      "[include]\n\tpath = ../conf/local.inc\n");
  const GitState state = git_state(context());
  ASSERT_FALSE(state.error) << *state.error;
  EXPECT_TRUE(contains(state.read_only, ws_ + "/.husky"));
  EXPECT_TRUE(contains(state.read_only, ws_ + "/conf/local.inc"));
  EXPECT_TRUE(contains(state.read_only, ws_ + "/.git/config.worktree"));
  EXPECT_EQ(testing::read_file(ws_ + "/conf/local.inc"), "");
  EXPECT_EQ(testing::read_file(ws_ + "/.git/config.worktree"), "");
  struct stat info {};
  EXPECT_EQ(::lstat((ws_ + "/.husky").c_str(), &info), 0);
  EXPECT_TRUE(S_ISDIR(info.st_mode));
}

TEST_F(GitStateTest, AViewCreatesNothing) {
  ::rmdir((ws_ + "/.git/hooks").c_str());
  testing::write_file(ws_ + "/.git/config", "[include]\n\tpath = ../local.inc\n");
  const GitState state = git_state(context(false));
  EXPECT_FALSE(testing::exists(ws_ + "/.git/hooks"));
  EXPECT_FALSE(testing::exists(ws_ + "/local.inc"));
}

TEST_F(GitStateTest, ADanglingIncludeSymlinkIsRefused) {
  testing::write_file(ws_ + "/.git/config", "[include]\n\tpath = ../local.inc\n");
  ASSERT_EQ(::symlink((ws_ + "/later").c_str(), (ws_ + "/local.inc").c_str()), 0);
  const GitState state = git_state(context());
  ASSERT_TRUE(state.error);
  EXPECT_NE(state.error->find("local.inc"), std::string::npos) << *state.error;
}

TEST(OrdinaryGitName, LocksAndStateAreOrdinaryConfigurationIsNot) {
  for (const char* name : {"index", "index.lock", "HEAD", "ORIG_HEAD", "packed-refs", "objects",
                           "rebase-merge", "index.stash.123", "next-index-9.lock", "MERGE_MSG"}) {
    EXPECT_TRUE(ordinary_git_name(name)) << name;
  }
  for (const char* name : {"config", "config.worktree", "commondir", "hooks", "gitdir", "remotes",
                           "branches", "some-future-name"}) {
    EXPECT_FALSE(ordinary_git_name(name)) << name;
  }
}

TEST_F(GitStateTest, TheCheckPutsBackRemovesAndNames) {
  const std::string git = ws_ + "/.git";
  git_state(context());  // makes hooks/, as the plan would
  testing::write_file(git + "/hooks/pre-commit.sample", "#!/bin/sh\n", 0755);
  const GitGuard guard = GitGuard::before(context(false));
  testing::write_file(git + "/config", "[core]\n\tfsmonitor = evil\n");
  testing::write_file(git + "/commondir", "../evil\n");
  testing::write_file(git + "/hooks/pre-commit", "#!/bin/sh\nevil\n", 0755);
  testing::write_file(git + "/index", "ordinary");
  testing::write_file(git + "/ORIG_HEAD", "ordinary");
  make_repo(ws_ + "/made/.git");
  const std::vector<std::string> lines = guard.settle();
  EXPECT_EQ(testing::read_file(git + "/config"), "[core]\n");
  EXPECT_FALSE(testing::exists(git + "/commondir"));
  EXPECT_FALSE(testing::exists(git + "/hooks/pre-commit"));
  EXPECT_TRUE(testing::exists(git + "/hooks/pre-commit.sample"));
  EXPECT_EQ(testing::read_file(git + "/index"), "ordinary");
  EXPECT_EQ(testing::read_file(git + "/ORIG_HEAD"), "ordinary");
  ASSERT_EQ(lines.size(), 4U) << ::testing::PrintToString(lines);
  EXPECT_EQ(lines[0], "removed \"" + git +
                          "/commondir\" (the run added it to a git directory, "
                          "and git would read it)");
  EXPECT_EQ(lines[1], "put back \"" + git + "/config\" (the run changed it)");
  EXPECT_NE(lines[2].find("/hooks/pre-commit"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find("the run created the git directory \"" + ws_ + "/made/.git\""),
            std::string::npos)
      << lines[3];
}

TEST_F(GitStateTest, TheCheckDoesNotFollowADirectoryTheRunReplacedWithASymlink) {
  make_repo(ws_ + "/sub/.git");
  const GitGuard guard = GitGuard::before(context(false));
  const std::string elsewhere = canonical(dir_.path()) + "/elsewhere";
  make_repo(elsewhere + "/.git", "[core]\n\tmine = 1\n");
  ASSERT_EQ(::rename((ws_ + "/sub").c_str(), (ws_ + "/sub-moved").c_str()), 0);
  ASSERT_EQ(::symlink(elsewhere.c_str(), (ws_ + "/sub").c_str()), 0);
  testing::write_file(elsewhere + "/.git/commondir", "x\n");
  guard.settle();
  EXPECT_EQ(testing::read_file(elsewhere + "/.git/config"), "[core]\n\tmine = 1\n");
  EXPECT_TRUE(testing::exists(elsewhere + "/.git/commondir"));
}

TEST_F(GitStateTest, AScopeServesOneWalkForTheSameRootsAndNothingOutsideIt) {
  {
    const GitWalkScope scope;
    const GitState first = git_state(context());
    make_repo(ws_ + "/later/.git");
    // The check before the run takes the plan's walk: nothing ran in between.
    const GitState again = git_state(context(false));
    EXPECT_EQ(again.pinned, first.pinned);
    EXPECT_FALSE(contains(again.pinned, ws_ + "/later/.git"));
  }
  EXPECT_TRUE(contains(git_state(context()).pinned, ws_ + "/later/.git"));
}

TEST_F(GitStateTest, AKeptWalkThatMadeNothingDoesNotServeOneThatMustMake) {
  const GitWalkScope scope;
  git_state(context(false));
  EXPECT_FALSE(testing::exists(ws_ + "/.git/hooks"));
  git_state(context());
  EXPECT_TRUE(testing::exists(ws_ + "/.git/hooks"));
}

TEST_F(GitStateTest, FindingGitDirectoriesReadsAndMakesNothing) {
  make_repo(ws_ + "/nested/.git", "[core]\n\thooksPath = .husky\n");
  make_repo(ws_ + "/.git/modules/a/b");
  make_dir(ws_ + "/.git/worktrees");
  make_dir(ws_ + "/.git/worktrees/wt");
  const std::vector<std::string> found = git_directories(context());
  for (const std::string& dir : {ws_ + "/.git", ws_ + "/nested/.git", ws_ + "/.git/modules/a/b",
                                 ws_ + "/.git/worktrees/wt"}) {
    EXPECT_TRUE(contains(found, dir)) << dir << ": " << ::testing::PrintToString(found);
  }
  EXPECT_FALSE(testing::exists(ws_ + "/.git/hooks"));
  EXPECT_FALSE(testing::exists(ws_ + "/nested/.husky"));
}

// The search after a run takes a directory's kept entries while its identity and ctime are the
// kept ones: a record that leaves out `old/sub` hides it, until `old` changes. Setting the times
// back (utimensat) is such a change: it moves the ctime.
TEST_F(GitStateTest, TheSearchAfterTheRunListsADirectoryAgainOnceItsCtimeMoved) {
  const std::string old = ws_ + "/old";
  make_repo(old + "/sub/.git");
  const auto info = lstat_of(old);
  ASSERT_TRUE(info.has_value());
  ListedDirs prior;
  prior[old] = {*info, {}};
  EXPECT_FALSE(contains(git_directories(context(), &prior), old + "/sub/.git"));
  const std::array<struct timespec, 2> times = {info->st_atim, info->st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, old.c_str(), times.data(), AT_SYMLINK_NOFOLLOW), 0);
  const auto now = lstat_of(old);
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ(now->st_mtim.tv_nsec, info->st_mtim.tv_nsec);
  EXPECT_TRUE(contains(git_directories(context(), &prior), old + "/sub/.git"));
}

// Only a ctime that lay before the walk's start, by more than the clock's slack and the
// filesystem's granularity, is taken as proof.
TEST_F(GitStateTest, AStampNeedsACtimeBeforeTheStart) {
  const std::string file = ws_ + "/.git/config";
  auto info = lstat_of(file);
  ASSERT_TRUE(info.has_value());
  ChangeClock start = change_clock_now();
  start.realtime = {info->st_ctim.tv_sec + 5, 0};
  ChangeJudge judge(start);
  info->st_ctim = {info->st_ctim.tv_sec, 1};
  EXPECT_TRUE(judge.stamped(*info, file));
  info->st_ctim = {start.realtime.tv_sec, 1};
  EXPECT_FALSE(judge.stamped(*info, file));
  // Whole seconds: the second before the start's may hold a later change, truncated.
  info->st_ctim = {start.realtime.tv_sec - 1, 0};
  EXPECT_FALSE(judge.stamped(*info, file));
  info->st_ctim = {start.realtime.tv_sec - 2, 0};
  EXPECT_TRUE(judge.stamped(*info, file));
  // Another inode than the one the path names now says nothing.
  info->st_ino += 1;
  EXPECT_FALSE(ChangeJudge(start).stamped(*info, file));
}

}  // namespace
}  // namespace dsh::sandbox::policy
