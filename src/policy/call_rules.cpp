// SPDX-License-Identifier: Apache-2.0
#include "policy/call_rules.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "base/text.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/roots.h"
#include "dsh/sandbox/trust.h"
#include "policy/effective_policy.h"

namespace dsh::sandbox::policy {

namespace {

// A rule the call's mode cannot apply is an error, never dropped: read-only makes nothing
// writable, and danger-full-access confines nothing, so no rule of it would hold.
void check_rules_apply(SandboxMode mode, const PathRules& rules) {
  const std::array<std::pair<std::string_view, const std::vector<std::string>*>, 4> flags = {{
      {"--allow-write", &rules.allow_write},
      {"--allow-cache", &rules.allow_cache},
      {"--deny-write", &rules.deny_write},
      {"--deny-read", &rules.deny_read},
  }};
  for (const auto& [name, values] : flags) {
    if (values->empty()) continue;
    if (mode == SandboxMode::kReadOnly && name.starts_with("--allow")) {
      throw InvalidSandboxInputError(fmt::format(
          "{} {}: this call's mode is read-only, which makes nothing writable, so it cannot "
          "apply; use --mode workspace-write with it, or drop it",
          name, text::quoted(values->front())));
    }
    if (mode == SandboxMode::kDangerFullAccess) {
      throw InvalidSandboxInputError(fmt::format(
          "{} {}: this call's mode is danger-full-access, which runs the command unconfined, so "
          "nothing would enforce it; use --mode workspace-write (or read-only) with it, or drop "
          "it",
          name, text::quoted(values->front())));
    }
  }
}

SandboxMode mode_of(const SandboxExecutionPolicy& policy) { return policy.mode; }
SandboxMode mode_of(const SandboxPolicy& policy) { return to_sandbox_mode(policy.mode); }

template <typename Policy>
void add_rules(Policy& policy, const PathRules& defaults, const PathRules& call,
               std::span<const std::string> decisive_files) {
  check_rules_apply(mode_of(policy), call);
  const PathContext context = process_path_context();
  const std::string cwd = working_directory();
  const auto add = [&](std::vector<std::string>& out, const std::vector<std::string>& from) {
    for (const std::string& entry : from) {
      out.push_back(absolute_rule_path(entry, cwd, context.home));
    }
  };
  for (const PathRules* rules : {&defaults, &call}) {
    add(policy.allow_write, rules->allow_write);
    add(policy.deny_write, rules->deny_write);
    add(policy.deny_read, rules->deny_read);
  }
  for (const PathRules* rules : {&defaults, &call}) {
    for (std::string& name : split_cache_names(rules->allow_cache)) {
      policy.allow_cache.push_back(std::move(name));
    }
  }
  for (const std::string& file : decisive_files) {
    if (file.empty()) continue;
    std::string absolute = file;
    if (!file.starts_with('/')) absolute = fmt::format("{}/{}", cwd, file);
    if (const auto root = writable_root_covering(absolute, policy.allow_write)) {
      throw InvalidSandboxInputError(fmt::format(
          "--allow-write {} covers {}, which decides later runs; a confined run could rewrite "
          "it. Keep the sandbox's config and session files outside every writable root",
          text::quoted(*root), text::quoted(file)));
    }
  }
}

}  // namespace

void add_path_rules(SandboxExecutionPolicy& policy, const PathRules& defaults,
                    const PathRules& call, std::span<const std::string> decisive_files) {
  add_rules(policy, defaults, call, decisive_files);
}

void add_path_rules(SandboxPolicy& policy, const PathRules& defaults, const PathRules& call,
                    std::span<const std::string> decisive_files) {
  add_rules(policy, defaults, call, decisive_files);
}

void require_unplanted_rule_paths(const SandboxPolicy& policy, std::span<const std::string> roots) {
  const auto check = [&](std::string_view flag, const std::vector<std::string>& entries) {
    for (const std::string& entry : entries) {
      if (entry.empty() || !entry.starts_with('/')) continue;  // "!" lifts, named nothing new
      std::string path = entry;
      // A pattern matches entries of its parent: the parent is what is resolved.
      if (path.substr(path.rfind('/') + 1).find_first_of("*?[") != std::string::npos) {
        path = path.substr(0, std::max<std::size_t>(path.rfind('/'), 1));
      }
      auto resolved = resolve_workspace_symlinks(path, roots);
      if (resolved || resolved.error().code != ErrorCode::kUntrusted) continue;
      throw InvalidSandboxInputError(fmt::format(
          "{} {} cannot be used: {}; an earlier confined run could have planted that symlink to "
          "point this rule at a directory nobody named. Remove the symlink, or pass the path you "
          "mean by its real path",
          flag, text::quoted(entry), resolved.error().message));
    }
  };
  check("--allow-write", policy.allow_write);
  check("--deny-write", policy.deny_write);
  check("--deny-read", policy.deny_read);
}

}  // namespace dsh::sandbox::policy
