// SPDX-License-Identifier: Apache-2.0
// ResolvedWorkspace: a workspace root resolved once. Only its factories make one, and each
// proves what it holds: an absolute, canonical (every symlink and `..` resolved) path that named
// an existing directory when it was resolved. Code that receives one uses it as is, so a call
// resolves its workspace once, and the CLI, the policy service and the provider agree on it.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "dsh/sandbox/result.h"

namespace dsh::sandbox {

class ResolvedWorkspace {
 public:
  // realpath(3) of `path` (a relative one against the working directory), which must name an
  // existing directory: kNotFound when it (or a prefix) does not exist or cannot be reached,
  // kNotADirectory when it is something else, kInvalidArgument for an empty path or a NUL byte.
  static Result<ResolvedWorkspace> resolve(std::string_view path);

  // The same for an absolute `path`, following a symlink on the way only when it lies outside
  // every root in `untrusted_roots` and is owned by the caller or root (the walk of trust.h, one
  // openat per component; its descriptor proves the directory): kUntrusted names the symlink a
  // confined run could have planted.
  static Result<ResolvedWorkspace> resolve_trusted(std::string_view path,
                                                   std::span<const std::string> untrusted_roots);

  const std::string& path() const noexcept { return path_; }

  bool operator==(const ResolvedWorkspace&) const = default;

 private:
  explicit ResolvedWorkspace(std::string path) : path_(std::move(path)) {}

  std::string path_;
};

}  // namespace dsh::sandbox
