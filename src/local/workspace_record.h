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

// The recorded roots. Empty when the cache directory or the record does not exist (nothing was
// ever recorded there). InvalidInput, saying what to fix, when this user has no per-user cache
// directory, or it or the record fails the trust check (checked against `untrusted_roots`), or
// the record is corrupt: the caller then knows nothing and must fail closed.
Result<std::vector<std::string>> read_workspace_record(
    std::span<const std::string> untrusted_roots);

// Adds `roots` (canonical) to the record, creating the directory (0700) and the record (0600,
// written to a temp file and renamed in the checked directory). InvalidInput, saying what to
// fix, when it cannot: the caller must not start the command.
Result<void> add_to_workspace_record(std::span<const std::string> roots,
                                     std::span<const std::string> untrusted_roots);

}  // namespace dsh::sandbox::local
