// SPDX-License-Identifier: Apache-2.0
#include "write_rules.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

namespace landlock_run {
namespace {

constexpr size_t kPathMax = 4096;
constexpr size_t kConfigMax = 65536;  // larger configs are refused, never truncated

// Files git keeps directly in a git directory (gitrepository-layout(5), the sequencer, bisect,
// notes and gc state), each also as NAME.lock, git's lock file for it. None is read as
// configuration or run. (The launcher links nothing of src/: the check after the run that
// chains without it keep, src/policy/git_guard.cpp, has its own copy of such a list.)
constexpr const char* kGitFiles[] = {
    "HEAD",
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
    "BISECT_EXPECTED_REV",
    "BISECT_ANCESTORS_OK",
    "BISECT_NAMES",
    "BISECT_TERMS",
    "BISECT_RUN",
    "BISECT_HEAD",
    "SQUASH_MSG",
    "COMMIT_EDITMSG",
    "TAG_EDITMSG",
    "EDIT_DESCRIPTION",
    "NOTES_EDITMSG",
    "NOTES_MERGE_REF",
    "NOTES_MERGE_PARTIAL",
    "PULLREQ_EDITMSG",
    "index",
    "packed-refs",
    "packed-refs.new",
    "shallow",
    "description",
    "gc.pid",
    "gc.log",
};
// Prefixes of temporary index files (git stash, git commit PATHS, the split index).
constexpr const char* kGitFilePrefixes[] = {"index.stash.", "next-index-", "sharedindex."};
// Directories whose whole content is data: objects, references, reflogs, the state of a rebase,
// a cherry-pick, a notes merge and rerere, git-lfs's objects.
constexpr const char* kGitDataTrees[] = {
    "objects",   "refs",     "logs", "rebase-merge",         "rebase-apply",
    "sequencer", "rr-cache", "lfs",  "NOTES_MERGE_WORKTREE",
};
// info/: ignore patterns, the dumb-transport ref list (and its old cache) and the sparse-checkout
// patterns.
constexpr const char* kGitInfoFiles[] = {"exclude", "refs", "rev-cache", "sparse-checkout"};
// update-server-info writes info/refs through a temporary file of this prefix.
constexpr char kGitInfoTemporary[] = "refs_";

// The config keys a run may write ("section.key", or "section.*.key" for any subsection): git
// init's core keys, the committer's identity, a branch's upstream and description. Every other
// key (core.fsmonitor, core.hooksPath, core.sshCommand, include.path, alias.*, filter.*,
// remote.*.uploadpack, ...) can name a program or another file to read, and is refused.
constexpr const char* kSafeConfigKeys[] = {
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.logallrefupdates",
    "core.symlinks",
    "core.ignorecase",
    "core.precomposeunicode",
    "extensions.objectformat",
    "user.name",
    "user.email",
    "branch.*.remote",
    "branch.*.merge",
    "branch.*.rebase",
    "branch.*.description",
    "remote.*.url",
    "remote.*.fetch",
};

// Beneath a home, the dot-entries that hold data only: caches of content a tool verifies before
// use, and histories. Everything else beneath a dot-entry is read-only: shell and editor startup
// files, tool configuration, plugin directories, version-manager shims, user bins and sites.
constexpr const char* kHomeDataPaths[] = {
    ".cache/pip/http", ".cache/pip/http-v2", ".npm/_cacache",
    ".npm/_logs",      ".bash_history",      ".python_history",
};

bool one_of(const char* name, const char* const* list, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (strcmp(name, list[i]) == 0) return true;
  }
  return false;
}

template <size_t N>
bool one_of(const char* name, const char* const (&list)[N]) {
  return one_of(name, list, N);
}

bool ends_with(const char* text, const char* suffix) {
  const size_t a = strlen(text);
  const size_t b = strlen(suffix);
  return a >= b && strcmp(text + a - b, suffix) == 0;
}

bool starts_with(const char* text, const char* prefix) {
  return strncmp(text, prefix, strlen(prefix)) == 0;
}

// The first component of `path` into `first`, the rest (after one slash) returned.
const char* split_first(const char* path, char* first, size_t capacity) {
  const char* slash = strchr(path, '/');
  const size_t length = slash != nullptr ? static_cast<size_t>(slash - path) : strlen(path);
  if (length >= capacity) {
    first[0] = '\0';
    return "";
  }
  memcpy(first, path, length);
  first[length] = '\0';
  return slash != nullptr ? slash + 1 : "";
}

// git init's probe for symbolic links and a case-insensitive filesystem: "t" and six characters
// of mkstemp's alphabet, created and removed at once.
bool is_init_probe(const char* name) {
  if (strlen(name) != 7 || name[0] != 't') return false;
  for (const char* c = name + 1; *c != '\0'; ++c) {
    const bool alnum =
        (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9');
    if (!alnum) return false;
  }
  return true;
}

// A file directly in a main git directory.
bool git_top_file_allowed(const char* name) {
  char base[256];
  if (snprintf(base, sizeof(base), "%s", name) >= static_cast<int>(sizeof(base))) return false;
  const bool lock = ends_with(base, ".lock");
  if (lock) base[strlen(base) - 5] = '\0';
  // config and config.worktree arrive only as a checked copy (commit_config); their lock files
  // are where git writes the new text.
  if (lock && (strcmp(base, "config") == 0 || strcmp(base, "config.worktree") == 0)) return true;
  if (one_of(base, kGitFiles) || is_init_probe(base)) return true;
  for (const char* prefix : kGitFilePrefixes) {
    if (starts_with(base, prefix)) return true;
  }
  return false;
}

bool git_info_file(const char* name) {
  return one_of(name, kGitInfoFiles) ||
         (starts_with(name, kGitInfoTemporary) && strchr(name, '/') == nullptr);
}

bool alternates_name(const char* name) {
  return starts_with(name, "alternates") || starts_with(name, "http-alternates");
}

}  // namespace

bool git_name_allowed(const char* relative, GitKind kind, Change change, bool moved_directory) {
  char first[256];
  const char* rest = split_first(relative, first, sizeof(first));
  if (first[0] == '\0') return false;
  if (kind == GitKind::kWorktree) {
    // A linked worktree's own directory: HEAD, index, logs/, refs/, commondir, gitdir, locked
    // and the rebase state; git reads config.worktree there (extensions.worktreeConfig) and
    // nothing else as configuration.
    if (strcmp(first, "hooks") == 0) return false;
    if (*rest == '\0' && (strcmp(first, "config") == 0 || strcmp(first, "config.worktree") == 0)) {
      return false;
    }
    return !moved_directory || *rest != '\0' || one_of(first, kGitDataTrees);
  }
  if (one_of(first, kGitDataTrees)) {
    // A data directory itself, and objects/info, arrive only as directories made here: one moved
    // in or a link could hold alternates.
    if (moved_directory &&
        (*rest == '\0' || (strcmp(first, "objects") == 0 && strcmp(rest, "info") == 0))) {
      return false;
    }
    // objects/info/alternates names other object stores (and with them their repositories).
    if (strcmp(first, "objects") == 0 && starts_with(rest, "info/")) {
      return !alternates_name(rest + 5);
    }
    return true;
  }
  if (strcmp(first, "worktrees") == 0 || strcmp(first, "modules") == 0) {
    // worktrees/<name>/: a linked worktree's directory; modules/<name>/: a submodule's git
    // directory. Their content is judged as such a directory's own.
    char name[256];
    const char* inner = split_first(rest, name, sizeof(name));
    if (*rest == '\0' || *inner == '\0') return !moved_directory;
    return git_name_allowed(inner, strcmp(first, "worktrees") == 0 ? GitKind::kWorktree : kind,
                            change, moved_directory);
  }
  // Arrives with contents nobody checked, or leads elsewhere (git init's probe is a link).
  if (moved_directory && *rest == '\0') return is_init_probe(first);
  if (strcmp(first, "hooks") == 0) {
    // A sample is never run: git runs hooks/<event> only.
    return *rest == '\0' || (strchr(rest, '/') == nullptr && ends_with(rest, ".sample"));
  }
  if (strcmp(first, "info") == 0) return *rest == '\0' || git_info_file(rest);
  if (strcmp(first, "branches") == 0) return *rest == '\0';  // remotes named in files: config
  return *rest == '\0' && git_top_file_allowed(first);
}

namespace {

// One config line's key ("section.key" or "section.sub.key") against kSafeConfigKeys.
bool safe_key(const char* section, const char* subsection, const char* key) {
  char wanted[512];
  for (const char* safe : kSafeConfigKeys) {
    const bool wildcard = strstr(safe, ".*.") != nullptr;
    if (wildcard != (subsection != nullptr)) continue;
    if (wildcard) {
      snprintf(wanted, sizeof(wanted), "%s.*.%s", section, key);
    } else {
      snprintf(wanted, sizeof(wanted), "%s.%s", section, key);
    }
    if (strcasecmp(wanted, safe) == 0) return true;
  }
  return false;
}

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

// `[section]` or `[section "subsection"]`, the only header forms accepted (no escapes, no
// deprecated `[section.sub]`). False for anything else.
bool parse_header(const char* line, char* section, size_t capacity, bool* has_subsection) {
  const char* p = line + 1;
  size_t n = 0;
  while (name_char(*p) && n + 1 < capacity) section[n++] = *p++;
  section[n] = '\0';
  if (n == 0) return false;
  *has_subsection = false;
  if (*p == ' ') {
    ++p;
    if (*p++ != '"') return false;
    while (*p != '"' && *p != '\0' && *p != '\\') ++p;
    if (*p++ != '"') return false;
    *has_subsection = true;
  }
  if (*p++ != ']') return false;
  while (*p == ' ' || *p == '\t') ++p;
  return *p == '\0' || *p == '#' || *p == ';';
}

}  // namespace

bool config_text_safe(const char* text, size_t size) {
  if (size > kConfigMax || memchr(text, '\0', size) != nullptr) return false;
  char section[128] = "";
  bool subsection = false;
  bool in_section = false;
  char line[1024];
  size_t at = 0;
  while (at < size) {
    const char* end = static_cast<const char*>(memchr(text + at, '\n', size - at));
    const size_t length = end != nullptr ? static_cast<size_t>(end - (text + at)) : size - at;
    if (length >= sizeof(line)) return false;
    memcpy(line, text + at, length);
    line[length] = '\0';
    at += length + 1;
    if (length > 0 && line[length - 1] == '\\') return false;  // a continued value
    const char* p = line;
    while (*p == ' ' || *p == '\t') ++p;
    if (*p == '\0' || *p == '#' || *p == ';') continue;
    if (*p == '[') {
      if (!parse_header(p, section, sizeof(section), &subsection)) return false;
      in_section = true;
      continue;
    }
    char key[128];
    size_t n = 0;
    while (name_char(*p) && n + 1 < sizeof(key)) key[n++] = *p++;
    key[n] = '\0';
    while (*p == ' ' || *p == '\t') ++p;
    if (!in_section || n == 0 || (*p != '=' && *p != '\0')) return false;
    if (!safe_key(section, subsection ? "" : nullptr, key)) return false;
  }
  return true;
}

bool home_path_allowed(const char* relative) {
  // ~/bin is no dot-entry, but a login shell puts it on PATH (Debian's .profile).
  if (strcmp(relative, "bin") == 0 || starts_with(relative, "bin/")) return false;
  if (relative[0] != '.') return true;
  for (const char* data : kHomeDataPaths) {
    const size_t length = strlen(data);
    if (strncmp(relative, data, length) == 0 &&
        (relative[length] == '\0' || relative[length] == '/')) {
      return true;
    }
  }
  // The directories that lead to a data path may be made (mkdir -p), nothing else in them.
  for (const char* data : kHomeDataPaths) {
    const size_t length = strlen(relative);
    if (strncmp(data, relative, length) == 0 && data[length] == '/') return true;
  }
  return false;
}

namespace {

// Whatever its type: git's own test (access(2) on objects/ and refs/, which follows a symbolic
// link and accepts an executable file) must never find a git directory this one misses.
bool has_entry(int directory, const char* name) {
  struct stat st;
  return fstatat(directory, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

// The canonical path of an open directory, from procfs. False when it has none.
bool fd_path(int fd, char* out, size_t capacity) {
  char self[64];
  snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(self, out, capacity - 1);
  if (n <= 0 || out[0] != '/') return false;
  out[n] = '\0';
  return true;
}

const char* base_name(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

// Whether `directory` is a git directory, judged with `path` its name.
bool git_directory_at(int directory, const char* path) {
  if (strcmp(base_name(path), ".git") == 0) return true;
  if (has_entry(directory, "objects") && has_entry(directory, "refs")) return true;
  return has_entry(directory, "HEAD") && has_entry(directory, "commondir");
}

// The kind of the git directory `directory` at `path`: a linked worktree's when it sits in the
// worktrees/ directory of another git directory.
GitKind git_kind(int directory, const char* path) {
  const char* name = base_name(path);
  if (name == path || !has_entry(directory, "commondir")) return GitKind::kMain;
  const int parent = openat(directory, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (parent < 0) return GitKind::kMain;
  char parent_path[kPathMax];
  const bool worktrees = fd_path(parent, parent_path, sizeof(parent_path)) &&
                         strcmp(base_name(parent_path), "worktrees") == 0;
  close(parent);
  return worktrees ? GitKind::kWorktree : GitKind::kMain;
}

// The nearest git directory at or above `parent` (whose path is `parent_path`), walked up with
// "..": its kind, and `name`'s path relative to it into `relative`. False when there is none.
bool nearest_git_directory(int parent, const char* parent_path, const char* name, char* relative,
                           size_t capacity, GitKind* kind) {
  char path[kPathMax];
  if (snprintf(path, sizeof(path), "%s", parent_path) >= static_cast<int>(sizeof(path))) {
    return false;
  }
  int current = fcntl(parent, F_DUPFD_CLOEXEC, 0);
  size_t cut = strlen(path);  // path[0..cut) is `current`'s path
  bool found = false;
  while (current >= 0) {
    path[cut] = '\0';
    if (git_directory_at(current, path)) {
      *kind = git_kind(current, path);
      const char* below = parent_path + cut;
      while (*below == '/') ++below;
      found = snprintf(relative, capacity, "%s%s%s", below, *below != '\0' ? "/" : "", name) <
              static_cast<int>(capacity);
      break;
    }
    char* slash = strrchr(path, '/');
    if (slash == nullptr || cut <= 1) break;
    cut = slash == path ? 1 : static_cast<size_t>(slash - path);
    const int up = openat(current, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
    close(current);
    current = up;
  }
  if (current >= 0) close(current);
  return found;
}

// The names that complete a git directory's layout, with the one that must already be there.
bool completes_layout(int parent, const char* name) {
  if (strcmp(name, "objects") == 0) return has_entry(parent, "refs");
  if (strcmp(name, "refs") == 0) return has_entry(parent, "objects");
  if (strcmp(name, "HEAD") == 0) return has_entry(parent, "commondir");
  if (strcmp(name, "commondir") == 0) return has_entry(parent, "HEAD");
  return false;
}

// `path` (absolute) with "." dropped, ".." taking back one component and slashes single, into
// `out`: the path as spelled, not as resolved. False when it does not fit.
bool lexically_normal(const char* path, char* out, size_t capacity) {
  size_t length = 0;
  out[0] = '\0';
  const char* cursor = path;
  while (*cursor != '\0') {
    while (*cursor == '/') ++cursor;
    const char* end = strchr(cursor, '/');
    const size_t size = end != nullptr ? static_cast<size_t>(end - cursor) : strlen(cursor);
    if (size == 0) break;
    if (size == 2 && strncmp(cursor, "..", 2) == 0) {
      while (length > 0 && out[length - 1] != '/') --length;
      if (length > 0) --length;
    } else if (!(size == 1 && cursor[0] == '.')) {
      if (length + 1 + size + 1 > capacity) return false;
      out[length++] = '/';
      memcpy(out + length, cursor, size);
      length += size;
    }
    cursor += size;
  }
  if (length == 0) out[length++] = '/';
  out[length] = '\0';
  return true;
}

}  // namespace

bool is_git_directory(int directory) {
  char path[kPathMax];
  return fd_path(directory, path, sizeof(path)) && git_directory_at(directory, path);
}

bool home_allows(const char* path, const char* const* homes, size_t home_count) {
  char normal[kPathMax];
  if (!lexically_normal(path, normal, sizeof(normal))) return false;
  for (size_t i = 0; i < home_count; ++i) {
    const size_t length = strlen(homes[i]);
    if (strncmp(normal, homes[i], length) != 0) continue;
    if (normal[length] != '\0' && normal[length] != '/') continue;
    const char* below = normal + length;
    while (*below == '/') ++below;
    if (*below != '\0' && !home_path_allowed(below)) return false;
  }
  return true;
}

int rule_verdict(int parent, const char* parent_path, const char* name, Change change,
                 bool moved_directory, const char* const* homes, size_t home_count) {
  char target[kPathMax];
  if (snprintf(target, sizeof(target), "%s/%s", parent_path, name) >=
          static_cast<int>(sizeof(target)) ||
      !home_allows(target, homes, home_count)) {
    return EACCES;
  }
  // An existing .git file or link (a linked worktree's, a submodule's pointer to its git
  // directory) stays as it is; a new one may be made (git worktree add).
  struct stat st;
  if (strcmp(name, ".git") == 0 && fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      !S_ISDIR(st.st_mode)) {
    return EACCES;
  }
  char relative[kPathMax];
  GitKind kind = GitKind::kMain;
  if (nearest_git_directory(parent, parent_path, name, relative, sizeof(relative), &kind)) {
    if (git_name_allowed(relative, kind, change, moved_directory)) return 0;
    const bool config = strcmp(name, "config") == 0 || strcmp(name, "config.worktree") == 0;
    return config && change == Change::kCreate && !moved_directory ? kConfigCopyOnly : EACCES;
  }
  // Not in a git directory yet: a name that would make `parent` one is a change of its kind.
  if (change == Change::kCreate && completes_layout(parent, name)) {
    return vet_new_git_directory(parent);
  }
  return 0;
}

namespace {

// Reads the regular file `name` in `directory` (not through a symbolic link) into `out`.
ssize_t read_small_file(int directory, const char* name, char* out, size_t capacity, mode_t* mode) {
  const int fd = openat(directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  ssize_t total = -1;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<size_t>(st.st_size) < capacity) {
    *mode = st.st_mode & 0777;
    total = 0;
    for (;;) {
      const ssize_t n = read(fd, out + total, capacity - static_cast<size_t>(total));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      total += n;
      if (static_cast<size_t>(total) >= capacity) {
        total = -1;
        break;
      }
    }
  }
  close(fd);
  return total;
}

// Writes `text` as a new file beside `target` in `directory` and renames it over `target`: the
// object git finds there afterwards is the supervisor's, which no descriptor of the command's
// reaches.
int write_checked_copy(int directory, const char* target, const char* text, size_t size,
                       mode_t mode) {
  char temporary[64];
  snprintf(temporary, sizeof(temporary), ".landlock-run-config-%d", getpid());
  unlinkat(directory, temporary, 0);
  const int fd = openat(directory, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        mode & 0666);
  if (fd < 0) return errno;
  size_t done = 0;
  int error = 0;
  while (done < size && error == 0) {
    const ssize_t n = write(fd, text + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) error = n < 0 ? errno : EIO;
    if (n > 0) done += static_cast<size_t>(n);
  }
  if (close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && renameat(directory, temporary, directory, target) != 0) error = errno;
  if (error != 0) unlinkat(directory, temporary, 0);
  return error;
}

// Every entry of `name` in `directory` passes `keep`; true when it has none or does not exist.
template <typename Keep>
bool entries_pass(int directory, const char* name, Keep keep) {
  const int fd = openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT;
  DIR* listing = fdopendir(fd);
  if (listing == nullptr) {
    close(fd);
    return false;
  }
  bool pass = true;
  while (const dirent* entry = readdir(listing)) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
    if (!keep(entry->d_name)) pass = false;
  }
  closedir(listing);
  return pass;
}

}  // namespace

int vet_new_git_directory(int directory) {
  const bool top = entries_pass(directory, ".", [&](const char* name) {
    if (strcmp(name, "config") == 0 || strcmp(name, "hooks") == 0 || strcmp(name, "info") == 0 ||
        strcmp(name, "branches") == 0) {
      return true;  // checked below
    }
    return one_of(name, kGitDataTrees) || git_top_file_allowed(name);
  });
  const bool hooks =
      entries_pass(directory, "hooks", [](const char* name) { return ends_with(name, ".sample"); });
  const bool info =
      entries_pass(directory, "info", [](const char* name) { return git_info_file(name); });
  const bool branches = entries_pass(directory, "branches", [](const char*) { return false; });
  if (!top || !hooks || !info || !branches) return EACCES;
  struct stat st;
  if (fstatat(directory, "config", &st, AT_SYMLINK_NOFOLLOW) != 0) return 0;
  // A config written before the directory was a git one: checked, and replaced by a copy so that
  // a descriptor kept open on it writes nothing git reads.
  static char text[kConfigMax];
  mode_t mode = 0644;
  const ssize_t size = read_small_file(directory, "config", text, sizeof(text), &mode);
  if (size < 0 || !config_text_safe(text, static_cast<size_t>(size))) return EACCES;
  return write_checked_copy(directory, "config", text, static_cast<size_t>(size), mode);
}

int commit_config(int source_parent, const char* source, int target_parent, const char* target) {
  static char text[kConfigMax];
  mode_t mode = 0644;
  const ssize_t size = read_small_file(source_parent, source, text, sizeof(text), &mode);
  if (size < 0 || !config_text_safe(text, static_cast<size_t>(size))) return EACCES;
  const int error =
      write_checked_copy(target_parent, target, text, static_cast<size_t>(size), mode);
  if (error != 0) return error;
  // The lock file is gone afterwards, as after git's own rename.
  unlinkat(source_parent, source, 0);
  return 0;
}

}  // namespace landlock_run
