// SPDX-License-Identifier: Apache-2.0
// What every `dsh-sandbox` subcommand reads before it acts: the config file, the workspace, the
// provider with the per-user verdict cache.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsh/sandbox/local_provider.h"
#include "dsh/sandbox/policy.h"
#include "dsh/sandbox/resolved_workspace.h"
#include "local/config.h"
#include "policy/call_policy.h"

namespace dsh::sandbox::plan {

struct Setup {
  LocalSandboxConfig provider;
  // `mode` (read-only, the fail-safe default, when absent), allowWrite, denyWrite, denyRead,
  // allowCache, networkAllow and networkDeny: what every call gets unless it says otherwise.
  policy::CallDefaults defaults;
  // Each key the config files set, with the file whose value won (plan/config_files.h).
  std::map<std::string, std::string> origins;
};

// The config document's keys: the provider's, and the defaults of every call.
Result<Setup> parse_setup(std::string_view text);
Result<Setup> parse_setup_document(const nlohmann::json& document);

// What the per-user record says earlier confined runs could write, or why that is unknown.
struct RecordedWorkspaces {
  std::vector<std::string> roots;
  std::string problem;  // non-empty: the record is missing a place, untrusted or corrupt
};

// The per-user record (local::read_workspace_record), its directory checked against
// `spelled_roots` (spelled_workspace_roots of the workspace), /tmp and $TMPDIR.
RecordedWorkspaces recorded_workspaces(std::span<const std::string> spelled_roots);

// The workspace of the call, resolved once: an absolute existing directory (the working
// directory when `given` is empty), resolved realpath-first; a symlink on the way is followed
// only when it lies outside /tmp, $TMPDIR, `written_workspaces` (the workspaces earlier runs of
// the session could write) and the recorded roots. When the record is unknown, any symlink on
// the way is refused. InvalidSandboxInputError otherwise.
ResolvedWorkspace workspace_root(const std::string& given,
                                 std::span<const std::string> written_workspaces,
                                 const RecordedWorkspaces& recorded);

// Before a workspace-write command starts (so a killed run still counts): adds the workspace,
// every extra writable root and the cache presets' directories of `policy` to the per-user
// record, so later calls trust nothing beneath them and follow no symlink planted there.
// Nothing for other modes. InvalidSandboxInputError when the record exists and cannot take
// them; skipped when this user has no per-user directory (every symlinked workspace is then
// refused, since the record cannot be read either).
void record_writable_workspace(const ResolvedWorkspace& workspace,
                               const SandboxExecutionPolicy& policy,
                               std::span<const std::string> untrusted_roots);

// The spelled workspace (given or the working directory) and its realpath: the roots a session
// file and the record are checked against before the workspace itself is resolved.
std::vector<std::string> spelled_workspace_roots(const std::string& given);

// The roots a confined run of this call can write, canonical: under workspace-write the
// workspace and the extra writable roots; none under read-only, which grants no host directory
// (bwrap's /tmp is private to the run), nor under danger-full-access, which confines nothing.
std::vector<std::string> chosen_writable_roots(SandboxMode mode, const std::string& workspace,
                                               std::span<const std::string> allow_write);

// The running dsh-sandbox (/proc/self/exe) must pass the trust check against `chosen_roots`
// (chosen_writable_roots), /tmp, $TMPDIR and `earlier_roots` (what earlier confined runs could
// write: a session's workspaces, the record's): a CLI a confined run could replace would be the
// impostor of every later call. Inside a chosen root, the caller's own choice:
// InvalidSandboxInputError naming the root and the fix. Otherwise a refusal
// (SandboxUnavailableError::refused) saying where to install it.
// `program` names the running program in the messages ("dsh-sandbox", or the program linking
// the library).
void require_trusted_self(std::span<const std::string> chosen_roots,
                          std::span<const std::string> earlier_roots, ConfinedSandboxMode mode,
                          std::string_view program);

// The provider with its runners located once. `earlier_roots`, when known: the roots earlier
// confined runs could write (LocalSandboxHooks::earlier_writable_roots). `cache_untrusted`: the
// roots no cached verdict may lie beneath (the call's, with every root earlier calls recorded).
LocalSandboxProvider make_provider(const LocalSandboxConfig& config,
                                   std::optional<std::vector<std::string>> earlier_roots,
                                   std::span<const std::string> cache_untrusted);

}  // namespace dsh::sandbox::plan
