// SPDX-License-Identifier: Apache-2.0
// The check after a confined run (git_guard.h). Every path it saved is canonical, and before it
// touches one it checks that the path's parent still resolves to itself, and every removal and
// write back is made relative to a directory descriptor opened one component at a time from /
// without following a symlink: a run that replaced a directory on the way with a symlink cannot
// steer a removal or a write elsewhere, nor can a confined job of another call that is still
// running and swaps a directory while the check works.
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

std::string parent_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? std::string("/") : path.substr(0, slash);
}

// The path's parent still is the directory it was: no symlink was put on the way.
bool parent_intact(const std::string& path) {
  const std::string parent = parent_of(path);
  return existing_canonical(parent) == parent;
}

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

SavedPath save(const std::string& path, int depth) {
  SavedPath saved{path};
  const auto info = lstat_of(path);
  if (!info) return saved;
  saved.exists = true;
  saved.mode = info->st_mode;
  saved.dev = info->st_dev;
  saved.ino = info->st_ino;
  saved.size = info->st_size;
  saved.mtime = info->st_mtim;
  saved.bytes = file_bytes(path, *info);
  if (S_ISDIR(info->st_mode) && depth < kMaxSavedDepth) {
    for (const std::string& name : directory_names(path)) {
      if (inert(name)) continue;
      saved.children.push_back(save(join_path(path, name), depth + 1));
    }
  }
  return saved;
}

// `path`, a directory, opened one component at a time from / with O_NOFOLLOW: the descriptor is
// the directory the path names now, reached through no symlink (-1 otherwise).
UniqueFd open_directory_nofollow(const std::string& path) {
  UniqueFd dir(::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  std::size_t start = 1;
  while (dir.get() >= 0 && start < path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string name = path.substr(start, end - start);
    start = end + 1;
    if (name.empty()) continue;
    dir = UniqueFd(
        ::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  }
  return dir;
}

// The entries of the directory open at `dir_fd`, "." and ".." left out.
std::vector<std::string> names_in(int dir_fd) {
  std::vector<std::string> names;
  const int copy = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (copy < 0) return names;
  DIR* stream = ::fdopendir(copy);
  if (stream == nullptr) {
    ::close(copy);
    return names;
  }
  // readdir(3) is safe on a stream no other thread holds (this one is local), which is all POSIX
  // leaves unspecified.
  while (const dirent* entry = ::readdir(stream)) {  // NOLINT(concurrency-mt-unsafe)
    const std::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  ::closedir(stream);
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

// Removes `path` and, for a directory, everything beneath it, following no symlink on the way to
// it or inside it.
void remove_tree(const std::string& path) {
  const UniqueFd parent = open_directory_nofollow(parent_of(path));
  if (parent.get() >= 0) (void)remove_entry(parent.get(), last_name(path), 0);
}

// Writes `bytes` at `path` with `mode`, through a new file renamed into place, both relative to
// the parent opened without following a symlink.
bool write_back(const std::string& path, const std::string& bytes, mode_t mode) {
  const UniqueFd parent = open_directory_nofollow(parent_of(path));
  if (parent.get() < 0) return false;
  constexpr const char* kTemporary = ".dsh-sandbox-restore";
  (void)remove_entry(parent.get(), kTemporary, 0);
  const UniqueFd fd(::openat(parent.get(), kTemporary,
                             O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 07777));
  if (fd.get() < 0) return false;
  const bool written =
      io::write_all(fd.get(), bytes) == bytes.size() && ::fchmod(fd.get(), mode & 07777) == 0;
  const std::string name = last_name(path);
  if (!written || ::renameat(parent.get(), kTemporary, parent.get(), name.c_str()) != 0) {
    ::unlinkat(parent.get(), kTemporary, 0);
    return false;
  }
  return true;
}

bool same_file(const SavedPath& saved, const struct stat& now) {
  if ((now.st_mode & S_IFMT) != (saved.mode & S_IFMT)) return false;
  if (S_ISLNK(now.st_mode)) return now.st_ino == saved.ino && now.st_dev == saved.dev;
  if (now.st_mode != saved.mode) return false;
  if (saved.bytes) return read_small(saved.path) == *saved.bytes;
  // A directory (its entries are compared one by one), or a file too large to keep.
  return S_ISDIR(now.st_mode) ||
         (now.st_ino == saved.ino && now.st_size == saved.size &&
          now.st_mtim.tv_sec == saved.mtime.tv_sec && now.st_mtim.tv_nsec == saved.mtime.tv_nsec);
}

struct Settler {
  std::vector<std::string> lines;

  void removed(const std::string& path, std::string_view why) {
    remove_tree(path);
    lines.push_back(fmt::format("removed {} ({})", text::quoted(path), why));
  }

  // A saved regular file (or a missing one) as it was.
  void settle_file(const SavedPath& saved) {
    const auto now = lstat_of(saved.path);
    if (!saved.exists) {
      if (now) removed(saved.path, "the run created it, and git would read it");
      return;
    }
    if (now && same_file(saved, *now)) return;
    if (!saved.bytes) {
      lines.push_back(
          fmt::format("{} was changed by the run and is too large to put back; read it "
                      "before running git there",
                      text::quoted(saved.path)));
      return;
    }
    if (now && S_ISDIR(now->st_mode)) remove_tree(saved.path);
    if (write_back(saved.path, *saved.bytes, saved.mode)) {
      lines.push_back(fmt::format("put back {} (the run changed it)", text::quoted(saved.path)));
    } else {
      lines.push_back(
          fmt::format("{} was changed by the run and could not be put back; read it "
                      "before running git there",
                      text::quoted(saved.path)));
    }
  }

  void settle_directory(const SavedPath& saved) {
    const auto now = lstat_of(saved.path);
    if (!now || !S_ISDIR(now->st_mode)) {
      if (now) remove_tree(saved.path);
      if (::mkdir(saved.path.c_str(), saved.mode & 07777) != 0) {
        lines.push_back(fmt::format("{} was replaced by the run and could not be made again",
                                    text::quoted(saved.path)));
        return;
      }
      lines.push_back(fmt::format("made {} again (the run replaced it)", text::quoted(saved.path)));
    }
    std::set<std::string> known;
    for (const SavedPath& child : saved.children) {
      known.insert(child.path);
      settle_entry(child);
    }
    for (const std::string& name : directory_names(saved.path)) {
      const std::string child = join_path(saved.path, name);
      if (!inert(name) && !known.contains(child)) {
        removed(child, "the run added it, and git would run or read it");
      }
    }
  }

  void settle_entry(const SavedPath& saved) {
    if (saved.exists && S_ISDIR(saved.mode)) {
      settle_directory(saved);
    } else {
      settle_file(saved);
    }
  }

  void settle(const SavedPath& saved) {
    if (!parent_intact(saved.path)) {
      lines.push_back(fmt::format(
          "the directory holding {} was replaced by the run; nothing was put back there: read it "
          "before running git there",
          text::quoted(saved.path)));
      return;
    }
    settle_entry(saved);
  }

  void settle_git_dir(const SavedGitDir& dir) {
    if (!lstat_of(dir.path) || !parent_intact(dir.path)) return;
    // Listed and cleaned through one descriptor of the directory the path names now: a git
    // directory the run replaced (by a symlink to elsewhere, or another directory) is left alone.
    const UniqueFd fd = open_directory_nofollow(dir.path);
    struct stat now {};
    if (fd.get() < 0 || ::fstat(fd.get(), &now) != 0 || now.st_dev != dir.dev ||
        now.st_ino != dir.ino) {
      lines.push_back(fmt::format(
          "the git directory {} was replaced by the run (the one it held was moved or removed); "
          "nothing was removed there: read it before running git there",
          text::quoted(dir.path)));
      return;
    }
    for (const std::string& name : names_in(fd.get())) {
      if (dir.names.contains(name) || ordinary_git_name(name)) continue;
      if (remove_entry(fd.get(), name, 0)) {
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
  const GitState state = git_state(context);
  const auto beneath_any = [](const std::string& path, const std::vector<std::string>& roots) {
    return std::any_of(roots.begin(), roots.end(),
                       [&](const std::string& root) { return is_beneath(path, root); });
  };
  std::vector<std::string> paths = state.read_only;
  paths.insert(paths.end(), state.guarded_read_only.begin(), state.guarded_read_only.end());
  for (const std::string& path : paths) {
    if (beneath_any(path, context.writable_roots) && !beneath_any(path, lifted)) {
      guard.saved_.push_back(save(path, 0));
    }
  }
  for (const std::string& dir : git_dirs_of(state)) {
    if (beneath_any(dir, lifted)) continue;
    const auto info = lstat_of(dir);
    if (!info) continue;
    const std::vector<std::string> names = directory_names(dir);
    guard.git_dirs_.push_back({dir, info->st_dev, info->st_ino, {names.begin(), names.end()}});
    guard.known_.insert(dir);
  }
  guard.context_ = std::move(context);
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

std::vector<std::string> GitGuard::settle() const {
  Settler settler;
  for (const SavedGitDir& dir : git_dirs_) settler.settle_git_dir(dir);
  for (const SavedPath& saved : saved_) settler.settle(saved);
  for (const std::string& dir : git_dirs_of(git_state(context_))) {
    if (known_.contains(dir)) continue;
    settler.lines.push_back(
        fmt::format("the run created the git directory {}: its config and hooks are the "
                    "command's; read them before running git there",
                    text::quoted(dir)));
  }
  return settler.lines;
}

}  // namespace dsh::sandbox::policy
