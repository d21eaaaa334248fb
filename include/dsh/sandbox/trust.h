// SPDX-License-Identifier: Apache-2.0
// The one trust check. The sandbox trusts a file that decides a run (a session log, a config
// file, the verdict cache, a runner, the running CLI) only if no confined run could have
// written it: neither it nor any directory on its way lies beneath a root a confined mode could
// make writable, each is owned by the caller or root, and none is writable by group or others
// (a sticky directory such as /var/tmp is allowed on the way: only the owner of an entry can
// then rename or remove it, and that owner is checked). A symlink met on the way is followed
// only when it passes the same test (it lies outside every such root, is owned by the caller or
// root, in a trusted directory): a symlink a confined run could have planted never redirects.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/policy.h"
#include "dsh/sandbox/result.h"

namespace dsh::sandbox {

// Every root a confined mode could make writable for a call on `workspace_root`: the
// workspace, /tmp, `temp_dir` (the user's $TMPDIR), then `extra_roots` (writable roots that
// policy options add, earlier workspaces of a session), each canonical, deduplicated, in that
// order. An empty workspace root is left out.
std::vector<std::string> untrusted_roots(std::string_view workspace_root,
                                         std::span<const std::string> extra_roots,
                                         std::string_view temp_dir);
// temp_dir: user_temp_dir()
std::vector<std::string> untrusted_roots(std::string_view workspace_root,
                                         std::span<const std::string> extra_roots = {});

// The same for a workspace resolved once: its path is taken as is (no second realpath).
std::vector<std::string> untrusted_roots(const ResolvedWorkspace& workspace,
                                         std::span<const std::string> extra_roots,
                                         std::string_view temp_dir);
std::vector<std::string> untrusted_roots(const ResolvedWorkspace& workspace,
                                         std::span<const std::string> extra_roots = {});
// The same for a policy: its resolved workspace as is when the caller resolved it (no second
// realpath), else its workspace root canonicalized as above.
std::vector<std::string> untrusted_roots(const SandboxPolicy& policy,
                                         std::span<const std::string> extra_roots,
                                         std::string_view temp_dir);

enum class TrustedKind {
  kFile,       // a regular file
  kDirectory,  // a directory
};

// The canonical path of `path` when no confined run could have written it, or why not (one
// sentence naming the offending path; the caller adds what to fix). `path` must be absolute.
// Walks from / with openat(O_NOFOLLOW) and checks each descriptor with fstat, so a swap of a
// component for a symlink between the check and the use cannot redirect it.
Result<std::string> check_trusted_path(std::string_view path,
                                       std::span<const std::string> untrusted_roots,
                                       TrustedKind kind = TrustedKind::kFile);

// The real directory a workspace spelled `path` names (realpath, as resolve_workspace_root),
// following a symlink only when it lies outside every root in `untrusted_roots` and is owned by
// the caller or root: `~/work -> /data/work` resolves, while a symlink a confined run could have
// planted (beneath /tmp, $TMPDIR, or a workspace an earlier run could write) is refused, naming
// it. Pass untrusted_roots("", earlier workspaces): the workspace being resolved is not yet one.
Result<std::string> resolve_workspace_symlinks(std::string_view path,
                                               std::span<const std::string> untrusted_roots);

// What to tell the owner of a refused file: keep it outside the workspace, /tmp and $TMPDIR,
// owned by you or root, writable by nobody else.
std::string_view trusted_path_fix();

}  // namespace dsh::sandbox
