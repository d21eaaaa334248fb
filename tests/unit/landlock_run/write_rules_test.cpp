// SPDX-License-Identifier: Apache-2.0
// The PURE rules of --rule-writes (write_rules.h): git's names, the config allow-list and a
// home's data list. The integration suite proves them with real git; these pin the edges.
#include "write_rules.h"

#include <gtest/gtest.h>

#include <cstring>

namespace landlock_run {
namespace {

bool git(const char* relative, bool moved = false) {
  return git_name_allowed(relative, GitKind::kMain, Change::kCreate, moved);
}

TEST(WriteRules, GitDataNamesAreWritableAndEveryOtherNameIsNot) {
  for (const char* name :
       {"HEAD", "HEAD.lock", "index.lock", "ORIG_HEAD", "packed-refs", "objects/ab/cdef",
        "refs/heads/topic.lock", "logs/HEAD", "rebase-merge/git-rebase-todo", "COMMIT_EDITMSG",
        "config.lock", "hooks/pre-commit.sample", "info/exclude", "worktrees/w/HEAD",
        "worktrees/w/commondir", "modules/m/HEAD", "tAb3dE9"}) {
    EXPECT_TRUE(git(name)) << name;
  }
  for (const char* name : {"config", "config.worktree", "commondir", "gitdir", "hooks/pre-commit",
                           "hooks/x/pre-commit", "info/attributes", "objects/info/alternates",
                           "objects/info/http-alternates", "branches/origin", "annex",
                           "modules/m/config", "modules/m/hooks/post-checkout", "description.d"}) {
    EXPECT_FALSE(git(name)) << name;
  }
  EXPECT_FALSE(git_name_allowed("config.worktree", GitKind::kWorktree, Change::kCreate, false));
  EXPECT_FALSE(git_name_allowed("hooks/pre-commit", GitKind::kWorktree, Change::kCreate, false));
  EXPECT_TRUE(git_name_allowed("gitdir", GitKind::kWorktree, Change::kCreate, false));
}

TEST(WriteRules, ADirectoryMovedIntoAGitDirectoryOnlyLandsInData) {
  EXPECT_FALSE(git("hooks", true));
  EXPECT_FALSE(git("info", true));
  EXPECT_FALSE(git("worktrees/w", true));
  EXPECT_TRUE(git("refs/heads/dir", true));
  EXPECT_TRUE(git("objects/pack", true));
  EXPECT_FALSE(git("objects", true));  // a link named objects could hold alternates
  EXPECT_FALSE(git("objects/info", true));
  EXPECT_FALSE(git("HEAD", true));
  EXPECT_TRUE(git("tAb3dE9", true));  // git init's symlink probe
}

bool safe(const char* text) { return config_text_safe(text, strlen(text)); }

TEST(WriteRules, AConfigIsSafeOnlyWhenEveryKeyIsListed) {
  EXPECT_TRUE(safe("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare\n"));
  EXPECT_TRUE(
      safe("[user]\n\tname = A B\n[branch \"main\"]\n\tremote = origin\n"
           "\tmerge = refs/heads/main\n# note\n"));
  EXPECT_TRUE(safe(""));
  EXPECT_FALSE(safe("[core]\n\tfsmonitor = /tmp/x\n"));
  EXPECT_FALSE(safe("[core]\n\thooksPath = /tmp\n"));
  EXPECT_FALSE(safe("[include]\n\tpath = ../x\n"));
  EXPECT_FALSE(safe("[remote \"o\"]\n\tuploadpack = /tmp/x\n"));
  EXPECT_FALSE(safe("[core.x]\n\tbare = true\n"));          // the deprecated header form
  EXPECT_FALSE(safe("[core]\n\tbare = \\\n fsmonitor\n"));  // a continued line
  EXPECT_FALSE(safe("bare = true\n"));                      // a key outside any section
  EXPECT_FALSE(config_text_safe("[user]\n\tname = a\0x", 18));
}

TEST(WriteRules, AHomesDotEntriesAreReadOnlyButTheDataList) {
  EXPECT_TRUE(home_path_allowed("notes.txt"));
  EXPECT_TRUE(home_path_allowed("src/.hidden"));
  EXPECT_TRUE(home_path_allowed(".cache"));
  EXPECT_TRUE(home_path_allowed(".cache/pip/http/a/b"));
  EXPECT_TRUE(home_path_allowed(".bash_history"));
  EXPECT_FALSE(home_path_allowed(".bashrc"));
  EXPECT_FALSE(home_path_allowed(".gdbinit"));
  EXPECT_FALSE(home_path_allowed(".vim/plugin/x.vim"));
  EXPECT_FALSE(home_path_allowed(".pyenv/shims/python"));
  EXPECT_FALSE(home_path_allowed(".cache/pip/wheels/x.whl"));
  EXPECT_FALSE(home_path_allowed(".cache/pre-commit"));
  EXPECT_FALSE(home_path_allowed(".local/bin/ls"));
  EXPECT_FALSE(home_path_allowed("bin/ls"));
  EXPECT_TRUE(home_path_allowed("binaries/x"));
}

}  // namespace
}  // namespace landlock_run
