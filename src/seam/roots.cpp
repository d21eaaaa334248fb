// SPDX-License-Identifier: Apache-2.0
#include "dsh/sandbox/roots.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <memory>
#include <system_error>

#include <fmt/format.h>

#include "base/text.h"
#include "dsh/sandbox/errors.h"

namespace dsh::sandbox {

namespace {

struct FreeDeleter {
  void operator()(char* p) const noexcept { std::free(p); }  // NOLINT: realpath's malloc
};

}  // namespace

std::string working_directory() {
  std::unique_ptr<char, FreeDeleter> cwd(::getcwd(nullptr, 0));
  // getcwd fails when the working directory was removed; there is then no honest absolute form
  // of a relative path, so refuse instead of guessing.
  if (!cwd) {
    throw InvalidSandboxInputError(
        "the working directory no longer exists; a relative path cannot be resolved");
  }
  return cwd.get();
}

bool is_beneath(std::string_view path, std::string_view root) {
  if (root == "/" || path == root) return true;
  return path.size() > root.size() && path.starts_with(root) && path[root.size()] == '/';
}

std::string canonical_path(std::string_view path) {
  std::string spelled(path);
  // realpath(3) would stop at a NUL and canonicalize a different, shorter path.
  if (spelled.find('\0') != std::string::npos) return spelled;
  std::unique_ptr<char, FreeDeleter> resolved(::realpath(spelled.c_str(), nullptr));
  return resolved ? std::string(resolved.get()) : spelled;
}

std::string user_temp_dir() {
  for (const char* name : {"TMPDIR", "TMP", "TEMP"}) {
    // Only read here; the library never writes the environment.
    const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe)
    if (value == nullptr || value[0] != '/') continue;
    std::string dir(value);
    if (dir.size() > 1 && dir.ends_with('/')) dir.pop_back();
    return dir;
  }
  return "/tmp";
}

std::vector<std::string> writable_roots(const SandboxPolicy& policy, std::string_view temp_dir) {
  if (policy.mode != ConfinedSandboxMode::kWorkspaceWrite) return {};
  std::vector<std::string> roots;
  for (const std::string_view root :
       {std::string_view(policy.workspace_root), std::string_view("/tmp"), temp_dir}) {
    std::string canonical = canonical_path(root);
    if (std::find(roots.begin(), roots.end(), canonical) == roots.end()) {
      roots.push_back(std::move(canonical));
    }
  }
  return roots;
}

std::vector<std::string> writable_roots(const SandboxPolicy& policy) {
  return writable_roots(policy, user_temp_dir());
}

std::string lexically_normalize(std::string_view absolute_path) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= absolute_path.size()) {
    std::size_t slash = absolute_path.find('/', start);
    if (slash == std::string_view::npos) slash = absolute_path.size();
    const std::string_view part = absolute_path.substr(start, slash - start);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();  // ".." at the root stays at the root
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = slash + 1;
  }
  std::string normalized;
  for (const std::string_view part : parts) {
    normalized += '/';
    normalized += part;
  }
  return normalized.empty() ? "/" : normalized;
}

Result<ResolvedWorkspace> ResolvedWorkspace::resolve(std::string_view path) {
  if (path.empty() || path.find('\0') != std::string_view::npos) {
    return InvalidInput{
        fmt::format("workspace root {} is empty or contains a NUL byte; pass an "
                    "existing directory",
                    text::quoted(path))};
  }
  const std::string spelled(path);
  std::unique_ptr<char, FreeDeleter> resolved(::realpath(spelled.c_str(), nullptr));
  if (!resolved) {
    const int error = errno;
    return InvalidInput{
        fmt::format("workspace root {} cannot be used: {}; create the directory or choose an "
                    "existing one",
                    text::quoted(path), std::generic_category().message(error)),
        error == ENOTDIR ? ErrorCode::kNotADirectory : ErrorCode::kNotFound};
  }
  struct stat info {};
  if (::stat(resolved.get(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return InvalidInput{
        fmt::format("workspace root {} is not a directory; pass a directory", text::quoted(path)),
        ErrorCode::kNotADirectory};
  }
  return ResolvedWorkspace(resolved.get());
}

std::string resolve_workspace_root(std::string_view path) {
  const std::string canonical = canonical_path(path);
  if (canonical.starts_with('/')) return lexically_normalize(canonical);
  return lexically_normalize(working_directory() + "/" + canonical);
}

}  // namespace dsh::sandbox
