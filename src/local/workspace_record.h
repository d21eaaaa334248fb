// SPDX-License-Identifier: Apache-2.0
// The per-user record of the directories confined runs could write. A workspace-write run can
// plant a symlink in its workspace; a later call, with or without a session, must not follow it.
// So every workspace-write `run` and `confine` adds its writable roots to this record before the
// command starts, and every workspace is resolved through symlinks only outside them. The record
// is `workspaces.json` in the per-user cache directory (beside the verdict cache: 0700, this
// user's, checked like it), so no confined run can rewrite it.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/policy.h"
#include "dsh/sandbox/result.h"

namespace dsh::sandbox::local {

// The newest distinct roots kept; older ones are forgotten.
inline constexpr std::size_t kMaxRecordedWorkspaces = 256;
// 256 paths of PATH_MAX plus the JSON around them; anything larger is not ours.
inline constexpr std::size_t kMaxWorkspaceRecordBytes = 1100000;

inline constexpr std::string_view kWorkspaceRecordName = "workspaces.json";

// {"version":1,"workspaces":[...]} oldest first; every entry absolute, normalized, distinct,
// at most kMaxRecordedWorkspaces of them. InvalidInput naming the first fault otherwise.
Result<std::vector<std::string>> parse_workspace_record(std::string_view text);
std::string format_workspace_record(std::span<const std::string> roots);

// `recorded` with `added` as the newest entries: deduplicated, a root beneath another one dropped
// (the covering root takes the newer place), the newest `limit` kept, oldest first.
std::vector<std::string> merge_workspace_record(std::span<const std::string> recorded,
                                                std::span<const std::string> added,
                                                std::size_t limit = kMaxRecordedWorkspaces);

// $XDG_RUNTIME_DIR chooses the per-user cache directory, and a caller can point it into a
// directory an earlier run could write (a workspace's subdirectory): a record planted there would
// forget that very directory, and the state beside it (verdicts, jobs) would pass the trust check.
// So for a user other than root the record is also kept where no variable chooses, the jobs'
// fallback place (fallback_jobs_base(): /var/tmp/dsh-sandbox-jobs-<uid>, which no confined run can
// write): the anchor. Root's record is /run/dsh-sandbox whatever the environment says. Empty when
// there is no anchor (root, or no per-user cache directory: then no record is kept at all).
std::string anchor_record_directory();

// The anchor's roots: read first, so that the cache directory is checked against them too.
Result<std::vector<std::string>> read_anchor_record(std::span<const std::string> untrusted_roots);

// The recorded roots. Empty when the cache directory or the record does not exist (nothing was
// ever recorded there). InvalidInput, saying what to fix, when this user has no per-user cache
// directory, or it or the record fails the trust check (checked against `untrusted_roots`), or
// the record is corrupt: the caller then knows nothing and must fail closed.
Result<std::vector<std::string>> read_workspace_record(
    std::span<const std::string> untrusted_roots);

// Adds `roots` (canonical) to the anchor (first) and to the record, creating the directory (0700)
// and the record (0600, written to a temp file and renamed in the checked directory). InvalidInput,
// saying what to fix, when it cannot: the caller must not start the command.
Result<void> add_to_workspace_record(std::span<const std::string> roots,
                                     std::span<const std::string> untrusted_roots);

// Before a workspace-write command starts (so a killed run still counts), whoever starts it (the
// CLI, SandboxExecutor): adds the workspace (canonical), every extra writable root and the cache
// presets' directories `policy` makes effective to the record. Nothing for read-only, nor when
// this user has no per-user cache directory (then no record is kept, and every symlinked
// workspace is refused). InvalidInput, saying what to fix, when the record cannot take them: the
// command must not start.
Result<void> record_writable_roots(const std::string& workspace, const SandboxPolicy& policy,
                                   std::span<const std::string> untrusted_roots);

}  // namespace dsh::sandbox::local
