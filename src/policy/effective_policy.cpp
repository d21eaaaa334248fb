// SPDX-License-Identifier: Apache-2.0
// The policy's path rules resolved on the host, once per call. Every path is canonicalised here
// (realpath), so bwrap's binds, Landlock's grants and Seatbelt's rules name the same objects
// and a symlink cannot point a rule at something else later in the call.
#include "policy/effective_policy.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/io.h"
#include "base/text.h"
#include "base/unique_fd.h"
#include "dsh/sandbox/roots.h"
#include "policy/git_state.h"
#include "policy/host_paths.h"
#include "seam/call_scope.h"

namespace dsh::sandbox::policy {

namespace {

using profiles::PlannedPath;

// A kernel path walk gives up after 40 symlinks (ELOOP); so does the startup walk.
constexpr int kMaxSymlinks = 40;

std::deque<std::string> split_path(std::string_view path) {
  std::deque<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    if (end > start) parts.emplace_back(path.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

struct Planner {
  const SandboxPolicy& policy;
  const PathContext& context;
  std::vector<std::string> writable_roots;  // workspace (workspace-write) and extra roots
  std::vector<PlannedPath> read_only;
  std::vector<std::string> default_read_only;  // the defaults among read_only
  std::vector<std::string> pinned;
  std::set<std::string> sealed;  // directories where a startup name must not appear
  std::optional<std::string> error;

  bool under_writable(const std::string& path) const {
    return std::any_of(writable_roots.begin(), writable_roots.end(),
                       [&](const std::string& root) { return is_beneath(path, root); });
  }

  // A default carve-out of an existing path; a file with a second hard link is refused: the other
  // name may lie in a writable root, and a write through it changes this file.
  void protect(const std::string& path, bool as_default) {
    const auto info = lstat_of(path);
    if (!info || S_ISLNK(info->st_mode)) return;
    if (S_ISREG(info->st_mode) && info->st_nlink > 1 && !error) {
      error = fmt::format(
          "{} has {} hard links; a write through another name would change it, so it cannot be "
          "kept read-only. Replace it with a copy (cp {} {}.copy && mv {}.copy {}) and run again",
          text::quoted(path), info->st_nlink, path, path, path, path);
    }
    read_only.push_back({path, S_ISDIR(info->st_mode)});
    if (as_default) default_read_only.push_back(path);
  }

  // Walks `path` from `dir` (canonical) as the kernel would, so that whatever name a later
  // process opens for it stays as it is: the existing object at its end is kept read-only, and
  // the directory where the walk meets a missing name or a symlink is sealed (no name can be
  // created, renamed or removed in it). Acts only inside writable roots. Whether it acted.
  bool guard_startup(std::string dir, std::deque<std::string> rest) {
    bool acted = false;
    int symlinks = 0;
    while (!rest.empty()) {
      const std::string name = std::move(rest.front());
      rest.pop_front();
      if (name.empty() || name == ".") continue;
      if (name == "..") {
        dir = dir == "/" ? dir : dir.substr(0, std::max<std::size_t>(dir.rfind('/'), 1));
        continue;
      }
      const std::string next = (dir == "/" ? "" : dir) + "/" + name;
      const auto info = lstat_of(next);
      if (!info || S_ISLNK(info->st_mode)) {
        if (under_writable(dir)) {
          sealed.insert(dir);
          acted = true;
        }
        // A symlink is followed (its target may lie in a writable root too); a missing name
        // ends the walk: nothing beneath it exists, and the sealed directory keeps it missing.
        if (!info || ++symlinks > kMaxSymlinks) return acted;
        std::array<char, PATH_MAX> target{};
        const ssize_t n = ::readlink(next.c_str(), target.data(), target.size() - 1);
        if (n <= 0) return acted;
        const std::string spelled(target.data(), static_cast<std::size_t>(n));
        if (spelled.starts_with('/')) dir = "/";
        std::deque<std::string> parts = split_path(spelled);
        rest.insert(rest.begin(), parts.begin(), parts.end());
        continue;
      }
      if (rest.empty() || !S_ISDIR(info->st_mode)) {
        // The startup file itself, or a file where a directory was expected (kept in place:
        // replaced by a directory it would lead on).
        if (under_writable(next)) {
          protect(next, true);
          acted = true;
        }
        return acted;
      }
      dir = next;
    }
    return acted;
  }

  void protect_git_state(std::vector<std::string> walk_roots) {
    GitState git = git_state(
        {writable_roots, std::move(walk_roots), context.home, context.env, context.create_missing});
    if (git.error && !error) error = std::move(git.error);
    for (const std::string& path : git.read_only) protect(path, true);
    pinned.insert(pinned.end(), git.pinned.begin(), git.pinned.end());
  }
};

// Entries matching the last component's pattern, or the path itself.
std::vector<std::string> expand_last_component(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  const std::string last = path.substr(slash + 1);
  if (last.find_first_of("*?[") == std::string::npos) return {path};
  const std::string parent = slash == 0 ? "/" : path.substr(0, slash);
  std::vector<std::string> matches;
  if (DIR* dir = ::opendir(parent.c_str())) {
    while (const dirent* entry = ::readdir(dir)) {  // NOLINT(concurrency-mt-unsafe): own DIR
      const std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      if (::fnmatch(last.c_str(), name.c_str(), FNM_PERIOD) == 0) {
        matches.push_back((parent == "/" ? "" : parent) + "/" + name);
      }
    }
    ::closedir(dir);
  }
  std::sort(matches.begin(), matches.end());
  return matches;
}

std::size_t depth(std::string_view path) {
  return static_cast<std::size_t>(std::count(path.begin(), path.end(), '/'));
}

void sort_by_depth(std::vector<PlannedPath>& paths) {
  std::stable_sort(paths.begin(), paths.end(), [](const PlannedPath& a, const PlannedPath& b) {
    return depth(a.path) < depth(b.path);
  });
}

void dedupe(std::vector<std::string>& paths) {
  std::set<std::string> seen;
  std::erase_if(paths, [&](const std::string& path) { return !seen.insert(path).second; });
}

void dedupe(std::vector<PlannedPath>& paths) {
  std::set<std::string> seen;
  std::erase_if(paths, [&](const PlannedPath& p) { return !seen.insert(p.path).second; });
}

// The lifted entries ("!PATH"), canonical where they exist; the rest left in `entries`.
std::vector<std::string> take_lifted(std::vector<std::string>& entries) {
  std::vector<std::string> lifted;
  std::erase_if(entries, [&](const std::string& entry) {
    if (!entry.starts_with('!')) return false;
    const std::string path = lexically_normalize(entry.substr(1));
    lifted.push_back(existing_canonical(path).value_or(path));
    return true;
  });
  return lifted;
}

bool is_lifted(const std::string& path, const std::vector<std::string>& lifted) {
  return std::any_of(lifted.begin(), lifted.end(),
                     [&](const std::string& l) { return is_beneath(path, l); });
}

// Landlock's read grants that leave `unreadable` out: each entry of every ancestor except the
// ancestors themselves and the unreadable paths; symlinks are skipped (access through one is
// checked at its target). An ancestor that cannot be listed contributes nothing.
void plan_read_grants(profiles::FsPlan& plan) {
  std::set<std::string> blocked;
  std::set<std::string> ancestors;
  for (const PlannedPath& path : plan.unreadable) {
    blocked.insert(path.path);
    std::string ancestor = path.path;
    while (ancestor != "/") {
      const std::size_t slash = ancestor.rfind('/');
      ancestor = slash == 0 ? "/" : ancestor.substr(0, slash);
      ancestors.insert(ancestor);
    }
  }
  std::set<std::string> grants;
  for (const std::string& ancestor : ancestors) {
    DIR* dir = ::opendir(ancestor.c_str());
    if (dir == nullptr) continue;
    while (const dirent* entry = ::readdir(dir)) {  // NOLINT(concurrency-mt-unsafe): own DIR
      const std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      const std::string child = (ancestor == "/" ? "" : ancestor) + "/" + name;
      if (blocked.contains(child) || ancestors.contains(child)) continue;
      if (entry->d_type == DT_LNK) continue;
      if (entry->d_type == DT_UNKNOWN) {
        const auto info = lstat_of(child);
        if (!info || S_ISLNK(info->st_mode)) continue;
      }
      grants.insert(child);
    }
    ::closedir(dir);
  }
  plan.read_grants.assign(grants.begin(), grants.end());
  plan.unlisted.assign(ancestors.begin(), ancestors.end());
}

// `path` made canonical as far as it exists: a trusted directory not created yet (the cache
// directory before the first call) is compared under its parent's real path.
std::string canonical_as_far_as_exists(const std::string& path) {
  if (auto canonical = existing_canonical(path)) return *canonical;
  std::string normal = lexically_normalize(path);
  const std::size_t slash = normal.rfind('/');
  if (slash == std::string::npos || slash == 0) return normal;
  return canonical_as_far_as_exists(normal.substr(0, slash)) + normal.substr(slash);
}

// Why an extra writable root would let a confined run rewrite what decides later runs, or
// nullopt. A root over a trusted file or directory could replace it; a root beneath a trusted
// directory (the cache directory's jobs/) could plant entries in it. Refused rather than carved
// out read-only: Landlock alone cannot carve a path out of a writable root, and a carve-out
// would still let the run create the verdict or record that does not exist yet.
std::optional<std::string> covers_trusted_state(const std::vector<std::string>& roots,
                                                const std::vector<std::string>& trusted_state) {
  for (const std::string& entry : trusted_state) {
    if (entry.empty() || !entry.starts_with('/')) continue;
    const std::string trusted = canonical_as_far_as_exists(entry);
    for (const std::string& root : roots) {
      if (!is_beneath(trusted, root) && !is_beneath(root, trusted)) continue;
      const bool over = is_beneath(trusted, root);
      return fmt::format(
          "the writable root {} {} {}, which decides later runs (the sandbox's runners, its own "
          "program, or its cache of verdicts, writable workspaces and jobs); a confined run could "
          "rewrite it to weaken the next run. Name a directory that {} it",
          text::quoted(root), over ? "contains" : "lies beneath", text::quoted(entry),
          over ? "does not contain" : "is not beneath");
    }
  }
  return std::nullopt;
}

// At most this many entries beneath one unreadable path are checked for hard links; a larger
// tree is refused rather than hidden with a second name of one of its files left readable.
constexpr std::size_t kMaxUnreadableEntries = 10000;

// Why the unreadable `path` (canonical; `entry` as the policy spelled it) cannot be hidden, or
// nullopt: a regular file at or beneath it has a second hard link. A bind over a path or a
// Landlock rule hides a name, not the file: the other name, which may lie anywhere readable,
// stays readable. Symlinks are not followed (their targets are checked where they are named).
std::optional<std::string> hard_link_refusal(const std::string& entry, const std::string& path) {
  std::vector<std::string> pending = {path};
  std::size_t looked = 0;
  while (!pending.empty()) {
    const std::string current = std::move(pending.back());
    pending.pop_back();
    if (++looked > kMaxUnreadableEntries) {
      return fmt::format(
          "deny_read entry {} holds more than {} entries, too many to check each for a second "
          "hard link (another name for a file stays readable whatever hides this one); name the "
          "files or directories inside it to hide",
          text::quoted(entry), kMaxUnreadableEntries);
    }
    const auto info = lstat_of(current);
    if (!info) continue;
    if (S_ISREG(info->st_mode) && info->st_nlink > 1) {
      return fmt::format(
          "deny_read entry {}: {} has {} hard links, and another name for it stays readable "
          "whatever hides this one. Replace it with a copy (cp {} {}.copy && mv {}.copy {}) or "
          "remove its other names, and run again",
          text::quoted(entry), text::quoted(current), info->st_nlink, current, current, current,
          current);
    }
    if (!S_ISDIR(info->st_mode)) continue;
    for (const std::string& name : directory_names(current)) {
      pending.push_back(join_path(current, name));
    }
  }
  return std::nullopt;
}

// The home directories of /etc/passwd (absolute, not "/"), and /root.
std::vector<std::string> passwd_homes() {
  std::vector<std::string> homes = {"/root"};
  std::ifstream passwd("/etc/passwd");
  std::string line;
  while (std::getline(passwd, line)) {
    // name:password:uid:gid:gecos:home:shell
    std::size_t start = 0;
    for (int field = 0; field < 5 && start != std::string::npos; ++field) {
      start = line.find(':', start);
      if (start != std::string::npos) ++start;
    }
    if (start == std::string::npos) continue;
    const std::string home = line.substr(start, line.find(':', start) - start);
    if (home.starts_with('/') && lexically_normalize(home) != "/") {
      homes.push_back(lexically_normalize(home));
    }
  }
  return homes;
}

// The homes a writable root reaches: the root lies beneath the home or covers it, as spelled or
// as resolved.
std::vector<std::string> homes_reached(const PathContext& context,
                                       const std::vector<std::string>& roots) {
  std::vector<std::string> candidates = context.other_homes;
  if (!context.home.empty()) candidates.insert(candidates.begin(), context.home);
  std::vector<std::string> reached;
  std::set<std::string> seen;
  for (const std::string& home : candidates) {
    const std::string canonical = canonical_as_far_as_exists(home);
    if (canonical == "/" || !seen.insert(canonical).second) continue;
    const bool reaches = std::any_of(roots.begin(), roots.end(), [&](const std::string& root) {
      return is_beneath(home, root) || is_beneath(root, home) || is_beneath(canonical, root) ||
             is_beneath(root, canonical);
    });
    if (reaches) reached.push_back(home);
  }
  return reached;
}

// Each sealed directory with the entries bound writable again inside it (regular files and
// directories that are neither sealed themselves nor kept read-only), shallowest first; and the
// writable roots a sealed directory lies above, to be bound writable again after it.
void plan_sealed(const Planner& planner, profiles::FsPlan& plan) {
  std::set<std::string> read_only;
  for (const PlannedPath& p : plan.read_only) read_only.insert(p.path);
  for (const std::string& dir : planner.sealed) {
    profiles::FsPlan::Sealed sealed{dir, {}};
    if (DIR* stream = ::opendir(dir.c_str())) {
      while (const dirent* entry = ::readdir(stream)) {  // NOLINT(concurrency-mt-unsafe): own DIR
        const std::string name = entry->d_name;
        if (name == "." || name == "..") continue;
        const std::string child = (dir == "/" ? "" : dir) + "/" + name;
        const auto info = lstat_of(child);
        if (!info || !(S_ISDIR(info->st_mode) || S_ISREG(info->st_mode))) continue;
        if (planner.sealed.contains(child) || read_only.contains(child)) continue;
        sealed.reopened.push_back(child);
      }
      ::closedir(stream);
    }
    std::sort(sealed.reopened.begin(), sealed.reopened.end());
    plan.sealed.push_back(std::move(sealed));
  }
  std::stable_sort(plan.sealed.begin(), plan.sealed.end(),
                   [](const auto& a, const auto& b) { return depth(a.path) < depth(b.path); });
  for (const std::string& root : planner.writable_roots) {
    if (planner.sealed.contains(root)) continue;
    const bool beneath =
        std::any_of(planner.sealed.begin(), planner.sealed.end(),
                    [&](const std::string& dir) { return root != dir && is_beneath(root, dir); });
    if (beneath) plan.rebound.push_back(root);
  }
  dedupe(plan.rebound);
  std::stable_sort(plan.rebound.begin(), plan.rebound.end(),
                   [](const std::string& a, const std::string& b) { return depth(a) < depth(b); });
}

}  // namespace

PathContext process_path_context() {
  const char* home = std::getenv("HOME");  // NOLINT(concurrency-mt-unsafe): read once, no setenv
  std::string h = home != nullptr && home[0] == '/' ? lexically_normalize(home) : std::string();
  if (h == "/") h.clear();  // a home of "/" would make every path a home path
  std::vector<std::string> trusted_state = {"/usr/bin/true", "/bin/true"};
  // The kernel's link is the executable's real path already: no realpath of it.
  if (std::string self = self_executable(); !self.empty()) trusted_state.push_back(std::move(self));
  return {std::move(h), process_env(), true, std::move(trusted_state), passwd_homes()};
}

namespace {

// A cache preset's directories, created as the tool would on first use (so each can be bound),
// appended to `roots` canonical.
Result<void> add_cache_dirs(const std::string& name, const PathContext& context,
                            std::vector<std::string>& roots) {
  for (const std::string& dir : cache_preset_dirs(name, context.home, context.env)) {
    for (std::size_t i = 1; context.create_missing && i <= dir.size(); ++i) {
      if (i == dir.size() || dir[i] == '/') ::mkdir(dir.substr(0, i).c_str(), 0700);
    }
    const auto path = existing_canonical(dir);
    if (!context.create_missing && !path) {
      roots.push_back(dir);  // shown as it would be created
      continue;
    }
    if (!path || !is_directory(*path)) {
      return InvalidInput{fmt::format(
          "the {} cache directory {} cannot be created; create it or set the tool's cache "
          "variable to a directory you own",
          name, text::quoted(dir))};
    }
    roots.push_back(*path);
  }
  return {};
}

// Extra writable roots (workspace-write only): existing directories and the cache presets',
// canonical, none covering the sandbox's own trusted state.
Result<void> resolve_writable_roots(const SandboxPolicy& policy, const PathContext& context,
                                    std::vector<std::string>& roots) {
  for (const std::string& entry : policy.allow_write) {
    const auto path = existing_canonical(entry);
    if (!path || !is_directory(*path)) {
      return InvalidInput{fmt::format(
          "allow_write entry {} is not an existing directory; create it first (a writable root "
          "that appears later would not be writable in this run)",
          text::quoted(entry))};
    }
    roots.push_back(*path);
  }
  for (const std::string& name : policy.allow_cache) {
    if (auto refused = cache_preset_refusal(name)) return InvalidInput{*refused};
    if (auto added = add_cache_dirs(name, context, roots); !added) return added.error();
  }
  dedupe(roots);
  if (auto covered = covers_trusted_state(roots, context.trusted_state)) {
    return InvalidInput{*covered};
  }
  return {};
}

// Read-only carve-outs inside the writable roots (workspace-write only): the git state, the
// startup files of a home a root reaches, and the caller's deny_write entries.
Result<void> plan_carve_outs(Planner& planner, const std::vector<std::string>& deny_write,
                             const std::vector<std::string>& lifted_write, profiles::FsPlan& plan) {
  const SandboxPolicy& policy = planner.policy;
  planner.writable_roots.push_back(policy.workspace_root);
  planner.writable_roots.insert(planner.writable_roots.end(), plan.writable.begin(),
                                plan.writable.end());
  std::vector<std::string> walk_roots = {policy.workspace_root};
  for (const std::string& entry : policy.allow_write) {
    if (auto path = existing_canonical(entry)) walk_roots.push_back(*path);
  }
  if (planner.context.git_state) planner.protect_git_state(std::move(walk_roots));
  for (const std::string& home : homes_reached(planner.context, planner.writable_roots)) {
    // Only a home a writable root covers: a workspace inside a home keeps its own names.
    const std::string canonical = canonical_as_far_as_exists(home);
    if (std::any_of(planner.writable_roots.begin(), planner.writable_roots.end(),
                    [&](const std::string& root) {
                      return is_beneath(home, root) || is_beneath(canonical, root);
                    })) {
      plan.homes.push_back(canonical);
    }
    for (const std::string_view file : home_startup_files()) {
      const std::string path = home + "/" + std::string(file);
      if (is_lifted(path, lifted_write)) continue;
      if (planner.guard_startup("/", split_path(path))) plan.startup_guarded.push_back(path);
    }
  }
  for (const std::string& entry : deny_write) {
    const auto path = existing_canonical(entry);
    if (!path) {
      return InvalidInput{fmt::format(
          "deny_write entry {} does not exist; a read-only carve-out must name an existing "
          "file or directory (a missing one could be created by the command)",
          text::quoted(entry))};
    }
    planner.protect(*path, false);
  }
  if (planner.error) return InvalidInput{*planner.error};
  return {};
}

// The planned carve-outs, less the lifted defaults, into the effective policy and the plan.
void settle_read_only(Planner& planner, const std::vector<std::string>& lifted_write,
                      EffectivePolicy& out) {
  profiles::FsPlan& plan = out.plan;
  const auto is_default = [&](const std::string& path) {
    return std::find(planner.default_read_only.begin(), planner.default_read_only.end(), path) !=
           planner.default_read_only.end();
  };
  std::erase_if(planner.read_only, [&](const PlannedPath& p) {
    return is_default(p.path) && is_lifted(p.path, lifted_write);
  });
  dedupe(planner.read_only);
  dedupe(planner.pinned);
  for (const PlannedPath& p : planner.read_only) {
    out.policy.deny_write.push_back(p.path);
    if (is_default(p.path)) out.protected_paths.push_back(p.path);
  }
  std::erase_if(planner.pinned,
                [&](const std::string& path) { return is_lifted(path, lifted_write); });
  // Only a carve-out inside a writable root changes anything; the rest is read-only already.
  for (PlannedPath& p : planner.read_only) {
    if (planner.under_writable(p.path)) plan.read_only.push_back(std::move(p));
  }
  sort_by_depth(plan.read_only);
  plan.pinned = std::move(planner.pinned);
  plan_sealed(planner, plan);
  out.protected_paths.insert(out.protected_paths.end(), plan.startup_guarded.begin(),
                             plan.startup_guarded.end());
}

// One unreadable candidate that exists: refused when it would hide the workspace or a writable
// root, or when another name (a hard link) would still reach it; else planned.
Result<void> plan_unreadable_path(const std::string& candidate, const std::string& path,
                                  bool is_default, const PathContext& context,
                                  EffectivePolicy& out) {
  const SandboxPolicy& policy = out.policy;
  profiles::FsPlan& plan = out.plan;
  if (path == "/" || is_beneath(policy.workspace_root, path)) {
    return InvalidInput{fmt::format(
        "deny_read entry {} contains the workspace {}; name the paths inside it to hide",
        text::quoted(candidate), text::quoted(policy.workspace_root))};
  }
  for (const std::string& root : plan.writable) {
    if (is_beneath(root, path)) {
      return InvalidInput{fmt::format(
          "deny_read entry {} contains the writable root {}; a root cannot be both writable "
          "and unreadable. Drop one of them",
          text::quoted(candidate), text::quoted(root))};
    }
  }
  // The private state's files are made by this program alone (O_EXCL, in directories no
  // confined run can write), so none has a name elsewhere, and a busy job store must not
  // refuse every call.
  const bool ours = std::find(context.private_state.begin(), context.private_state.end(),
                              candidate) != context.private_state.end();
  if (auto refused = ours ? std::nullopt : hard_link_refusal(candidate, path)) {
    return InvalidInput{*refused};
  }
  plan.unreadable.push_back({path, is_directory(path), ours});
  if (is_default) out.protected_paths.push_back(path);
  return {};
}

// Unreadable paths: the secrets list, the caller's own entries and the sandbox's private state.
Result<void> plan_unreadable(const SandboxPolicy& policy, const PathContext& context,
                             EffectivePolicy& out) {
  profiles::FsPlan& plan = out.plan;
  std::vector<std::string> deny_read = policy.deny_read;
  const std::vector<std::string> lifted_read = take_lifted(deny_read);
  std::vector<std::pair<std::string, bool>> candidates;  // path, is a default
  if (!context.home.empty()) {
    for (const std::string_view secret : home_secrets()) {
      candidates.emplace_back(context.home + "/" + std::string(secret), true);
    }
  }
  for (const std::string& entry : deny_read) {
    for (const std::string& match : expand_last_component(lexically_normalize(entry))) {
      candidates.emplace_back(match, false);
    }
  }
  for (const std::string& dir : context.private_state) candidates.emplace_back(dir, true);
  for (const auto& [candidate, is_default] : candidates) {
    if (!lstat_of(candidate)) continue;
    const auto path = existing_canonical(candidate);
    if (!path || (is_default && is_lifted(*path, lifted_read))) continue;
    if (auto planned = plan_unreadable_path(candidate, *path, is_default, context, out); !planned) {
      return planned.error();
    }
  }
  dedupe(plan.unreadable);
  sort_by_depth(plan.unreadable);
  // A path beneath another unreadable one is hidden with it; listing it again would make bwrap
  // mount inside a directory nobody may enter and Landlock grant its hidden siblings.
  std::vector<PlannedPath> outermost;
  for (PlannedPath& p : plan.unreadable) {
    const bool covered = std::any_of(outermost.begin(), outermost.end(), [&](const PlannedPath& o) {
      return o.directory && is_beneath(p.path, o.path);
    });
    if (!covered) outermost.push_back(std::move(p));
  }
  plan.unreadable = std::move(outermost);
  for (const PlannedPath& p : plan.unreadable) out.policy.deny_read.push_back(p.path);
  return {};
}

}  // namespace

Result<EffectivePolicy> effective_policy(const SandboxPolicy& policy, const PathContext& context) {
  EffectivePolicy out{policy, {}, {}};
  SandboxPolicy& effective = out.policy;
  profiles::FsPlan& plan = out.plan;
  const bool workspace_write = policy.mode == ConfinedSandboxMode::kWorkspaceWrite;
  effective.allow_write.clear();
  effective.deny_write.clear();
  effective.deny_read.clear();
  if (!workspace_write) effective.allow_cache.clear();
  if (workspace_write) {
    if (auto roots = resolve_writable_roots(policy, context, effective.allow_write); !roots) {
      return roots.error();
    }
  }
  plan.writable = effective.allow_write;
  std::stable_sort(plan.writable.begin(), plan.writable.end(),
                   [](const std::string& a, const std::string& b) { return depth(a) < depth(b); });

  std::vector<std::string> deny_write = policy.deny_write;
  const std::vector<std::string> lifted_write = take_lifted(deny_write);
  Planner planner{policy, context, {}, {}, {}, {}, {}, {}};
  if (workspace_write) {
    if (auto planned = plan_carve_outs(planner, deny_write, lifted_write, plan); !planned) {
      return planned.error();
    }
  }
  settle_read_only(planner, lifted_write, out);

  if (auto planned = plan_unreadable(policy, context, out); !planned) return planned.error();
  dedupe(out.protected_paths);
  if (!plan.unreadable.empty()) plan_read_grants(plan);
  return out;
}

std::string absolute_rule_path(std::string_view entry, std::string_view cwd,
                               std::string_view home) {
  std::string prefix;
  if (entry.starts_with('!')) {
    prefix = "!";
    entry.remove_prefix(1);
  }
  if (entry.empty() || entry.find('\0') != std::string_view::npos) {
    return prefix + std::string(entry);  // left for validate_policy to name
  }
  std::string path;
  if (entry == "~" || entry.starts_with("~/")) {
    if (home.empty()) return prefix + std::string(entry);
    path = std::string(home) + std::string(entry.substr(1));
  } else if (entry.front() == '/') {
    path = std::string(entry);
  } else {
    path = std::string(cwd) + "/" + std::string(entry);
  }
  return prefix + lexically_normalize(path);
}

std::vector<std::string> split_cache_names(const std::vector<std::string>& values) {
  std::vector<std::string> names;
  for (const std::string& value : values) {
    std::size_t start = 0;
    while (start <= value.size()) {
      const std::size_t end = std::min(value.find(',', start), value.size());
      std::string name = trim(std::string_view(value).substr(start, end - start));
      if (!name.empty()) names.push_back(std::move(name));
      start = end + 1;
    }
  }
  return names;
}

std::optional<std::string> writable_root_covering(std::string_view path,
                                                  const std::vector<std::string>& roots) {
  if (path.empty()) return std::nullopt;
  const std::string canonical = existing_canonical(std::string(path)).value_or(std::string(path));
  for (const std::string& root : roots) {
    const std::string root_canonical = existing_canonical(root).value_or(root);
    if (is_beneath(canonical, root_canonical)) return root;
  }
  return std::nullopt;
}

nlohmann::json effective_policy_json(const EffectivePolicy& effective) {
  const SandboxPolicy& policy = effective.policy;
  return nlohmann::json{{"mode", wire_name(policy.mode)},
                        {"workspaceRoot", policy.workspace_root},
                        {"network", wire_name(policy.network)},
                        {"allowWrite", policy.allow_write},
                        {"denyWrite", policy.deny_write},
                        {"denyRead", policy.deny_read},
                        {"allowCache", policy.allow_cache},
                        {"protected", effective.protected_paths},
                        {"networkAllow", policy.network_allow.allow},
                        {"networkDeny", policy.network_allow.deny}};
}

}  // namespace dsh::sandbox::policy
