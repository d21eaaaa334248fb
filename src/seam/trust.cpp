// SPDX-License-Identifier: Apache-2.0
#include "dsh/sandbox/trust.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <deque>
#include <optional>
#include <system_error>
#include <unordered_set>

#include <fmt/format.h>

#include "base/io.h"
#include "base/text.h"
#include "dsh/sandbox/roots.h"
#include "seam/call_scope.h"
#include "seam/trusted_file.h"

namespace dsh::sandbox {

namespace {

// Linux's own limit on symlinks followed in one lookup (MAXSYMLINKS, fs/namei.c).
constexpr int kMaxSymlinks = 40;

std::string errno_text(int error) { return std::generic_category().message(error); }

bool owned_by_caller_or_root(const struct stat& info) {
  return info.st_uid == 0 || info.st_uid == ::geteuid();
}

// Appended into one reserved string. `"/" + std::string(name)` inserts at the front of a
// temporary, and GCC 12 at -O3 inlines that insert into a memcpy whose source and destination it
// cannot prove apart (a -Wrestrict false positive, an error under DSH_WERROR); appending has no
// such copy, and allocates once.
std::string join(const std::string& dir, std::string_view name) {
  std::string path;
  path.reserve(dir.size() + 1 + name.size());
  if (dir != "/") path += dir;
  path += '/';
  path += name;
  return path;
}

std::optional<std::string> root_above(const std::string& path, std::span<const std::string> roots) {
  for (const std::string& root : roots) {
    if (!root.empty() && is_beneath(path, root)) return root;
  }
  return std::nullopt;
}

// Owner and permission bits of one checked object (a directory on the way, or the target).
Result<void> check_owner_and_mode(const struct stat& info, const std::string& path,
                                  bool on_the_way) {
  if (!owned_by_caller_or_root(info)) {
    return InvalidInput{fmt::format("{} is owned by uid {}, neither you (uid {}) nor root",
                                    text::quoted(path), info.st_uid, ::geteuid())};
  }
  // A sticky directory (/var/tmp) lets others create entries but not rename or remove ours;
  // the entry we go through next is checked for its own owner.
  const bool sticky_dir = on_the_way && S_ISDIR(info.st_mode) && (info.st_mode & S_ISVTX) != 0;
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0 && !sticky_dir) {
    return InvalidInput{fmt::format("{} is writable by its group or by others (mode {:04o})",
                                    text::quoted(path), info.st_mode & 07777)};
  }
  return {};
}

std::deque<std::string> split(std::string_view path) {
  std::deque<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) parts.emplace_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

struct Dir {
  UniqueFd fd;
  std::string path;
};

Result<Dir> open_root_dir(std::span<const std::string> roots) {
  Dir root{UniqueFd(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)), "/"};
  struct stat info {};
  if (root.fd.get() < 0 || ::fstat(root.fd.get(), &info) != 0) {
    return InvalidInput{fmt::format("cannot open /: {}", errno_text(errno))};
  }
  if (const auto above = root_above("/", roots)) {
    return InvalidInput{
        "the workspace (or another writable root) is / itself, so every file lies beneath a root "
        "a confined run can write; pass a narrower --workspace"};
  }
  if (auto checked = check_owner_and_mode(info, "/", true); !checked) return checked.error();
  return root;
}

}  // namespace

namespace {

std::vector<std::string> untrusted_roots_after(std::vector<std::string> roots,
                                               std::string_view workspace_root,
                                               std::span<const std::string> extra_roots,
                                               std::string_view temp_dir) {
  // A set beside the list: a record of 256 roots would otherwise compare every pair. It views
  // the list's own strings, which stay in place: the list never grows beyond what is reserved.
  roots.reserve(roots.size() + extra_roots.size() + 3);
  std::unordered_set<std::string_view> seen(roots.begin(), roots.end());
  const auto add = [&roots, &seen](std::string_view root) {
    if (root.empty()) return;
    std::string canonical = canonical_root(root);
    if (seen.contains(canonical)) return;
    roots.push_back(std::move(canonical));
    seen.insert(roots.back());
  };
  add(workspace_root);
  add("/tmp");
  add(temp_dir);
  for (const std::string& root : extra_roots) add(root);
  return roots;
}

}  // namespace

std::vector<std::string> untrusted_roots(std::string_view workspace_root,
                                         std::span<const std::string> extra_roots,
                                         std::string_view temp_dir) {
  return untrusted_roots_after({}, workspace_root, extra_roots, temp_dir);
}

std::vector<std::string> untrusted_roots(const ResolvedWorkspace& workspace,
                                         std::span<const std::string> extra_roots,
                                         std::string_view temp_dir) {
  return untrusted_roots_after({workspace.path()}, "", extra_roots, temp_dir);
}

std::vector<std::string> untrusted_roots(const ResolvedWorkspace& workspace,
                                         std::span<const std::string> extra_roots) {
  return untrusted_roots(workspace, extra_roots, user_temp_dir());
}

std::vector<std::string> untrusted_roots(const SandboxPolicy& policy,
                                         std::span<const std::string> extra_roots,
                                         std::string_view temp_dir) {
  if (!policy.resolved_workspace) {
    return untrusted_roots(policy.workspace_root, extra_roots, temp_dir);
  }
  return untrusted_roots(*policy.resolved_workspace, extra_roots, temp_dir);
}

std::vector<std::string> untrusted_roots(std::string_view workspace_root,
                                         std::span<const std::string> extra_roots) {
  return untrusted_roots(workspace_root, extra_roots, user_temp_dir());
}

namespace {

// A step at or beneath a root a confined run can write: the refusal, naming which.
std::optional<InvalidInput> planted_step(const std::string& next,
                                         std::span<const std::string> roots, bool is_link) {
  const auto above = root_above(next, roots);
  if (!above) return std::nullopt;
  const std::string_view what = is_link ? "the symlink " : "";
  if (next == *above) {
    return InvalidInput{fmt::format("{}{} is a root a confined run can write (the "
                                    "workspace, /tmp, $TMPDIR or an earlier workspace)",
                                    what, text::quoted(next)),
                        ErrorCode::kUntrusted};
  }
  return InvalidInput{fmt::format("{}{} lies beneath {}, which a confined run can write (the "
                                  "workspace, /tmp, $TMPDIR "
                                  "or an earlier workspace)",
                                  what, text::quoted(next), text::quoted(*above)),
                      ErrorCode::kUntrusted};
}

// The symlink `name` in `dir` (trusted, checked on the way, so only the caller or root could
// have made it; its owner says which): its target's parts go first in `parts`, and an absolute
// target starts again from /.
Result<void> follow_symlink(std::vector<Dir>& stack, const std::string& name,
                            const std::string& next, const struct stat& link, std::string_view path,
                            int& symlinks, std::deque<std::string>& parts) {
  if (!owned_by_caller_or_root(link)) {
    return InvalidInput{fmt::format("the symlink {} is owned by uid {}, neither you nor root",
                                    text::quoted(next), link.st_uid),
                        ErrorCode::kUntrusted};
  }
  if (++symlinks > kMaxSymlinks) {
    return InvalidInput{fmt::format("{}: too many levels of symbolic links", text::quoted(path))};
  }
  std::array<char, 4096> target{};
  const ssize_t n = ::readlinkat(stack.back().fd.get(), name.c_str(), target.data(), target.size());
  if (n <= 0 || static_cast<std::size_t>(n) >= target.size()) {
    return InvalidInput{fmt::format("cannot read the symlink {}", text::quoted(next))};
  }
  const std::string_view spelled(target.data(), static_cast<std::size_t>(n));
  std::deque<std::string> more = split(spelled);
  parts.insert(parts.begin(), more.begin(), more.end());
  if (spelled.starts_with('/')) stack.resize(1);
  return {};
}

// The step `name` in `dir`, opened without following a link, as the same object fstatat saw
// (`link`); a directory on the way, the last step as `kind` and `readable` want it.
Result<Dir> open_step(const Dir& dir, const std::string& name, const std::string& next,
                      const struct stat& link, bool last, TrustedKind kind, bool readable,
                      bool check_objects) {
  const bool want_dir = !last || kind == TrustedKind::kDirectory;
  int flags = O_NOFOLLOW | O_CLOEXEC;
  if (want_dir) {
    flags |= O_PATH | O_DIRECTORY;
  } else {
    // O_NONBLOCK: a FIFO planted at the name must not block the open.
    flags |= readable ? O_RDONLY | O_NONBLOCK : O_PATH;
  }
  UniqueFd fd(::openat(dir.fd.get(), name.c_str(), flags));
  struct stat info {};
  if (fd.get() < 0 || ::fstat(fd.get(), &info) != 0) {
    return InvalidInput{fmt::format("{}: {}", text::quoted(next), errno_text(errno))};
  }
  if (info.st_dev != link.st_dev || info.st_ino != link.st_ino) {
    return InvalidInput{fmt::format("{} changed while it was checked", text::quoted(next))};
  }
  if (!want_dir && !S_ISREG(info.st_mode)) {
    return InvalidInput{fmt::format("{} is not a regular file", text::quoted(next))};
  }
  if (check_objects) {
    if (auto checked = check_owner_and_mode(info, next, !last); !checked) return checked.error();
  }
  return Dir{std::move(fd), next};
}

// The walk behind both checks. `check_objects`: every directory and the target must pass the
// trust check (a file that decides a run); otherwise only the symlinks met are checked (a
// workspace, which is itself writable by design).
Result<TrustedPath> walk(std::string_view path, std::span<const std::string> roots,
                         TrustedKind kind, bool readable, bool check_objects) {
  if (path.empty() || path.front() != '/' || path.find('\0') != std::string_view::npos) {
    return InvalidInput{
        fmt::format("{} is not an absolute path without NUL bytes", text::quoted(path))};
  }
  auto root = open_root_dir(check_objects ? roots : std::span<const std::string>{});
  if (!root) return root.error();
  // The directories walked so far, / first: ".." pops one, so it is the physical parent.
  std::vector<Dir> stack;
  stack.push_back(std::move(root).value());
  std::deque<std::string> parts = split(path);
  int symlinks = 0;
  while (!parts.empty()) {
    const std::string name = std::move(parts.front());
    parts.pop_front();
    if (name == ".") continue;
    if (name == "..") {
      if (stack.size() > 1) stack.pop_back();
      continue;
    }
    const Dir& dir = stack.back();
    const std::string next = join(dir.path, name);
    struct stat link {};
    const bool found = ::fstatat(dir.fd.get(), name.c_str(), &link, AT_SYMLINK_NOFOLLOW) == 0;
    const int lookup_error = errno;
    const bool is_link = found && S_ISLNK(link.st_mode);
    if (check_objects || is_link) {
      if (auto refused = planted_step(next, roots, is_link)) return std::move(*refused);
    }
    if (!found) {
      return InvalidInput{
          fmt::format("{}: {}", text::quoted(next), errno_text(lookup_error)),
          lookup_error == ENOTDIR ? ErrorCode::kNotADirectory : ErrorCode::kNotFound};
    }
    if (is_link) {
      if (auto followed = follow_symlink(stack, name, next, link, path, symlinks, parts);
          !followed) {
        return followed.error();
      }
      continue;
    }
    auto opened = open_step(dir, name, next, link, parts.empty(), kind, readable, check_objects);
    if (!opened) return opened.error();
    stack.push_back(std::move(opened).value());
  }
  if (stack.size() == 1 && kind == TrustedKind::kFile) {
    return InvalidInput{fmt::format("{} names a directory, not a file", text::quoted(path))};
  }
  TrustedPath result{std::move(stack.back().fd), stack.back().path};
  if (readable && result.fd.get() >= 0 && kind == TrustedKind::kFile) {
    // Reads through this descriptor block as files do; only the open had to be non-blocking.
    ::fcntl(result.fd.get(), F_SETFL, 0);
  }
  return result;
}

}  // namespace

Result<TrustedPath> open_trusted_path(std::string_view path, std::span<const std::string> roots,
                                      TrustedKind kind, bool readable) {
  return walk(path, roots, kind, readable, true);
}

Result<std::string> resolve_workspace_symlinks(std::string_view path,
                                               std::span<const std::string> roots) {
  auto opened = walk(path, roots, TrustedKind::kDirectory, false, false);
  if (!opened) return opened.error();
  return std::move(opened.value().path);
}

Result<ResolvedWorkspace> ResolvedWorkspace::resolve_trusted(std::string_view path,
                                                             std::span<const std::string> roots) {
  auto opened = walk(path, roots, TrustedKind::kDirectory, false, false);
  if (!opened) return std::move(opened).error();
  // The walk opened every component with O_PATH | O_DIRECTORY (or it is / itself), and its path
  // is the one that descriptor was reached by: canonical, with each symlink and ".." resolved.
  struct stat info {};
  if (::fstat(opened.value().fd.get(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return InvalidInput{fmt::format("{} is not a directory", text::quoted(path)),
                        ErrorCode::kNotADirectory};
  }
  return ResolvedWorkspace(std::move(opened.value().path));
}

Result<std::string> check_trusted_path(std::string_view path, std::span<const std::string> roots,
                                       TrustedKind kind) {
  // A runner is checked when the chain is admitted and again when its argv is built: one walk.
  if (auto kept = CallScope::find_check(path, roots, kind)) return std::move(*kept);
  auto opened = open_trusted_path(path, roots, kind, false);
  Result<std::string> answer =
      opened ? Result<std::string>(std::move(opened.value().path)) : opened.error();
  CallScope::keep_check(path, roots, kind, answer);
  return answer;
}

Result<std::string> read_trusted_file(const TrustedPath& file, std::size_t limit) {
  std::string text;
  const io::ReadEnd end = io::read_all(file.fd.get(), text, limit);
  if (end.over_limit) {
    return InvalidInput{fmt::format("{} is larger than {} bytes", text::quoted(file.path), limit)};
  }
  if (end.error != 0) {
    return InvalidInput{
        fmt::format("cannot read {}: {}", text::quoted(file.path), errno_text(end.error))};
  }
  return text;
}

std::string_view trusted_path_fix() {
  return "keep it outside the workspace, /tmp and $TMPDIR, in directories owned by you or root "
         "that nobody else can write";
}

}  // namespace dsh::sandbox
