// SPDX-License-Identifier: Apache-2.0
// --rule-writes (with --evidence): the rules a write-class call beneath a writable root must pass
// before the supervisor performs it itself, relative to the directory it pinned (supervisor.h).
// They protect what a later unconfined tool reads as configuration or runs, and each is written
// so that a name it forgot is refused:
// - git directories, found by layout at any depth (a directory named .git; one holding objects/
//   and refs/; one holding HEAD and commondir, a linked worktree's), including ones made during
//   the run: git's own data names are writable, every other name is not. A directory that is
//   about to become a git directory (it gets the last of those names, or is renamed to .git) must
//   hold nothing but what git init writes there first.
// - config: a new content is accepted only as a whole file renamed into place (git's config.lock
//   -> config) whose every key is on a short list (git init's core keys, user identity, branch
//   tracking); the supervisor writes a copy of the checked bytes, so a descriptor the command
//   kept on the lock file cannot change config afterwards.
// - an existing .git file (a linked worktree's or a submodule's pointer) stays as it is.
// - homes (--rule-home DIR): every dot-entry directly in DIR and everything beneath it, and
//   ~/bin, are read-only, except the data list kHomeDataPaths; judged on the path a call spelled
//   as well as on the object it reaches.
// The PURE parts (names, config text) are unit-tested; the rest reads the pinned directories.
#pragma once

#include <stddef.h>

namespace landlock_run {

// What a call does to the name it targets.
enum class Change {
  kCreate,  // a new name: create, mkdir, mknod, symlink, link, or a rename's target
  kWrite,   // an existing file opened for writing or truncated
  kRemove,  // unlink, rmdir, or a rename's source
};

// A git directory's kind, which decides the names it may hold.
enum class GitKind { kMain, kWorktree };

// PURE. Whether `relative` (a path beneath a git directory of `kind`, no leading slash, "/"
// separated, no "." or ".." components) may undergo `change`. `moved_directory`: the object is (or,
// for kCreate, will be) a directory that arrives with contents (a rename of a directory) or a
// symbolic link, which leads elsewhere.
bool git_name_allowed(const char* relative, GitKind kind, Change change, bool moved_directory);

// PURE. Whether `text` (`size` bytes) is a git config whose every entry is on the safe list.
bool config_text_safe(const char* text, size_t size);

// PURE. Whether `relative` (beneath a home, no leading slash) may be written: not beneath a
// dot-entry, or beneath one on the data list.
bool home_path_allowed(const char* relative);

// Whether the home rule lets `path` (absolute, as spelled: "." and ".." taken lexically) be
// written: false beneath a dot-entry of one of `homes` outside the data list. Checked on the
// path a call spelled as well as on the object it reaches, so a dot-entry that is a link (a
// dangling ~/.zshrc, a ~/.config kept elsewhere) is not written through.
bool home_allows(const char* path, const char* const* homes, size_t home_count);

// Whether `directory` (an open directory) is a git directory by layout or by its name.
bool is_git_directory(int directory);

// rule_verdict's answer for a git config (config, config.worktree) taking a new content: allowed
// only as commit_config's checked copy of a renamed file.
inline constexpr int kConfigCopyOnly = -1;

// The verdict on `change` of `name` in the pinned directory `parent` whose canonical path is
// `parent_path`: 0 when the rules allow it, kConfigCopyOnly, else the errno to answer (EACCES).
// `homes` are the
// --rule-home directories. `moved_directory`: a rename of a directory or a link, or a new link.
int rule_verdict(int parent, const char* parent_path, const char* name, Change change,
                 bool moved_directory, const char* const* homes, size_t home_count);

// Whether a directory `directory` that is about to become a git directory holds only what git init
// writes before it (description, hooks/*.sample, info/exclude, branches/, refs/, HEAD, a safe
// config, which is then replaced by a copy of itself): 0 or the errno to answer.
int vet_new_git_directory(int directory);

// rename(`parent`/`source` -> `parent`/"config") in a git directory: performed as a copy of the
// checked bytes when they are a safe config (0), else the errno to answer.
int commit_config(int source_parent, const char* source, int target_parent, const char* target);

}  // namespace landlock_run
