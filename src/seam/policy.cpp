// SPDX-License-Identifier: Apache-2.0
#include "dsh/sandbox/policy.h"

#include <fmt/format.h>

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

}  // namespace

std::optional<SandboxPolicy> to_sandbox_policy(const SandboxExecutionPolicy& policy) {
  const std::optional<ConfinedSandboxMode> mode = to_confined_mode(policy.mode);
  if (!mode) return std::nullopt;
  return SandboxPolicy{*mode,          policy.workspace_root,     policy.session_id,
                       policy.network, policy.resolved_workspace, policy.network_allow};
}

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
