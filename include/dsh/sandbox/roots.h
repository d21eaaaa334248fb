// SPDX-License-Identifier: Apache-2.0
// Path canonicalization shared by every backend and consumer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/policy.h"

namespace dsh::sandbox {

// realpath(3) of `path`, resolving components as the kernel does. On any failure (missing or
// unreadable path or prefix, a NUL byte) the input comes back unchanged: an unresolved grant
// then matches nothing until the path exists, where a guessed fallback could grant a path
// nobody named.
std::string canonical_path(std::string_view path);

// The per-user temp directory as Node's os.tmpdir(): $TMPDIR, $TMP, $TEMP, else /tmp, with a
// trailing slash removed. A relative value is skipped: it would name a different directory in
// every working directory.
std::string user_temp_dir();

// [] unless workspace-write; otherwise the order-preserving deduplication of canonical_path over
// [workspace root, /tmp, temp_dir].
std::vector<std::string> writable_roots(const SandboxPolicy& policy, std::string_view temp_dir);
std::vector<std::string> writable_roots(const SandboxPolicy& policy);  // temp_dir: user_temp_dir()

// Filesystem realpath first, lexical absolutization (against the working directory) and
// normalization second, so a root spelled through `link/..` names the directory chdir reaches,
// not its lexical parent. A path that does not exist is normalized lexically.
std::string resolve_workspace_root(std::string_view path);

// Whether `path` is `root` or lies beneath it, comparing whole components as spelled
// ("/wsx" is not beneath "/ws"). Pass normalized absolute paths.
bool is_beneath(std::string_view path, std::string_view root);

// The working directory; InvalidSandboxInputError when it no longer exists.
std::string working_directory();

// "." and ".." collapsed, repeated and trailing slashes removed; `path` must be absolute.
std::string lexically_normalize(std::string_view absolute_path);

}  // namespace dsh::sandbox
