// SPDX-License-Identifier: Apache-2.0
#include "local/workspace_record.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <optional>
#include <system_error>
#include <unordered_set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/io.h"
#include "base/text.h"
#include "dsh/sandbox/roots.h"
#include "dsh/sandbox/trust.h"
#include "local/private_directory.h"
#include "local/probe_cache.h"
#include "policy/effective_policy.h"
#include "seam/call_scope.h"
#include "seam/trusted_file.h"

namespace dsh::sandbox::local {

namespace {

constexpr int kRecordVersion = 1;

std::string errno_text(int error) { return std::generic_category().message(error); }

std::string record_fix(const std::string& path) {
  return fmt::format(
      "it lists the directories confined runs could write, so that a symlink planted there never "
      "redirects a later workspace; fix or remove {} (removing forgets those directories), or "
      "pass the workspace by its real path",
      text::quoted(path));
}

// A record under $XDG_RUNTIME_DIR that fails the check: the variable chose the place, so the
// message names it and the fix.
std::string xdg_fix(const InvalidInput& error) {
  return fmt::format(
      "{}; $XDG_RUNTIME_DIR chose that place: set it to a private directory of yours outside every "
      "directory a confined run could write (your login's /run/user/{}), or unset it",
      error.message, ::geteuid());
}

// The per-user cache directory, or why there is none to use.
Result<std::string> record_directory() {
  std::string directory = user_cache_directory();
  if (directory.empty()) {
    return InvalidInput{
        "there is no private per-user directory to keep the record of the directories confined "
        "runs could write ($XDG_RUNTIME_DIR is unset, or not a 0700 directory of yours outside "
        "/tmp and $TMPDIR); set XDG_RUNTIME_DIR to one, or pass the workspace by its real path"};
  }
  return directory;
}

std::string parent_of(const std::string& path) {
  const std::string parent = path.substr(0, path.rfind('/'));
  return parent.empty() ? "/" : parent;
}

// The record's text read through `dir`, "" when there is none.
Result<std::string> read_record_text(const TrustedPath& dir, const std::string& path) {
  const std::string name(kWorkspaceRecordName);
  const UniqueFd fd(
      ::openat(dir.fd.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return std::string();
    return InvalidInput{fmt::format("the record {} cannot be opened ({}); {}", text::quoted(path),
                                    errno_text(errno), record_fix(path))};
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != ::geteuid() ||
      (info.st_mode & 0077) != 0) {
    return InvalidInput{fmt::format("the record {} is not a regular 0600 file of uid {}; {}",
                                    text::quoted(path), ::geteuid(), record_fix(path))};
  }
  ::fcntl(fd.get(), F_SETFL, 0);
  auto text =
      read_trusted_file(TrustedPath{UniqueFd(::dup(fd.get())), path}, kMaxWorkspaceRecordBytes);
  if (!text) {
    return InvalidInput{fmt::format("the record: {}; {}", text.error().message, record_fix(path))};
  }
  return std::move(text).value();
}

Result<std::vector<std::string>> read_in(const TrustedPath& dir, const std::string& path) {
  auto text = read_record_text(dir, path);
  if (!text) return text.error();
  if (text.value().empty()) return std::vector<std::string>{};
  auto parsed = parse_workspace_record(text.value());
  if (!parsed) {
    return InvalidInput{fmt::format("the record {} is corrupt: {}; {}", text::quoted(path),
                                    parsed.error().message, record_fix(path))};
  }
  // Only canonical paths are ever recorded: this call's trust checks take them as they are,
  // rather than a realpath of each (a readlink per component) every time roots are gathered.
  CallScope::keep_canonical(parsed.value());
  return parsed;
}

}  // namespace

namespace {

// lexically_normalize(path) == path, without building the normalized copy: absolute, and no
// empty, "." or ".." component, no trailing slash (but "/" itself).
bool is_normalized_absolute(std::string_view path) {
  if (path.empty() || path.front() != '/') return false;
  if (path == "/") return true;
  if (path.back() == '/') return false;
  std::size_t start = 1;
  while (start <= path.size()) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    const std::string_view part = path.substr(start, slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = slash + 1;
  }
  return true;
}

// The record exactly as format_workspace_record writes it when every path is printable ASCII
// without a quote or backslash (so its JSON string is the path itself): the list, or nullopt
// for any other text, which the JSON parser then reads. The answer is the parser's for such a
// text; only the parser's price (most of a call's instructions at 256 roots) is saved.
std::optional<std::vector<std::string_view>> plain_record_entries(std::string_view text) {
  constexpr std::string_view kHead = R"({"version":1,"workspaces":[)";
  if (text.ends_with('\n')) text.remove_suffix(1);
  if (!text.starts_with(kHead) || !text.ends_with("]}")) return std::nullopt;
  std::string_view list = text.substr(kHead.size(), text.size() - kHead.size() - 2);
  std::vector<std::string_view> entries;
  while (!list.empty()) {
    if (list.front() != '"') return std::nullopt;
    std::size_t close = 1;
    while (close < list.size() && list[close] != '"') {
      const char c = list[close];
      if (c < 0x20 || c > 0x7e || c == '\\') return std::nullopt;
      ++close;
    }
    if (close == list.size()) return std::nullopt;
    entries.push_back(list.substr(1, close - 1));
    list.remove_prefix(close + 1);
    if (list.empty()) break;
    if (list.front() != ',' || list.size() == 1) return std::nullopt;
    list.remove_prefix(1);
  }
  return entries;
}

Result<std::vector<std::string>> checked_roots(const std::vector<std::string_view>& entries) {
  if (entries.size() > kMaxRecordedWorkspaces) {
    return InvalidInput{
        fmt::format("\"workspaces\" must be an array of at most {} paths", kMaxRecordedWorkspaces)};
  }
  std::vector<std::string> roots;
  roots.reserve(entries.size());
  std::unordered_set<std::string_view> seen;
  for (const std::string_view root : entries) {
    if (root.find('\0') != std::string_view::npos || !is_normalized_absolute(root)) {
      return InvalidInput{fmt::format("{} is not an absolute normalized path", text::quoted(root))};
    }
    if (!seen.insert(root).second) {
      return InvalidInput{fmt::format("{} is listed twice", text::quoted(root))};
    }
    roots.emplace_back(root);
  }
  return roots;
}

}  // namespace

Result<std::vector<std::string>> parse_workspace_record(std::string_view text) {
  if (const auto plain = plain_record_entries(text)) return checked_roots(*plain);
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return InvalidInput{"it is not JSON"};
  }
  if (!value.is_object() || value.size() != 2 || !value.contains("version") ||
      !value.contains("workspaces")) {
    return InvalidInput{R"(expected exactly the keys "version" and "workspaces")"};
  }
  if (!value["version"].is_number_integer() || value["version"].get<int>() != kRecordVersion) {
    return InvalidInput{fmt::format("\"version\" must be {}", kRecordVersion)};
  }
  const nlohmann::json& list = value["workspaces"];
  if (!list.is_array() || list.size() > kMaxRecordedWorkspaces) {
    return InvalidInput{
        fmt::format("\"workspaces\" must be an array of at most {} paths", kMaxRecordedWorkspaces)};
  }
  std::vector<std::string_view> entries;
  for (const nlohmann::json& entry : list) {
    if (!entry.is_string()) return InvalidInput{"every workspace must be a string"};
    entries.emplace_back(entry.get_ref<const std::string&>());
  }
  return checked_roots(entries);
}

std::string format_workspace_record(std::span<const std::string> roots) {
  return nlohmann::json{{"version", kRecordVersion}, {"workspaces", roots}}.dump() + "\n";
}

namespace {

// Whether some entry of `all` lies strictly beneath another one: each entry's ancestors looked up
// in a set, rather than every pair compared.
bool any_nested(const std::vector<std::string>& all) {
  const std::unordered_set<std::string_view> names(all.begin(), all.end());
  for (const std::string& root : all) {
    if (root != "/" && names.contains("/")) return true;
    for (std::size_t slash = root.find('/', 1); slash != std::string::npos;
         slash = root.find('/', slash + 1)) {
      if (names.contains(std::string_view(root).substr(0, slash))) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<std::string> merge_workspace_record(std::span<const std::string> recorded,
                                                std::span<const std::string> added,
                                                std::size_t limit) {
  std::vector<std::string> all(recorded.begin(), recorded.end());
  all.insert(all.end(), added.begin(), added.end());
  std::reverse(all.begin(), all.end());
  if (!any_nested(all)) {
    // Then the rule below keeps the newest of equal entries and nothing else: the same answer
    // without comparing every pair (the record read on every call is such a list).
    std::vector<std::string> kept;
    kept.reserve(all.size());  // no reallocation: `seen` views the kept strings themselves
    std::unordered_set<std::string_view> seen;
    for (std::string& root : all) {
      if (root.empty() || seen.contains(root)) continue;
      kept.push_back(std::move(root));
      seen.insert(kept.back());
    }
    if (kept.size() > limit) kept.resize(limit);
    std::reverse(kept.begin(), kept.end());
    return kept;
  }
  // Newest first: an entry covered by a kept one (equal or beneath) adds nothing; one covering
  // kept entries replaces the newest of them, in its place.
  std::vector<std::string> kept;
  for (const std::string& root : all) {
    if (root.empty()) continue;
    if (std::any_of(kept.begin(), kept.end(),
                    [&root](const std::string& k) { return is_beneath(root, k); })) {
      continue;
    }
    const auto covered = std::find_if(
        kept.begin(), kept.end(), [&root](const std::string& k) { return is_beneath(k, root); });
    if (covered == kept.end()) {
      kept.push_back(root);
      continue;
    }
    *covered = root;
    kept.erase(std::remove_if(std::next(covered), kept.end(),
                              [&root](const std::string& k) { return is_beneath(k, root); }),
               kept.end());
  }
  if (kept.size() > limit) kept.resize(limit);
  std::reverse(kept.begin(), kept.end());
  return kept;
}

namespace {

// The anchor's parent is sticky /var/tmp, which every user may write but in which none may
// rename or remove another's entry, and no confined run may write at all: the anchor is checked
// itself (this user's, 0700, reached without a symlink), never its parent as a place to trust.
Result<TrustedPath> open_record_directory(const std::string& dir_path,
                                          std::span<const std::string> untrusted_roots) {
  const std::string path = dir_path + "/" + std::string(kWorkspaceRecordName);
  auto dir = open_private_directory(dir_path, untrusted_roots);
  if (!dir) {
    return InvalidInput{fmt::format("the directory of the record {} cannot be trusted: {}; {}",
                                    text::quoted(path), dir.error().message, record_fix(path))};
  }
  if (dir_path == fallback_jobs_base() && dir.value().path != dir_path) {
    return InvalidInput{
        fmt::format("the directory of the record {} is a symlink (to {}); remove it",
                    text::quoted(path), text::quoted(dir.value().path))};
  }
  return dir;
}

// The record in `dir_path`, its directory checked against `untrusted_roots`.
Result<std::vector<std::string>> read_record_in(const std::string& dir_path,
                                                std::span<const std::string> untrusted_roots) {
  const std::string path = dir_path + "/" + std::string(kWorkspaceRecordName);
  struct stat info {};
  if (::lstat(dir_path.c_str(), &info) != 0 && errno == ENOENT) {
    if (dir_path == fallback_jobs_base()) return std::vector<std::string>{};  // sticky parent
    // Never created, unless removed by someone who could write its parent: check that one.
    auto parent = check_trusted_path(parent_of(dir_path), untrusted_roots, TrustedKind::kDirectory);
    if (!parent) {
      return InvalidInput{fmt::format("the directory holding the record {} cannot be trusted: {}",
                                      text::quoted(path), parent.error().message)};
    }
    return std::vector<std::string>{};
  }
  auto dir = open_record_directory(dir_path, untrusted_roots);
  if (!dir) return dir.error();
  return read_in(dir.value(), path);
}

// Adds `roots` to the record in `dir_path`, made (0700) when missing.
Result<void> add_record_in(const std::string& dir_path, std::span<const std::string> roots,
                           std::span<const std::string> untrusted_roots) {
  const std::string path = dir_path + "/" + std::string(kWorkspaceRecordName);
  // The parent must pass the check before anything is created in it (the anchor's: see
  // open_record_directory).
  if (dir_path != fallback_jobs_base()) {
    auto parent = check_trusted_path(parent_of(dir_path), untrusted_roots, TrustedKind::kDirectory);
    if (!parent) {
      return InvalidInput{fmt::format("the directory holding the record {} cannot be trusted: {}",
                                      text::quoted(path), parent.error().message)};
    }
  }
  ::mkdir(dir_path.c_str(), 0700);
  auto dir = open_record_directory(dir_path, untrusted_roots);
  if (!dir) return dir.error();
  const int dirfd = dir.value().fd.get();
  // Read, merge and replace under an exclusive lock, so concurrent calls never lose each
  // other's roots. flock(2) needs a real descriptor: a lock file beside the record.
  const UniqueFd lock(::openat(dirfd, ".workspaces.lock",
                               O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
  struct stat lock_info {};
  if (lock.get() < 0 || ::fstat(lock.get(), &lock_info) != 0 || !S_ISREG(lock_info.st_mode) ||
      ::flock(lock.get(), LOCK_EX) != 0) {
    return InvalidInput{
        fmt::format("cannot lock the record {}: {}", text::quoted(path), errno_text(errno))};
  }
  auto recorded = read_in(dir.value(), path);
  if (!recorded) return recorded.error();
  const std::vector<std::string> merged = merge_workspace_record(recorded.value(), roots);
  if (merged == recorded.value()) return {};
  const auto cannot_write = [&path](int error) -> Result<void> {
    return InvalidInput{
        fmt::format("cannot write the record {}: {}", text::quoted(path), errno_text(error))};
  };
  std::array<unsigned char, 8> random{};
  if (::getrandom(random.data(), random.size(), 0) != static_cast<ssize_t>(random.size())) {
    return cannot_write(errno);
  }
  std::string temp = ".workspaces-";
  for (const unsigned char byte : random) temp += fmt::format("{:02x}", byte);
  const UniqueFd fd(
      ::openat(dirfd, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (fd.get() < 0) return cannot_write(errno);
  const std::string text = format_workspace_record(merged);
  const bool written = io::write_all(fd.get(), text) == text.size() && ::fsync(fd.get()) == 0;
  const int error = errno;
  // rename(2) is atomic: a concurrent reader sees the old record or the new one, never half.
  const std::string name(kWorkspaceRecordName);
  if (!written || ::renameat(dirfd, temp.c_str(), dirfd, name.c_str()) != 0) {
    const int rename_error = written ? errno : error;
    ::unlinkat(dirfd, temp.c_str(), 0);
    return cannot_write(rename_error);
  }
  return {};
}

}  // namespace

std::string anchor_record_directory() {
  const std::string cache = user_cache_directory();
  if (::geteuid() == 0 || cache.empty()) return {};
  return fallback_jobs_base();
}

Result<std::vector<std::string>> read_anchor_record(std::span<const std::string> untrusted_roots) {
  const std::string anchor = anchor_record_directory();
  if (anchor.empty()) return std::vector<std::string>{};
  return read_record_in(anchor, untrusted_roots);
}

Result<std::vector<std::string>> read_workspace_record(
    std::span<const std::string> untrusted_roots) {
  auto directory = record_directory();
  if (!directory) return directory.error();
  auto read = read_record_in(directory.value(), untrusted_roots);
  if (!read && !anchor_record_directory().empty()) return InvalidInput{xdg_fix(read.error())};
  return read;
}

Result<void> add_to_workspace_record(std::span<const std::string> roots,
                                     std::span<const std::string> untrusted_roots) {
  auto directory = record_directory();
  if (!directory) return directory.error();
  // The anchor first: a call killed in between has still left the roots where no variable points.
  const std::string anchor = anchor_record_directory();
  if (!anchor.empty()) {
    if (auto added = add_record_in(anchor, roots, untrusted_roots); !added) return added;
  }
  auto added = add_record_in(directory.value(), roots, untrusted_roots);
  if (!added && !anchor.empty()) return InvalidInput{xdg_fix(added.error())};
  return added;
}

namespace {

// The extra writable roots `policy` makes effective (canonical, the cache presets' included), as
// the provider will: nothing when it would refuse them (and then nothing runs).
std::vector<std::string> effective_extra_roots(const SandboxPolicy& policy) {
  if (!validate_policy(policy)) return {};
  policy::PathContext context = policy::process_path_context();
  context.trusted_state.push_back(user_cache_directory());
  context.git_state = false;  // the roots are all this needs: the plan walks them for git
  auto effective = policy::effective_policy(policy, context);
  if (!effective) return {};
  return effective.value().policy.allow_write;
}

}  // namespace

Result<void> record_writable_roots(const std::string& workspace, const SandboxPolicy& policy,
                                   std::span<const std::string> untrusted_roots) {
  // A danger-full-access run is unconfined by the caller's choice: it can write anything the
  // caller can, the record included, so recording it would promise nothing.
  if (policy.mode != ConfinedSandboxMode::kWorkspaceWrite) return {};
  if (user_cache_directory().empty()) return {};
  std::vector<std::string> roots = {workspace};
  for (std::string& root : effective_extra_roots(policy)) roots.push_back(std::move(root));
  auto added = add_to_workspace_record(roots, untrusted_roots);
  if (!added) {
    return InvalidInput{fmt::format(
        "cannot record the workspace {} and its extra writable roots as directories a confined "
        "run can write, so the command was not started: {}",
        text::quoted(workspace), added.error().message)};
  }
  return {};
}

}  // namespace dsh::sandbox::local
