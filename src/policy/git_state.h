// SPDX-License-Identifier: Apache-2.0
// The git state beneath the writable roots of one call: every repository at or below a root
// (nested clones, submodules, linked worktrees, bare repositories found by their layout), and
// in each of them what a later, unconfined git reads as configuration or executes. Found on the
// host before the run, without running git; the plan keeps it read-only.
#pragma once

#include <sys/stat.h>

#include <ctime>
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

// The clocks read when a walk starts. Every change to an inode (a write, a chmod, a rename onto
// its name, an entry added to or removed from a directory) sets its ctime to the kernel's
// current time, which no process can set back (utimensat(2) sets only atime and mtime, and moves
// ctime to now) and which is never earlier than CLOCK_REALTIME_COARSE read before it (the clock
// the kernel stamps inodes with, with or without the fine-grained ctime of Linux 6.13). So an
// inode whose ctime, read after the walk started, lies before the start, and which still has
// that ctime, that identity and that size later, has not changed in between: what was read of it
// then is what it holds now.
struct ChangeClock {
  struct timespec realtime {};
  struct timespec monotonic {};
};
ChangeClock change_clock_now();

// Whether `info` (read after `start`) is such an inode: on a filesystem whose times the local
// kernel sets (ext4, xfs, btrfs, tmpfs: not a network or FUSE filesystem, whose server stamps
// with its own clock), with a ctime before `start` by more than the filesystem's granularity
// (a ctime with nanoseconds proves the nanosecond one these have; without, a second is assumed).
// Anything else is read again. `path` names it for the filesystem's type, asked once per device.
class ChangeJudge {
 public:
  explicit ChangeJudge(ChangeClock start) : start_(start) {}
  bool stamped(const struct stat& info, const std::string& path);
  bool stamped_at(const struct stat& info, int fd);
  // After the run: whether the real-time clock kept pace with the monotonic one since the start
  // (it was not stepped back, which would let a change carry an earlier ctime). When it did not,
  // nothing is taken as unchanged.
  bool clock_kept_pace() const;

 private:
  bool stamped_on(const struct stat& info, bool trusted_fs) const;
  ChangeClock start_;
  std::map<dev_t, bool> trusted_;
};

// The same inode, with the same type, mode, size and ctime: unchanged since `then` was read
// (when ChangeJudge::stamped said so of `then`).
bool same_ctime(const struct stat& then, const struct stat& now);

// What the search for git directories uses of one directory it listed (its subdirectories and
// any `.git` or `HEAD`), kept with the directory's identity and ctime when ChangeJudge::stamped
// it: the search after the run takes these instead of listing a directory that has not changed.
struct ListedDir {
  struct stat info {};
  std::vector<std::pair<std::string, unsigned char>> entries;
};
using ListedDirs = std::map<std::string, ListedDir>;

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
  // When the walk started, and the directories it listed that had not changed for a while then.
  ChangeClock walk_start;
  ListedDirs listed;
};

// At most this many directories are listed to find nested repositories; a larger tree is refused
// rather than left partly unprotected.
inline constexpr std::size_t kMaxGitWalkDirectories = 100000;

// bwrap resolves both paths and re-reads the whole mount table for every bind, so a run's start
// grows with the square of its binds: the git directories of the writable roots' own
// repositories are always bound, and nested ones, shallowest first, until this many are; the
// rest are left to the check after the run, as every repository is on Landlock alone
// (docs/benchmarks.md, git state, has what each budget costs).
inline constexpr std::size_t kMaxBoundGitDirs = 4;

GitState git_state(const GitStateContext& context);

// Every git directory at or below `context.walk_roots` inside a writable root (what
// GitState::pinned and guarded_git_dirs list together), found by the same walk without reading
// any config or creating anything: the check after a run looks for repositories it made. A
// directory `prior` holds whose identity and ctime are still the ones kept is not listed again:
// its kept entries stand for it (each subdirectory is still looked at, and listed if it changed).
std::vector<std::string> git_directories(const GitStateContext& context,
                                         const ListedDirs* prior = nullptr);

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
