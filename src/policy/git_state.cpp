// SPDX-License-Identifier: Apache-2.0
// The git state beneath the writable roots, found on the host before a run (see git_state.h and
// docs/boundary.md, "What a run can leave behind").
#include "policy/git_state.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <deque>
#include <map>
#include <set>

#include <fmt/format.h>

#include "base/io.h"
#include "base/text.h"
#include "base/unique_fd.h"
#include "dsh/sandbox/roots.h"
#include "policy/host_paths.h"

namespace dsh::sandbox::policy {

namespace {

// A git pointer or config file is a few lines; anything larger is not one.
constexpr std::size_t kMaxGitFileBytes = std::size_t{64} * 1024;
// git's own bound on nested includes (config.c, MAX_INCLUDE_DEPTH).
constexpr int kMaxIncludeDepth = 10;
// Submodules of submodules: .git/modules/a/modules/b/...
constexpr int kMaxModuleDepth = 8;

// A value with its quotes removed and an unquoted trailing comment (`#`, `;`) cut.
std::string config_value(std::string_view raw) {
  std::string out;
  bool quoted = false;
  for (const char c : raw) {
    if (c == '"') {
      quoted = !quoted;
      continue;
    }
    if (!quoted && (c == '#' || c == ';')) break;
    out.push_back(c);
  }
  return trim(out);
}

bool is_true(const std::string& value) {
  const std::string lower = text::ascii_lower(value);
  return lower.empty() || lower == "true" || lower == "yes" || lower == "on" || lower == "1";
}

using Entries = std::vector<std::pair<std::string, unsigned char>>;

UniqueFd open_directory(const std::string& dir) {
  return UniqueFd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

// The entries of a directory, as entries_at; none when it cannot be opened.
Entries entries_of(const std::string& dir) {
  const UniqueFd fd = open_directory(dir);
  return fd.get() < 0 ? Entries{} : entries_at(fd.get());
}

// Whether the search for git directories uses an entry: a subdirectory (a worktree's, a bare
// repository's objects/ and refs/, modules/ and worktrees/ of a git directory), a `.git` of any
// type, a `HEAD`.
bool searched(const std::pair<std::string, unsigned char>& entry) {
  return entry.second == DT_DIR || entry.first == ".git" || entry.first == "HEAD";
}

// The filesystems whose inode times the local kernel sets from its own clock.
bool local_times(decltype(statfs::f_type) type) {
  return type == EXT4_SUPER_MAGIC || type == XFS_SUPER_MAGIC || type == BTRFS_SUPER_MAGIC ||
         type == TMPFS_MAGIC;
}

bool earlier(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

constexpr std::int64_t kNanos = 1000000000;

std::int64_t nanos(const struct timespec& time) {
  return static_cast<std::int64_t>(time.tv_sec) * kNanos + time.tv_nsec;
}

// How far the real-time clock may lag the monotonic one (both coarse: a tick apart at most)
// before it counts as stepped back; a ctime must also lie this far before the start.
constexpr std::int64_t kClockSlack = kNanos / 10;

struct GitWalk {
  const GitStateContext& context;
  GitState state;
  std::set<std::string> seen_git_dirs;
  std::set<std::string> seen_configs;
  // core.hooksPath values of the global config that are relative: each repository's own.
  std::vector<std::string> relative_hooks_paths;
  std::size_t listed = 0;
  // While reading the global configs: what they name outside the writable roots is not shown.
  bool global = false;
  // Whether the repository being read is bound (kMaxBoundGitDirs) or left to the check after.
  bool bound = true;
  // Only the git directories are looked for (git_directories): no config is read, nothing made.
  bool discover = false;
  std::vector<std::string> found;
  // Each config file's text, read once per walk (a repository's is asked for three times).
  std::map<std::string, std::string> texts;
  // Judges which listed directories are kept in state.listed (set when the walk starts).
  ChangeJudge judge{ChangeClock{}};
  // The search after a run: what the walk before it kept.
  const ListedDirs* prior = nullptr;
  // How many times the walk made something missing.
  std::size_t makings = 0;

  // A git directory's names, listed once (kept in state.seen for the check before the run): a
  // name it lacks is not looked up. Nullopt when it cannot be listed: everything is looked up.
  std::optional<std::set<std::string>> list_git_dir(const std::string& gitdir) {
    const UniqueFd fd = open_directory(gitdir);
    struct stat info {};
    if (fd.get() < 0 || ::fstat(fd.get(), &info) != 0) return std::nullopt;
    std::vector<std::string> names;
    for (auto& [name, type] : entries_at(fd.get())) names.push_back(std::move(name));
    std::set<std::string> set(names.begin(), names.end());
    GitState::Seen& seen = state.seen[gitdir];
    seen.info = info;
    seen.names = std::move(names);
    return set;
  }

  // The entries of `dir` the search uses (searched()): the kept ones when `dir` still has the
  // identity and ctime kept with them, else listed, and kept when the judge stamps `dir`.
  Entries listing(const std::string& dir) {
    if (prior != nullptr) {
      const auto kept = prior->find(dir);
      if (kept != prior->end()) {
        const auto now = lstat_of(dir);
        if (now && same_ctime(kept->second.info, *now)) return kept->second.entries;
      }
    }
    const UniqueFd fd = open_directory(dir);
    if (fd.get() < 0) return {};
    // Taken before the listing: a change after it moves the ctime.
    struct stat info {};
    const bool keep = prior == nullptr && !discover && ::fstat(fd.get(), &info) == 0 &&
                      judge.stamped_at(info, fd.get());
    Entries entries = entries_at(fd.get());
    std::erase_if(entries, [](const auto& entry) { return !searched(entry); });
    if (keep) state.listed[dir] = {info, entries};
    return entries;
  }

  const std::string& text_of(const std::string& path) {
    const auto kept = texts.find(path);
    if (kept != texts.end()) return kept->second;
    return texts.emplace(path, read_small(path)).first->second;
  }

  bool under_writable(const std::string& path) const {
    return std::any_of(context.writable_roots.begin(), context.writable_roots.end(),
                       [&](const std::string& root) { return is_beneath(path, root); });
  }

  // A repository's state is listed wherever it lies (the plan binds only what a writable root
  // holds); what a global config names, only inside a writable root.
  void protect(const std::string& path) {
    if (discover || (global && !under_writable(path))) return;
    const auto info = lstat_of(path);
    if (!info) return;
    (bound ? state.read_only : state.guarded_read_only).push_back(path);
    state.seen[path].info = *info;
  }

  void pin(const std::string& dir) {
    if (!under_writable(dir)) return;
    if (discover) {
      found.push_back(dir);
    } else {
      (bound ? state.pinned : state.guarded_git_dirs).push_back(dir);
    }
  }

  void fail(std::string message) {
    if (!state.error) state.error = std::move(message);
  }

  // `path` canonical when it exists; else, when its nearest existing ancestor lies in a writable
  // root, created (empty file or directory) as git would, so it can be bound read-only: a name
  // git reads later must not be left creatable. Each new component is made here, so none of it
  // can be a symlink.
  std::optional<std::string> existing_or_created(const std::string& path, bool directory) {
    if (auto canonical = existing_canonical(path)) return canonical;
    if (lstat_of(path)) {
      fail(fmt::format(
          "{} is a symlink to nothing, and git reads what it will point to as configuration or "
          "hooks; remove it or make it point to an existing file, and run again",
          text::quoted(path)));
      return std::nullopt;
    }
    if (!context.create_missing || discover) return std::nullopt;
    ++makings;
    std::vector<std::string> missing;
    std::string ancestor = lexically_normalize(path);
    while (!lstat_of(ancestor) && ancestor != "/") {
      missing.push_back(ancestor.substr(ancestor.rfind('/') + 1));
      ancestor = parent_of(ancestor);
    }
    auto base = existing_canonical(ancestor);
    if (!base || !under_writable(*base)) return std::nullopt;
    std::string made = *base;
    for (std::size_t i = missing.size(); i-- > 0;) {
      made.append("/").append(missing[i]);
      if (i > 0 || directory) {
        if (::mkdir(made.c_str(), 0755) != 0) return std::nullopt;
      } else {
        const UniqueFd fd(
            ::open(made.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
        if (fd.get() < 0) return std::nullopt;
      }
    }
    return existing_canonical(made);
  }

  std::string expand_home(const std::string& value) const {
    if (value.starts_with("~/") && !context.home.empty()) return context.home + value.substr(1);
    return value;
  }

  // A config file and everything it includes, at any depth git follows: each read-only, a
  // missing include target created empty (an empty file is an empty config).
  void protect_config(const std::string& file, int depth) {
    if (depth > kMaxIncludeDepth || !seen_configs.insert(file).second) return;
    protect(file);
    const std::string& text = text_of(file);
    if (const auto seen = state.seen.find(file); seen != state.seen.end()) seen->second.text = text;
    std::vector<std::string> targets = git_config_values(text, "include", "path");
    const std::vector<std::string> conditional = git_config_values(text, "includeif", "path");
    targets.insert(targets.end(), conditional.begin(), conditional.end());
    for (const std::string& value : targets) {
      std::string target = expand_home(value);
      if (target.empty() || target.starts_with('~')) continue;
      if (!target.starts_with('/')) target = join_path(parent_of(file), target);
      if (auto existing = existing_or_created(target, false)) protect_config(*existing, depth + 1);
    }
    for (const std::string& value : git_config_values(text, "core", "hookspath")) {
      const std::string path = expand_home(value);
      if (!path.starts_with('/')) continue;  // relative to each worktree: protect_repository
      if (auto dir = existing_or_created(path, true)) protect(*dir);
    }
  }

  void protect_hooks(const std::string& gitdir) {
    const std::string hooks = gitdir + "/hooks";
    // A missing hooks directory would be creatable inside the pinned git directory: it is made
    // empty, as git init makes it, where the directory is a repository's (it has a config).
    protect(hooks);
    if (!state.seen.contains(hooks) && lstat_of(gitdir + "/config")) {
      if (existing_or_created(hooks, true)) protect(hooks);
    }
    const auto seen = state.seen.find(hooks);
    std::vector<std::string> names;
    // A hook with a second name elsewhere could be rewritten through it. A sample is never run:
    // git runs only the exact hook name.
    for (const auto& [name, type] : entries_of(hooks)) {
      names.push_back(name);
      if (name.ends_with(".sample")) continue;
      const std::string hook = join_path(hooks, name);
      const auto info = lstat_of(hook);
      if (info && S_ISREG(info->st_mode) && info->st_nlink > 1) {
        fail(fmt::format(
            "the hook {} has {} hard links; a write through another name would change what git "
            "runs. Replace it with a copy and run again",
            text::quoted(hook), info->st_nlink));
      }
    }
    if (seen != state.seen.end()) seen->second.names = std::move(names);
  }

  bool reads_worktree_config(const std::string& config_file) {
    const std::vector<std::string> values =
        git_config_values(text_of(config_file), "extensions", "worktreeconfig");
    return !values.empty() && is_true(values.back());
  }

  // config.worktree: read when extensions.worktreeConfig is on in `common_config`; a missing
  // one is then created empty, so it cannot be planted.
  void protect_worktree_config(const std::string& dir, const std::string& common_config,
                               bool maybe = true) {
    const std::string file = dir + "/config.worktree";
    if (maybe && lstat_of(file)) {
      protect_config(file, 0);
    } else if (reads_worktree_config(common_config)) {
      if (auto made = existing_or_created(file, false)) protect_config(*made, 0);
    }
  }

  // A linked worktree's administrative directory (GITDIR/worktrees/NAME): its own HEAD and index
  // stay writable; what points git elsewhere is read-only.
  void protect_worktree_admin(const std::string& admin, const std::string& common_config) {
    pin(admin);
    protect(admin + "/commondir");
    protect(admin + "/gitdir");
    protect_worktree_config(admin, common_config);
    // gitdir names the linked worktree's .git file; rewriting that file would point git at a
    // directory the command made.
    const std::string dotgit = trim(read_small(admin + "/gitdir"));
    if (dotgit.starts_with('/')) protect(dotgit);
  }

  void protect_modules(const std::string& dir, int depth) {
    if (depth > kMaxModuleDepth) return;
    for (const auto& [name, type] : listing(dir)) {
      if (type != DT_DIR) continue;
      const std::string sub = join_path(dir, name);
      // A submodule's name may hold slashes: modules/a/b is the git directory of "a/b".
      if (lstat_of(sub + "/HEAD")) {
        protect_git_dir(sub, depth + 1);
      } else {
        protect_modules(sub, depth + 1);
      }
    }
  }

  void protect_git_dir(const std::string& gitdir, int depth) {
    if (depth > kMaxModuleDepth || !seen_git_dirs.insert(gitdir).second) return;
    pin(gitdir);
    const std::string config = gitdir + "/config";
    std::optional<std::set<std::string>> names;
    if (!discover) names = list_git_dir(gitdir);
    const auto has = [&](const char* name) { return !names || names->contains(name); };
    if (!discover) {
      protect_config(config, 0);
      // git honours commondir whenever it exists: it names where config and hooks are read.
      if (has("commondir")) protect(gitdir + "/commondir");
      protect_worktree_config(gitdir, config, has("config.worktree"));
      protect_hooks(gitdir);
    }
    if (has("modules")) protect_modules(gitdir + "/modules", depth);
    if (!has("worktrees")) return;
    for (const auto& [name, type] : listing(gitdir + "/worktrees")) {
      if (type != DT_DIR) continue;
      const std::string admin = join_path(gitdir + "/worktrees", name);
      if (discover) {
        pin(admin);
      } else {
        protect_worktree_admin(admin, config);
      }
    }
  }

  // The git directories of the worktree `root`: its .git directory, or the directory a .git file
  // (a linked worktree, a submodule) or symlink names, and that one's common directory.
  std::vector<std::string> git_dirs_of(const std::string& root) {
    const std::string dotgit = root + "/.git";
    const auto info = lstat_of(dotgit);
    if (!info) return {};
    if (S_ISDIR(info->st_mode)) return {dotgit};
    if (S_ISLNK(info->st_mode)) {
      auto target = existing_canonical(dotgit);
      return target && is_directory(*target) ? std::vector<std::string>{*target}
                                             : std::vector<std::string>{};
    }
    if (!S_ISREG(info->st_mode)) return {};
    protect(dotgit);  // rewriting it would point git at a directory the command made
    const std::string pointer = trim(read_small(dotgit));
    if (!pointer.starts_with("gitdir:")) return {};
    std::string target = trim(pointer.substr(7));
    if (!target.starts_with('/')) target = root + "/" + target;
    const auto gitdir = existing_canonical(target);
    if (!gitdir) return {};
    std::vector<std::string> dirs = {*gitdir};
    const std::string common = trim(text_of(*gitdir + "/commondir"));
    if (!common.empty()) {
      const auto common_dir =
          existing_canonical(common.starts_with('/') ? common : *gitdir + "/" + common);
      if (common_dir) dirs.push_back(*common_dir);
    }
    return dirs;
  }

  void protect_repository(const std::string& root) {
    const std::vector<std::string> gitdirs = git_dirs_of(root);
    for (const std::string& gitdir : gitdirs) protect_git_dir(gitdir, 0);
    if (discover) return;
    // A relative core.hooksPath is taken from the worktree's top level; a missing one is made
    // (husky's .husky before npm install), so it is a read-only empty directory, not a creatable
    // name.
    std::vector<std::string> relative = relative_hooks_paths;
    for (const std::string& gitdir : gitdirs) {
      for (const std::string& value :
           git_config_values(text_of(gitdir + "/config"), "core", "hookspath")) {
        if (!value.empty() && !value.starts_with('/') && !value.starts_with('~')) {
          relative.push_back(value);
        }
      }
    }
    for (const std::string& value : relative) {
      if (auto dir = existing_or_created(join_path(root, value), true)) protect(*dir);
    }
  }

  // Every directory beneath `root` is listed (none skipped: a repository planted in
  // node_modules is as much a repository to the person's `git -C` later), except the insides of
  // git directories, which protect_git_dir reads by their layout. Symlinks are not followed.
  void walk(const std::string& root) {
    std::deque<std::string> pending = {root};  // breadth first: the shallowest are bound
    while (!pending.empty() && !state.error) {
      const std::string dir = std::move(pending.front());
      pending.pop_front();
      bound = dir == root || state.pinned.size() < kMaxBoundGitDirs;
      if (++listed > kMaxGitWalkDirectories) {
        fail(fmt::format(
            "the writable roots hold more than {} directories, too many to find every git "
            "repository in them before the run; choose a smaller workspace or writable root",
            kMaxGitWalkDirectories));
        return;
      }
      bool head = false;
      bool objects = false;
      bool refs = false;
      bool dotgit = false;
      std::vector<std::string> children;
      for (const auto& [name, type] : listing(dir)) {
        if (name == ".git") {
          dotgit = true;
          continue;
        }
        head = head || (name == "HEAD" && type == DT_REG);
        if (type != DT_DIR) continue;
        objects = objects || name == "objects";
        refs = refs || name == "refs";
        children.push_back(join_path(dir, name));
      }
      // A bare repository, found by git's own layout test (HEAD, objects/, refs/).
      if (head && objects && refs) {
        protect_git_dir(dir, 0);
        continue;
      }
      if (dotgit) protect_repository(dir);
      pending.insert(pending.end(), children.begin(), children.end());
    }
  }

  // The configs every git reads besides a repository's own: their includes and core.hooksPath
  // may name files inside a writable root.
  void protect_global_configs() {
    std::vector<std::string> files = {"/etc/gitconfig"};
    if (!context.home.empty()) {
      std::string xdg = context.env ? context.env("XDG_CONFIG_HOME") : std::string();
      if (!xdg.starts_with('/')) xdg = context.home + "/.config";
      files.push_back(xdg + "/git/config");
      files.push_back(context.home + "/.gitconfig");
    }
    global = true;
    for (const std::string& file : files) {
      protect_config(file, 0);
      for (const std::string& value : git_config_values(text_of(file), "core", "hookspath")) {
        if (!value.empty() && !value.starts_with('/') && !value.starts_with('~')) {
          relative_hooks_paths.push_back(value);
        }
      }
    }
    global = false;
  }
};

}  // namespace

std::vector<std::string> git_config_values(const std::string& text, std::string_view section,
                                           std::string_view name) {
  std::vector<std::string> values;
  std::string current;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    std::string line = trim(std::string_view(text).substr(start, end - start));
    start = end + 1;
    if (line.starts_with('[')) {
      const std::size_t close = line.find(']');
      if (close == std::string::npos) continue;
      const std::string header = line.substr(1, close - 1);
      current = text::ascii_lower(header.substr(0, header.find_first_of(" \t\".")));
      line = trim(line.substr(close + 1));  // git takes a key on the header's line
    }
    const std::size_t equals = line.find('=');
    if (current != section || equals == std::string::npos) continue;
    if (text::ascii_lower(trim(line.substr(0, equals))) != name) continue;
    values.push_back(config_value(line.substr(equals + 1)));
  }
  return values;
}

GitState git_state(const GitStateContext& context) {
  if (const GitState* kept = GitWalkScope::find(context)) return *kept;
  GitWalk walk{context, {}, {}, {}, {}, 0};
  walk.state.walk_start = change_clock_now();
  walk.judge = ChangeJudge(walk.state.walk_start);
  walk.protect_global_configs();
  for (const std::string& root : context.walk_roots) walk.walk(root);
  // What the walk made may lie in a git directory it had listed: the check before the run lists
  // them itself then.
  if (walk.makings > 0) {
    for (const std::string& gitdir : walk.seen_git_dirs) walk.state.seen.erase(gitdir);
  }
  GitWalkScope::keep(context, walk.state);
  return std::move(walk.state);
}

std::vector<std::string> git_directories(const GitStateContext& context, const ListedDirs* prior) {
  GitWalk walk{context, {}, {}, {}, {}, 0};
  walk.discover = true;
  walk.prior = prior;
  for (const std::string& root : context.walk_roots) walk.walk(root);
  return std::move(walk.found);
}

namespace {

// The innermost open scope of this thread: the kept walks live no longer than it does.
thread_local GitWalkScope* open_scope = nullptr;

bool covers(const std::vector<std::string>& kept, const std::vector<std::string>& wanted) {
  return std::all_of(wanted.begin(), wanted.end(), [&](const std::string& root) {
    return std::find(kept.begin(), kept.end(), root) != kept.end();
  });
}

}  // namespace

GitWalkScope::GitWalkScope() : outer_(open_scope) { open_scope = this; }

GitWalkScope::~GitWalkScope() { open_scope = outer_; }

const GitState* GitWalkScope::find(const GitStateContext& context) {
  if (open_scope == nullptr) return nullptr;
  for (const Kept& kept : open_scope->kept_) {
    const GitStateContext& was = kept.context;
    // A walk that made nothing cannot stand in for one that must make what is missing.
    if (was.walk_roots == context.walk_roots && was.home == context.home &&
        (was.create_missing || !context.create_missing) &&
        covers(was.writable_roots, context.writable_roots)) {
      return &kept.state;
    }
  }
  return nullptr;
}

void GitWalkScope::keep(const GitStateContext& context, const GitState& state) {
  if (open_scope != nullptr) open_scope->kept_.push_back({context, state});
}

ChangeClock change_clock_now() {
  ChangeClock clock;
  ::clock_gettime(CLOCK_REALTIME_COARSE, &clock.realtime);
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &clock.monotonic);
  return clock;
}

bool ChangeJudge::stamped_on(const struct stat& info, bool trusted_fs) const {
  if (!trusted_fs || S_ISLNK(info.st_mode)) return false;
  const std::int64_t before = nanos(start_.realtime) - kClockSlack;
  const struct timespec limit = {before / kNanos, before % kNanos};
  // A filesystem of whole seconds truncates a later change's ctime to its second.
  if (info.st_ctim.tv_nsec == 0) return info.st_ctim.tv_sec < limit.tv_sec;
  return earlier(info.st_ctim, limit);
}

bool ChangeJudge::stamped_at(const struct stat& info, int fd) {
  auto known = trusted_.find(info.st_dev);
  if (known == trusted_.end()) {
    struct statfs fs {};
    known = trusted_.emplace(info.st_dev, ::fstatfs(fd, &fs) == 0 && local_times(fs.f_type)).first;
  }
  return stamped_on(info, known->second);
}

bool ChangeJudge::stamped(const struct stat& info, const std::string& path) {
  if (S_ISLNK(info.st_mode)) return false;
  if (!trusted_.contains(info.st_dev)) {
    // The filesystem of this very inode: opened without following, and checked to be it.
    const UniqueFd fd(::open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat now {};
    if (fd.get() < 0 || ::fstat(fd.get(), &now) != 0 || now.st_dev != info.st_dev ||
        now.st_ino != info.st_ino) {
      return false;
    }
    return stamped_at(info, fd.get());
  }
  return stamped_on(info, trusted_.at(info.st_dev));
}

bool ChangeJudge::clock_kept_pace() const {
  const ChangeClock now = change_clock_now();
  const std::int64_t real = nanos(now.realtime) - nanos(start_.realtime);
  const std::int64_t monotonic = nanos(now.monotonic) - nanos(start_.monotonic);
  return real >= 0 && real + kClockSlack >= monotonic;
}

bool same_ctime(const struct stat& then, const struct stat& now) {
  return now.st_dev == then.st_dev && now.st_ino == then.st_ino && now.st_mode == then.st_mode &&
         now.st_size == then.st_size && now.st_ctim.tv_sec == then.st_ctim.tv_sec &&
         now.st_ctim.tv_nsec == then.st_ctim.tv_nsec;
}

// --- host_paths.h ---

std::optional<struct stat> lstat_of(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return std::nullopt;
  return info;
}

std::optional<std::string> existing_canonical(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return std::nullopt;
  std::string out(resolved);
  std::free(resolved);  // NOLINT(cppcoreguidelines-no-malloc): realpath(3) allocates with malloc
  return out;
}

bool is_directory(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

std::string read_small(const std::string& path) { return read_small_at(AT_FDCWD, path); }

std::string read_small_at(int dir_fd, const std::string& name) {
  const UniqueFd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return {};
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) return {};
  std::string text;
  if (!io::read_all(fd.get(), text, kMaxGitFileBytes).ok()) return {};
  return text;
}

std::string trim(std::string_view text) {
  const std::size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return {};
  const std::size_t end = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(start, end - start + 1));
}

std::string parent_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? std::string("/") : path.substr(0, slash);
}

std::string join_path(std::string_view dir, std::string_view name) {
  std::string path;
  path.reserve(dir.size() + 1 + name.size());
  return path.append(dir).append("/").append(name);
}

std::vector<std::pair<std::string, unsigned char>> entries_at(int dir_fd) {
  std::vector<std::pair<std::string, unsigned char>> out;
  alignas(dirent64) std::array<char, 16384> buffer{};
  for (;;) {
    const ssize_t filled = ::getdents64(dir_fd, buffer.data(), buffer.size());
    if (filled <= 0) return out;
    for (std::size_t at = 0; at < static_cast<std::size_t>(filled);) {
      const auto* entry = reinterpret_cast<const dirent64*>(buffer.data() + at);
      at += entry->d_reclen;
      const std::string_view name = entry->d_name;
      if (name == "." || name == "..") continue;
      unsigned char type = entry->d_type;
      struct stat info {};
      if (type == DT_UNKNOWN && ::fstatat(dir_fd, entry->d_name, &info, AT_SYMLINK_NOFOLLOW) == 0) {
        type = S_ISDIR(info.st_mode)   ? DT_DIR
               : S_ISREG(info.st_mode) ? DT_REG
               : S_ISLNK(info.st_mode) ? DT_LNK
                                       : DT_UNKNOWN;
      }
      out.emplace_back(name, type);
    }
  }
}

std::vector<std::string> directory_names(const std::string& dir) {
  std::vector<std::string> names;
  for (auto& [name, type] : entries_of(dir)) names.push_back(std::move(name));
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace dsh::sandbox::policy
