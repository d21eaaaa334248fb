// SPDX-License-Identifier: Apache-2.0
// The per-call policy. Policy travels with each call, never as provider state: two
// consumers may confine under different policies at once, and an approved escalation is simply
// a new call with a wider policy. The provider treats the policy as fully specified.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/modes.h"
#include "dsh/sandbox/resolved_workspace.h"
#include "dsh/sandbox/result.h"

namespace dsh::sandbox {

// The complete per-call policy a consumer resolves, danger-full-access included.
struct SandboxExecutionPolicy {
  SandboxMode mode = SandboxMode::kReadOnly;
  // Absolute, filesystem-canonical directory; carried even by modes that ignore it.
  std::string workspace_root;
  // The opaque calling-session id; absent for agentless calls.
  std::optional<std::string> session_id;
  // No network unless the caller opens it (inherit, or an allow-list).
  NetworkPolicy network = NetworkPolicy::kDeny;
  // Set when the caller resolved the root once (ResolvedWorkspace): workspace_root is then its
  // path, and nothing downstream resolves it again.
  std::optional<ResolvedWorkspace> resolved_workspace;
  // Added path rules (docs/boundary.md). Each path absolute, NUL-free; the provider canonicalises
  // each once and adds its defaults (the git state, the secrets list) before any backend sees
  // them. allow_write: extra writable roots under workspace-write. deny_write: read-only
  // carve-outs inside writable roots. deny_read: paths the command cannot read in any confined
  // mode (a `*`/`?` in the last component matches the entries that exist when the call starts).
  // An entry "!PATH" in deny_write or deny_read lifts that default carve-out or secret instead.
  // allow_cache: package cache presets by name (npm, pip, cargo, go, ...), made writable.
  std::vector<std::string> allow_write;
  std::vector<std::string> deny_write;
  std::vector<std::string> deny_read;
  std::vector<std::string> allow_cache;
  // The destinations of NetworkPolicy::kAllowList (empty otherwise), entries canonical.
  NetworkAllowList network_allow;

  bool operator==(const SandboxExecutionPolicy&) const = default;
};

// What a provider receives: the execution policy narrowed to a confined mode.
struct SandboxPolicy {
  ConfinedSandboxMode mode = ConfinedSandboxMode::kReadOnly;
  std::string workspace_root;
  std::optional<std::string> session_id;
  // No network unless the caller opens it (inherit, or an allow-list).
  NetworkPolicy network = NetworkPolicy::kDeny;
  // The root as resolved by the caller, when it was: the provider then takes workspace_root as
  // an existing canonical directory instead of resolving and checking it again.
  std::optional<ResolvedWorkspace> resolved_workspace;
  // Added path rules (docs/boundary.md). Each path absolute, NUL-free; the provider canonicalises
  // each once and adds its defaults (the git state, the secrets list) before any backend sees
  // them. allow_write: extra writable roots under workspace-write. deny_write: read-only
  // carve-outs inside writable roots. deny_read: paths the command cannot read in any confined
  // mode (a `*`/`?` in the last component matches the entries that exist when the call starts).
  // An entry "!PATH" in deny_write or deny_read lifts that default carve-out or secret instead.
  // allow_cache: package cache presets by name (npm, pip, cargo, go, ...), made writable.
  std::vector<std::string> allow_write;
  std::vector<std::string> deny_write;
  std::vector<std::string> deny_read;
  std::vector<std::string> allow_cache;
  // The destinations of NetworkPolicy::kAllowList (empty otherwise), entries canonical.
  NetworkAllowList network_allow;

  bool operator==(const SandboxPolicy&) const = default;
};

// nullopt for danger-full-access: that mode runs the command unconfined and never reaches a
// provider.
std::optional<SandboxPolicy> to_sandbox_policy(const SandboxExecutionPolicy& policy);

// Pure checks: an absolute workspace root without NUL bytes, the resolved workspace (when
// present) naming that same root, and a session id (when present) that is non-empty and NUL-free.
// Path rules: each absolute and NUL-free ("!" allowed before a deny path); an extra writable root
// neither "/" nor beneath /proc, /dev or /sys; a deny-read path neither "/" nor containing the
// workspace; cache names from the known presets (policy/cache_presets.h). Network entries only
// with the allow-list policy, each in its canonical spelling.
// Existence is the provider's check: a policy may describe a root on another host.
Result<void> validate_policy(const SandboxPolicy& policy);

// The package cache presets allow_cache accepts, in the order docs/boundary.md lists them.
std::span<const std::string_view> cache_preset_names();

// A program and its arguments: non-empty, a non-empty program name, no NUL byte anywhere
// (execve would silently cut the argument at the NUL and run something else).
Result<void> validate_argv(std::span<const std::string> argv);

}  // namespace dsh::sandbox
