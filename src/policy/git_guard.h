// SPDX-License-Identifier: Apache-2.0
// The check after a confined run: git state the run changed is put back, and a name git would
// read that the run added to a git directory is removed. It is what holds on Landlock alone
// (whose grants cannot carve a file out of a writable root) and for the names bwrap cannot bind
// because they do not exist yet (a planted `commondir`); under bwrap the read-only binds have
// already kept the rest unchanged. See docs/boundary.md, "What a run can leave behind".
#pragma once

#include <sys/stat.h>
#include <sys/types.h>
#include <ctime>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dsh/sandbox/confined_argv.h"
#include "dsh/sandbox/policy.h"
#include "policy/git_state.h"

namespace dsh::sandbox::policy {

// The state of one protected path before the run.
struct SavedPath {
  std::string path;
  bool exists = false;
  mode_t mode = 0;
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  struct timespec mtime {};
  struct timespec ctime {};
  // ChangeJudge::stamped: the same identity, size and ctime after the run prove it unchanged.
  bool stamped = false;
  std::optional<std::string> bytes;  // a regular file's content, when small enough to keep
  std::vector<SavedPath> children;   // a directory's entries (one level: hooks are flat)
};

// A git directory inside a writable root, with the names its top level held.
struct SavedGitDir {
  std::string path;
  struct stat info {};
  bool stamped = false;  // as SavedPath::stamped
  std::set<std::string> names;
};

class GitGuard {
 public:
  // The git state beneath `context.walk_roots` as it is now; nothing is created. What lies
  // beneath a `lifted` path (a `!PATH` entry of deny_write) is left to the run.
  static GitGuard before(GitStateContext context, const std::vector<std::string>& lifted = {});

  // The guard of a workspace-write run (the workspace and the extra writable roots, `~/` from
  // $HOME), or nullopt for any other mode.
  static std::optional<GitGuard> for_run(const SandboxExecutionPolicy& policy);
  // The same for a run confined as `confined`: nullopt when its chain holds landlock-run, whose
  // supervisor refuses git's configuration and hooks at the call under workspace-write
  // (--rule-writes), so there is nothing to put back and nothing a SIGKILL could skip. Kept for
  // a chain without it (bwrap alone, an operator's runnerCommand).
  static std::optional<GitGuard> for_run(const SandboxExecutionPolicy& policy,
                                         const ConfinedArgv& confined);

  // After the run (its whole tree gone): what changed is undone and each undoing described, as
  // plain text naming the path (quoted: the names are the command's). A repository the run
  // created is named, not changed: its config and hooks are the command's.
  std::vector<std::string> settle() const;

 private:
  GitStateContext context_;
  std::vector<SavedPath> saved_;
  std::vector<SavedGitDir> git_dirs_;
  std::set<std::string> known_;  // every git directory found before the run
  // When the walk this guard took started, and the directories it listed (git_directories).
  ChangeClock start_;
  ListedDirs listed_;
};

// Whether ordinary git work (add, commit, branch, checkout, merge, rebase, stash, fetch, gc)
// makes `name` in the top level of a git directory. Everything else there is configuration,
// a pointer git follows, or unknown, and a run may not add it.
bool ordinary_git_name(std::string_view name);

}  // namespace dsh::sandbox::policy
