// SPDX-License-Identifier: Apache-2.0
// The git state beneath the writable roots of one call: every repository at or below a root
// (nested clones, submodules, linked worktrees, bare repositories found by their layout), and
// in each of them what a later, unconfined git reads as configuration or executes. Found on the
// host before the run, without running git; the plan keeps it read-only.
#pragma once

#include <sys/stat.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "policy/path_defaults.h"

namespace dsh::sandbox::policy {

struct GitStateContext {
  std::vector<std::string> writable_roots;  // canonical, existing directories
  // The roots walked for repositories: the workspace and the extra writable roots, not the
  // cache presets' directories (a tool's cache, such as cargo's bare git checkouts, holds
  // repositories only that tool uses, and may hold more directories than the walk's bound).
  std::vector<std::string> walk_roots;
  std::string home;  // for "~/" in config values; empty: none
  EnvLookup env;     // XDG_CONFIG_HOME, for the global config
  // Create what git would create itself, so it can be bound read-only instead of being
  // creatable: a missing hooks directory, a missing core.hooksPath directory, a missing include
  // target, a missing config.worktree where the repository reads one.
  bool create_missing = true;
};

struct GitState {
  // Git directories inside a writable root, bound onto themselves: a mount point cannot be
  // renamed or removed (EBUSY), so none can be moved aside for a planted one.
  std::vector<std::string> pinned;
  // Existing paths to keep read-only (canonical; some may lie outside every writable root).
  std::vector<std::string> read_only;
  // The same for the repositories past kMaxBoundGitDirs: left to the check after the run
  // (git_guard.h), which covers every repository, bound or not.
  std::vector<std::string> guarded_git_dirs;
  std::vector<std::string> guarded_read_only;
  // A walk over its bound, or a hook with a second hard link: the call is refused.
  std::optional<std::string> error;
  // What the walk saw of each path it listed above (its lstat; a config's text; the entries of
  // a hooks directory), so the check before the run, in the same call, need not look again.
  struct Seen {
    struct stat info {};
    std::optional<std::string> text;
    std::optional<std::vector<std::string>> names;
  };
  std::map<std::string, Seen> seen;
};

// At most this many directories are listed to find nested repositories; a larger tree is refused
// rather than left partly unprotected.
inline constexpr std::size_t kMaxGitWalkDirectories = 100000;

// bwrap reads the whole mount table for every bind, so a run's start grows with the square of
// its binds (about 100 ms for 200): the git directories of the writable roots' own
// repositories are always bound, and nested ones, shallowest first, until this many are.
inline constexpr std::size_t kMaxBoundGitDirs = 16;

GitState git_state(const GitStateContext& context);

// Every git directory at or below `context.walk_roots` inside a writable root (what
// GitState::pinned and guarded_git_dirs list together), found by the same walk without reading
// any config or creating anything: the check after a run looks for repositories it made.
std::vector<std::string> git_directories(const GitStateContext& context);

// While one lives on this thread, git_state() keeps what it found and gives it back to a later
// call for the same walk roots and home (and writable roots that the kept walk covered): the
// plan's walk, which makes what is missing, serves the check before the run too. Open one only
// around steps of one call that run nothing in between (confine, then GitGuard::before), never
// around a run or across calls: a command changes the tree, and nothing is kept on disk.
class GitWalkScope {
 public:
  GitWalkScope();
  ~GitWalkScope();
  GitWalkScope(const GitWalkScope&) = delete;
  GitWalkScope& operator=(const GitWalkScope&) = delete;
  GitWalkScope(GitWalkScope&&) = delete;
  GitWalkScope& operator=(GitWalkScope&&) = delete;

  struct Kept {
    GitStateContext context;
    GitState state;
  };
  // What an open scope of this thread kept for `context`, or nullptr.
  static const GitState* find(const GitStateContext& context);
  static void keep(const GitStateContext& context, const GitState& state);

 private:
  GitWalkScope* outer_;
  std::vector<Kept> kept_;
};

// The values of `name` in section `section` (both lower case; a subsection is ignored) of a git
// config text: `[section] name = value`, `[section "sub"]`, `[section.sub]`, a key on the header's
// line, quotes and trailing comments.
std::vector<std::string> git_config_values(const std::string& text, std::string_view section,
                                           std::string_view name);

}  // namespace dsh::sandbox::policy
