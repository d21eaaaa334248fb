// SPDX-License-Identifier: Apache-2.0
// The check after a confined run (git_guard.h). Every path it saved is canonical, and every look,
// removal and write back is made relative to the descriptor of its parent directory, opened one
// component at a time from / without following a symlink: a run that replaced a directory on the
// way with a symlink cannot steer a removal or a write elsewhere, nor can a confined job of
// another call that is still running and swaps a directory while the check works.
#include "policy/git_guard.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "base/io.h"
#include "base/text.h"
#include "base/unique_fd.h"
#include "dsh/sandbox/roots.h"
#include "policy/effective_policy.h"
#include "policy/host_paths.h"

namespace dsh::sandbox::policy {

namespace {

// The top-level names git's ordinary work writes in a git directory (and in a linked worktree's
// administrative directory): state, references, objects, logs, and the transient files of a
// commit, merge, rebase, cherry-pick, revert, bisect, stash, fetch and gc. `info/` holds
// attributes and excludes, no more than the worktree's own .gitattributes and .gitignore can
// say; `modules/` and `worktrees/` hold git directories, checked by their own layout.
constexpr std::array<std::string_view, 47> kOrdinaryNames = {"HEAD",
                                                             "ORIG_HEAD",
                                                             "FETCH_HEAD",
                                                             "MERGE_HEAD",
                                                             "MERGE_MSG",
                                                             "MERGE_MODE",
                                                             "MERGE_RR",
                                                             "MERGE_AUTOSTASH",
                                                             "AUTO_MERGE",
                                                             "CHERRY_PICK_HEAD",
                                                             "REVERT_HEAD",
                                                             "REBASE_HEAD",
                                                             "BISECT_LOG",
                                                             "BISECT_START",
                                                             "BISECT_TERMS",
                                                             "BISECT_NAMES",
                                                             "BISECT_EXPECTED_REV",
                                                             "BISECT_ANCESTORS_OK",
                                                             "BISECT_RUN",
                                                             "BISECT_HEAD",
                                                             "BISECT_FIRST_PARENT",
                                                             "COMMIT_EDITMSG",
                                                             "SQUASH_MSG",
                                                             "TAG_EDITMSG",
                                                             "NOTES_EDITMSG",
                                                             "NOTES_MERGE_PARTIAL",
                                                             "NOTES_MERGE_REF",
                                                             "NOTES_MERGE_WORKTREE",
                                                             "EDIT_DESCRIPTION",
                                                             "index",
                                                             "packed-refs",
                                                             "shallow",
                                                             "description",
                                                             "gc.pid",
                                                             "gc.log",
                                                             "objects",
                                                             "refs",
                                                             "logs",
                                                             "info",
                                                             "rebase-merge",
                                                             "rebase-apply",
                                                             "sequencer",
                                                             "rr-cache",
                                                             "worktrees",
                                                             "modules",
                                                             "lfs",
                                                             "locked"};

// A regular file larger than this is not kept: a config or a hook is a few kilobytes.
constexpr std::size_t kMaxSavedBytes = std::size_t{64} * 1024;

std::optional<std::string> file_bytes(const std::string& path, const struct stat& info) {
  if (!S_ISREG(info.st_mode) || static_cast<std::size_t>(info.st_size) > kMaxSavedBytes) {
    return std::nullopt;
  }
  return read_small(path);
}

// A sample hook is never run (git runs only the exact hook name), whatever it holds: it is
// neither kept nor checked, which spares a stat per sample in every repository.
bool inert(std::string_view name) { return name.ends_with(".sample"); }

// Hook directories are flat, but a core.hooksPath directory may hold a helper its hooks source
// (husky's `_/husky.sh`): a few levels are kept.
constexpr int kMaxSavedDepth = 4;

// `path` as it is now; `seen`, when given, is what the walk of this call saw of it a moment ago
// (nothing ran in between): its lstat, a config's text, a hooks directory's entries.
SavedPath save(const std::string& path, int depth, ChangeJudge& judge,
               const GitState::Seen* seen = nullptr) {
  SavedPath saved{path};
  const auto info = seen != nullptr ? std::optional<struct stat>(seen->info) : lstat_of(path);
  if (!info) return saved;
  saved.exists = true;
  saved.mode = info->st_mode;
  saved.dev = info->st_dev;
  saved.ino = info->st_ino;
  saved.size = info->st_size;
  saved.mtime = info->st_mtim;
  saved.ctime = info->st_ctim;
  saved.stamped = judge.stamped(*info, path);
  // The walk's text stands for the file when it is all of it (a failed read left it empty).
  const bool whole = seen != nullptr && seen->text && S_ISREG(info->st_mode) &&
                     seen->text->size() == static_cast<std::size_t>(info->st_size) &&
                     seen->text->size() <= kMaxSavedBytes;
  saved.bytes = whole ? seen->text : file_bytes(path, *info);
  if (S_ISDIR(info->st_mode) && depth < kMaxSavedDepth) {
    std::vector<std::string> names;
    if (seen != nullptr && seen->names) {
      names = *seen->names;
      std::sort(names.begin(), names.end());
    } else {
      names = directory_names(path);
    }
    for (const std::string& name : names) {
      if (inert(name)) continue;
      saved.children.push_back(save(join_path(path, name), depth + 1, judge));
    }
  }
  return saved;
}

// The names in the directory open at `dir_fd`, rewound first.
std::vector<std::string> names_in(int dir_fd) {
  std::vector<std::string> names;
  if (::lseek(dir_fd, 0, SEEK_SET) != 0) return names;
  for (auto& [name, type] : entries_at(dir_fd)) names.push_back(std::move(name));
  return names;
}

// Deeper than this, a tree the run made is left (and said): the removal's own recursion and
// descriptors stay bounded whatever the run built.
constexpr int kMaxRemovedDepth = 64;

// Removes the entry `name` of the directory open at `dir_fd` and everything beneath it, every
// step relative to a descriptor: no symlink is followed, whatever the tree holds.
bool remove_entry(int dir_fd, const std::string& name, int depth) {
  struct stat info {};
  if (::fstatat(dir_fd, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) return true;
  if (!S_ISDIR(info.st_mode)) return ::unlinkat(dir_fd, name.c_str(), 0) == 0;
  if (depth >= kMaxRemovedDepth) return false;
  const UniqueFd child(
      ::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (child.get() < 0) return false;
  bool all = true;
  for (const std::string& inner : names_in(child.get())) {
    all = remove_entry(child.get(), inner, depth + 1) && all;
  }
  return all && ::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) == 0;
}

std::string last_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// Writes `bytes` as `name` with `mode` in the directory open at `parent`, through a new file
// renamed into place.
bool write_back(int parent, const std::string& name, const std::string& bytes, mode_t mode) {
  constexpr const char* kTemporary = ".dsh-sandbox-restore";
  (void)remove_entry(parent, kTemporary, 0);
  const UniqueFd fd(::openat(parent, kTemporary,
                             O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 07777));
  if (fd.get() < 0) return false;
  const bool written =
      io::write_all(fd.get(), bytes) == bytes.size() && ::fchmod(fd.get(), mode & 07777) == 0;
  if (!written || ::renameat(parent, kTemporary, parent, name.c_str()) != 0) {
    ::unlinkat(parent, kTemporary, 0);
    return false;
  }
  return true;
}

// Directories opened one component at a time from / with O_NOFOLLOW: each descriptor is the
// directory its path names now, reached through no symlink. The chain of the last path asked
// for stays open, and the next path starts from its deepest ancestor there: taken in sorted
// order, 200 repositories cost a few openat calls each, and at most one path's depth of
// descriptors is open at once. A descriptor stays valid while later calls ask for paths
// beneath it.
class OpenDirectories {
 public:
  // The directory `path` (canonical), or -1 when a component is missing, not a directory, or a
  // symlink.
  int get(const std::string& path) {
    while (!chain_.empty() && !is_beneath(path, chain_.back().first)) chain_.pop_back();
    if (chain_.empty()) {
      UniqueFd root(::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (root.get() < 0) return -1;
      chain_.emplace_back("/", std::move(root));
    }
    const std::string& reached = chain_.back().first;
    std::size_t start = reached == "/" ? 1 : reached.size() + 1;
    while (start < path.size()) {
      const std::size_t end = std::min(path.find('/', start), path.size());
      const std::string name = path.substr(start, end - start);
      UniqueFd next(::openat(chain_.back().second.get(), name.c_str(),
                             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (next.get() < 0) return -1;
      chain_.emplace_back(path.substr(0, end), std::move(next));
      start = end + 1;
    }
    return chain_.back().second.get();
  }

  // `path` and what lies beneath it are being removed or made again: opened anew when asked.
  void forget(const std::string& path) {
    while (!chain_.empty() && is_beneath(chain_.back().first, path)) chain_.pop_back();
  }

 private:
  std::vector<std::pair<std::string, UniqueFd>> chain_;
};

bool same_file(const SavedPath& saved, const struct stat& now, int parent) {
  if ((now.st_mode & S_IFMT) != (saved.mode & S_IFMT)) return false;
  if (S_ISLNK(now.st_mode)) return now.st_ino == saved.ino && now.st_dev == saved.dev;
  if (now.st_mode != saved.mode) return false;
  if (saved.bytes) return read_small_at(parent, last_name(saved.path)) == *saved.bytes;
  // A directory (its entries are compared one by one), or a file too large to keep.
  return S_ISDIR(now.st_mode) ||
         (now.st_ino == saved.ino && now.st_size == saved.size &&
          now.st_mtim.tv_sec == saved.mtime.tv_sec && now.st_mtim.tv_nsec == saved.mtime.tv_nsec);
}

// Whether a saved path, stamped before the run, still has its identity, size and ctime: then
// neither its bytes nor (for a directory) its entries changed (ChangeClock).
bool unchanged(const SavedPath& saved, const struct stat& now) {
  return saved.stamped && now.st_dev == saved.dev && now.st_ino == saved.ino &&
         now.st_mode == saved.mode && now.st_size == saved.size &&
         now.st_ctim.tv_sec == saved.ctime.tv_sec && now.st_ctim.tv_nsec == saved.ctime.tv_nsec;
}

// Every path the check touches is reached through `dirs`: its parent opened without following
// a symlink, and every look, removal and write back made relative to that descriptor.
struct Settler {
  std::vector<std::string> lines;
  OpenDirectories dirs;
  // Whether a stamp may prove a path unchanged (the clock was not stepped back meanwhile).
  bool stamps = false;

  std::optional<struct stat> stat_at(int parent, const std::string& path) const {
    struct stat info {};
    if (::fstatat(parent, last_name(path).c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
      return std::nullopt;
    }
    return info;
  }

  // Removes `path` and, for a directory, everything beneath it.
  bool remove_tree(int parent, const std::string& path) {
    dirs.forget(path);
    return remove_entry(parent, last_name(path), 0);
  }

  void removed(int parent, const std::string& path, std::string_view why) {
    if (remove_tree(parent, path)) {
      lines.push_back(fmt::format("removed {} ({})", text::quoted(path), why));
    } else {
      lines.push_back(fmt::format("{} ({}) could not be removed: read it before running git there",
                                  text::quoted(path), why));
    }
  }

  // A saved regular file (or a missing one) as it was.
  void settle_file(int parent, const SavedPath& saved) {
    const auto now = stat_at(parent, saved.path);
    if (!saved.exists) {
      if (now) removed(parent, saved.path, "the run created it, and git would read it");
      return;
    }
    if (now && ((stamps && unchanged(saved, *now)) || same_file(saved, *now, parent))) return;
    if (!saved.bytes) {
      lines.push_back(
          fmt::format("{} was changed by the run and is too large to put back; read it "
                      "before running git there",
                      text::quoted(saved.path)));
      return;
    }
    if (now && S_ISDIR(now->st_mode)) remove_tree(parent, saved.path);
    if (write_back(parent, last_name(saved.path), *saved.bytes, saved.mode)) {
      lines.push_back(fmt::format("put back {} (the run changed it)", text::quoted(saved.path)));
    } else {
      lines.push_back(
          fmt::format("{} was changed by the run and could not be put back; read it "
                      "before running git there",
                      text::quoted(saved.path)));
    }
  }

  void settle_directory(int parent, const SavedPath& saved) {
    const auto now = stat_at(parent, saved.path);
    // No entry was added, removed or renamed: each saved one is still looked at.
    const bool same_entries = now && stamps && unchanged(saved, *now);
    if (same_entries && saved.children.empty()) return;
    if (!now || !S_ISDIR(now->st_mode)) {
      if (now) remove_tree(parent, saved.path);
      dirs.forget(saved.path);
      if (::mkdirat(parent, last_name(saved.path).c_str(), saved.mode & 07777) != 0) {
        lines.push_back(fmt::format("{} was replaced by the run and could not be made again",
                                    text::quoted(saved.path)));
        return;
      }
      lines.push_back(fmt::format("made {} again (the run replaced it)", text::quoted(saved.path)));
    }
    const int dir = dirs.get(saved.path);
    if (dir < 0) {
      lines.push_back(
          fmt::format("{} could not be opened after the run; read it before running "
                      "git there",
                      text::quoted(saved.path)));
      return;
    }
    std::set<std::string> known;
    for (const SavedPath& child : saved.children) {
      known.insert(last_name(child.path));
      settle_entry(dir, child);
    }
    if (same_entries) return;
    for (const std::string& name : names_in(dir)) {
      if (!inert(name) && !known.contains(name)) {
        removed(dir, join_path(saved.path, name), "the run added it, and git would run or read it");
      }
    }
  }

  void settle_entry(int parent, const SavedPath& saved) {
    if (saved.exists && S_ISDIR(saved.mode)) {
      settle_directory(parent, saved);
    } else {
      settle_file(parent, saved);
    }
  }

  void settle(const SavedPath& saved) {
    const int parent = dirs.get(parent_of(saved.path));
    if (parent < 0) {
      lines.push_back(fmt::format(
          "the directory holding {} was replaced by the run; nothing was put back there: read it "
          "before running git there",
          text::quoted(saved.path)));
      return;
    }
    settle_entry(parent, saved);
  }

  void settle_git_dir(const SavedGitDir& dir) {
    // Listed and cleaned through one descriptor of the directory the path names now: a git
    // directory the run replaced (by a symlink to elsewhere, or another directory) is left alone.
    const int fd = dirs.get(dir.path);
    if (fd < 0) {
      // Gone with its parent, or gone itself (a run may remove a repository): nothing to clean.
      const int parent = dirs.get(parent_of(dir.path));
      if (parent < 0 || !stat_at(parent, dir.path)) return;
    }
    struct stat now {};
    if (fd < 0 || ::fstat(fd, &now) != 0 || now.st_dev != dir.info.st_dev ||
        now.st_ino != dir.info.st_ino) {
      lines.push_back(fmt::format(
          "the git directory {} was replaced by the run (the one it held was moved or removed); "
          "nothing was removed there: read it before running git there",
          text::quoted(dir.path)));
      return;
    }
    if (stamps && dir.stamped && same_ctime(dir.info, now)) return;  // no entry added
    for (const std::string& name : names_in(fd)) {
      if (dir.names.contains(name) || ordinary_git_name(name)) continue;
      if (remove_entry(fd, name, 0)) {
        lines.push_back(
            fmt::format("removed {} (the run added it to a git directory, and git would read it)",
                        text::quoted(join_path(dir.path, name))));
      } else {
        lines.push_back(
            fmt::format("{} was added to a git directory by the run and could not be "
                        "removed: read it before running git there",
                        text::quoted(join_path(dir.path, name))));
      }
    }
  }
};

// Every git directory inside a writable root, bound or left to this check.
std::vector<std::string> git_dirs_of(const GitState& state) {
  std::vector<std::string> dirs = state.pinned;
  dirs.insert(dirs.end(), state.guarded_git_dirs.begin(), state.guarded_git_dirs.end());
  return dirs;
}

}  // namespace

bool ordinary_git_name(std::string_view name) {
  if (std::find(kOrdinaryNames.begin(), kOrdinaryNames.end(), name) != kOrdinaryNames.end()) {
    return true;
  }
  // Lock files (git writes NAME.lock and renames it over NAME), the stash's and a partial
  // commit's temporary indexes.
  return name.ends_with(".lock") || name.starts_with("index.stash.") ||
         name.starts_with("next-index-");
}

GitGuard GitGuard::before(GitStateContext context, const std::vector<std::string>& lifted) {
  context.create_missing = false;
  GitGuard guard;
  GitState state = git_state(context);
  ChangeJudge judge(state.walk_start);
  const auto beneath_any = [](const std::string& path, const std::vector<std::string>& roots) {
    return std::any_of(roots.begin(), roots.end(),
                       [&](const std::string& root) { return is_beneath(path, root); });
  };
  std::vector<std::string> paths = state.read_only;
  paths.insert(paths.end(), state.guarded_read_only.begin(), state.guarded_read_only.end());
  for (const std::string& path : paths) {
    if (beneath_any(path, context.writable_roots) && !beneath_any(path, lifted)) {
      const auto seen = state.seen.find(path);
      guard.saved_.push_back(
          save(path, 0, judge, seen == state.seen.end() ? nullptr : &seen->second));
    }
  }
  for (const std::string& dir : git_dirs_of(state)) {
    if (beneath_any(dir, lifted)) continue;
    // The walk listed it a moment ago (nothing ran in between), unless it made something since.
    const auto seen = state.seen.find(dir);
    const bool listed = seen != state.seen.end() && seen->second.names;
    const auto info = listed ? std::optional<struct stat>(seen->second.info) : lstat_of(dir);
    if (!info) continue;
    const std::vector<std::string> names = listed ? *seen->second.names : directory_names(dir);
    guard.git_dirs_.push_back(
        {dir, *info, judge.stamped(*info, dir), {names.begin(), names.end()}});
    guard.known_.insert(dir);
  }
  // In path order, the check after the run reopens only what two neighbours do not share.
  const auto by_path = [](const auto& a, const auto& b) { return a.path < b.path; };
  std::sort(guard.saved_.begin(), guard.saved_.end(), by_path);
  std::sort(guard.git_dirs_.begin(), guard.git_dirs_.end(), by_path);
  guard.context_ = std::move(context);
  guard.start_ = state.walk_start;
  guard.listed_ = std::move(state.listed);
  return guard;
}

std::optional<GitGuard> GitGuard::for_run(const SandboxExecutionPolicy& policy) {
  if (policy.mode != SandboxMode::kWorkspaceWrite) return std::nullopt;
  std::vector<std::string> roots = {policy.workspace_root};
  for (const std::string& entry : policy.allow_write) {
    if (auto path = existing_canonical(entry)) roots.push_back(*path);
  }
  std::vector<std::string> lifted;
  for (const std::string& entry : policy.deny_write) {
    if (!entry.starts_with('!')) continue;
    const std::string path = lexically_normalize(entry.substr(1));
    lifted.push_back(existing_canonical(path).value_or(path));
  }
  const PathContext context = process_path_context();
  return before({roots, roots, context.home, context.env, false}, lifted);
}

std::optional<GitGuard> GitGuard::for_run(const SandboxExecutionPolicy& policy,
                                          const ConfinedArgv& confined) {
  const bool ruled = std::find(confined.layers.begin(), confined.layers.end(),
                               RunnerLayer::kLandlockRun) != confined.layers.end();
  if (ruled) return std::nullopt;
  return for_run(policy);
}

std::vector<std::string> GitGuard::settle() const {
  Settler settler;
  settler.stamps = ChangeJudge(start_).clock_kept_pace();
  // Both lists in path order, merged: a repository's git directory and its saved files are
  // reached through the same open directories.
  std::size_t dir = 0;
  std::size_t path = 0;
  while (dir < git_dirs_.size() || path < saved_.size()) {
    if (path == saved_.size() ||
        (dir < git_dirs_.size() && git_dirs_[dir].path <= saved_[path].path)) {
      settler.settle_git_dir(git_dirs_[dir++]);
    } else {
      settler.settle(saved_[path++]);
    }
  }
  for (const std::string& made : git_directories(context_, settler.stamps ? &listed_ : nullptr)) {
    if (known_.contains(made)) continue;
    settler.lines.push_back(
        fmt::format("the run created the git directory {}: its config and hooks are the "
                    "command's; read them before running git there",
                    text::quoted(made)));
  }
  return settler.lines;
}

}  // namespace dsh::sandbox::policy
