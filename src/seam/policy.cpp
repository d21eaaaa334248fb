// SPDX-License-Identifier: Apache-2.0
#include "dsh/sandbox/policy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dsh/sandbox/roots.h"

#include "base/text.h"

namespace dsh::sandbox {

namespace {

bool has_nul(std::string_view value) { return value.find('\0') != std::string_view::npos; }

Result<void> validate_entries(const std::vector<std::string>& entries, std::string_view field) {
  for (const std::string& entry : entries) {
    auto canonical = canonical_network_entry(entry);
    if (!canonical) return canonical.error();
    if (canonical.value() != entry) {
      return InvalidInput{fmt::format("{} entry {} is not in its canonical spelling; write {}",
                                      field, text::quoted(entry), text::quoted(canonical.value()))};
    }
  }
  return {};
}

Result<void> validate_network_allow(NetworkPolicy network, const NetworkAllowList& list) {
  const bool any = !list.allow.empty() || !list.deny.empty() || !list.resolve.empty();
  if (any && network != NetworkPolicy::kAllowList) {
    return InvalidInput{fmt::format(
        "network allow/deny entries are given but the network policy is {}; use the allow-list "
        "policy (--network allow:LIST) or drop the entries",
        wire_name(network))};
  }
  if (!list.unix_sockets.empty() && network == NetworkPolicy::kInherit) {
    return InvalidInput{
        "allowUnixSockets entries are given but the network is inherited, which reaches every "
        "Unix socket already; drop them, or deny or allow-list the network"};
  }
  for (const std::string& path : list.unix_sockets) {
    if (has_nul(path) || path.empty() || path.front() != '/') {
      return InvalidInput{fmt::format(
          "allowUnixSockets entry {} is not an absolute path; name the socket from \"/\"",
          text::quoted(path))};
    }
  }
  if (auto valid = validate_entries(list.allow, "networkAllow"); !valid) return valid;
  if (auto valid = validate_entries(list.deny, "networkDeny"); !valid) return valid;
  for (const std::string& mapping : list.resolve) {
    auto canonical = canonical_network_resolve(mapping);
    if (!canonical) return canonical.error();
    if (canonical.value() != mapping) {
      return InvalidInput{fmt::format("networkResolve entry {} is not canonical; write {}",
                                      text::quoted(mapping), text::quoted(canonical.value()))};
    }
  }
  return {};
}

// NOLINTNEXTLINE(modernize-avoid-c-arrays)
constexpr std::string_view kCachePresets[] = {"npm",   "yarn", "pnpm",  "bun",    "pip",   "uv",
                                              "cargo", "go",   "maven", "gradle", "ccache"};

// True when `path` is `root` or beneath it, by whole components (lexical: the paths here are
// not resolved yet).
bool lexically_beneath(std::string_view path, std::string_view root) {
  if (root == "/") return true;
  return path == root ||
         (path.starts_with(root) && path.size() > root.size() && path[root.size()] == '/');
}

Result<void> check_path_rule(std::string_view field, std::string_view entry, bool may_lift) {
  std::string_view path = entry;
  if (may_lift && path.starts_with('!')) path.remove_prefix(1);
  if (has_nul(path)) {
    return InvalidInput{fmt::format("{} entry {} contains a NUL byte; a path cannot contain NUL",
                                    field, text::quoted(entry))};
  }
  if (path.empty() || path.front() != '/') {
    return InvalidInput{fmt::format(
        "{} entry {} is not an absolute path; pass a path that starts with \"/\" (\"~/\" and "
        "relative paths are resolved by the CLI and the config, not by the library)",
        field, text::quoted(entry))};
  }
  return {};
}

Result<void> check_path_rules(const SandboxPolicy& policy) {
  const std::string& root = policy.workspace_root;
  for (const std::string& entry : policy.allow_write) {
    if (auto checked = check_path_rule("allow_write", entry, false); !checked) return checked;
    const std::string normal = lexically_normalize(entry);
    if (normal == "/" || lexically_beneath(normal, "/proc") || lexically_beneath(normal, "/dev") ||
        lexically_beneath(normal, "/sys")) {
      return InvalidInput{fmt::format(
          "allow_write entry {} would make the whole host or a kernel filesystem writable; name "
          "the directory the command needs (danger-full-access is the mode for no confinement)",
          text::quoted(entry))};
    }
  }
  for (const std::string& entry : policy.deny_write) {
    if (auto checked = check_path_rule("deny_write", entry, true); !checked) return checked;
  }
  for (const std::string& entry : policy.deny_read) {
    if (auto checked = check_path_rule("deny_read", entry, true); !checked) return checked;
    if (entry.starts_with('!')) continue;
    const std::string normal = lexically_normalize(entry);
    if (lexically_beneath(root, normal)) {
      return InvalidInput{fmt::format(
          "deny_read entry {} contains the workspace {}; the command could not read its own "
          "workspace. Name the files or directories inside it to hide",
          text::quoted(entry), text::quoted(root))};
    }
  }
  for (const std::string& name : policy.allow_cache) {
    bool known = false;
    for (const std::string_view preset : kCachePresets) known = known || preset == name;
    if (!known) {
      return InvalidInput{
          fmt::format("allow_cache entry {} is not a known cache preset; known presets: {}",
                      text::quoted(name), fmt::join(kCachePresets, ", "))};
    }
  }
  return {};
}

}  // namespace

std::optional<SandboxPolicy> to_sandbox_policy(const SandboxExecutionPolicy& policy) {
  const std::optional<ConfinedSandboxMode> mode = to_confined_mode(policy.mode);
  if (!mode) return std::nullopt;
  return SandboxPolicy{*mode,
                       policy.workspace_root,
                       policy.session_id,
                       policy.network,
                       policy.resolved_workspace,
                       policy.allow_write,
                       policy.deny_write,
                       policy.deny_read,
                       policy.allow_cache,
                       policy.network_allow};
}

std::span<const std::string_view> cache_preset_names() { return kCachePresets; }

Result<void> validate_policy(const SandboxPolicy& policy) {
  const std::string& root = policy.workspace_root;
  if (has_nul(root)) {
    return InvalidInput{fmt::format(
        "workspace root {} contains a NUL byte; a path cannot contain NUL", text::quoted(root))};
  }
  if (root.empty() || root.front() != '/') {
    return InvalidInput{
        fmt::format("workspace root {} is not an absolute path; pass a path that starts with \"/\" "
                    "(resolve a relative path against the working directory first)",
                    text::quoted(root))};
  }
  if (policy.resolved_workspace && policy.resolved_workspace->path() != root) {
    return InvalidInput{fmt::format(
        "workspace root {} differs from the workspace resolved for the call, {}; pass the "
        "resolved path as the root",
        text::quoted(root), text::quoted(policy.resolved_workspace->path()))};
  }
  if (policy.session_id && (policy.session_id->empty() || has_nul(*policy.session_id))) {
    return InvalidInput{fmt::format(
        "session id {} is invalid; omit it for agentless calls or pass a non-empty id without "
        "NUL bytes",
        text::quoted(*policy.session_id))};
  }
  if (auto valid = check_path_rules(policy); !valid) return valid;
  return validate_network_allow(policy.network, policy.network_allow);
}

Result<void> validate_argv(std::span<const std::string> argv) {
  if (argv.empty()) {
    return InvalidInput{"argv is empty; pass the program to run followed by its arguments"};
  }
  if (argv.front().empty()) {
    return InvalidInput{"argv[0] is empty; pass the program to run as the first element"};
  }
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (has_nul(argv[i])) {
      return InvalidInput{fmt::format(
          "argv[{}] {} contains a NUL byte; execve would cut the argument there and run a "
          "different command",
          i, text::quoted(argv[i]))};
    }
  }
  return {};
}

}  // namespace dsh::sandbox
