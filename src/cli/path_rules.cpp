// SPDX-License-Identifier: Apache-2.0
#include "cli/path_rules.h"

#include <array>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/text.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/roots.h"
#include "local/probe_cache.h"
#include "policy/effective_policy.h"

namespace dsh::sandbox::cli {

namespace {

// A path flag the call's mode cannot apply is an error, never dropped: read-only makes nothing
// writable, and danger-full-access confines nothing, so no rule of it would hold.
void check_flags_apply(SandboxMode mode, const Options& options) {
  const std::array<std::pair<std::string_view, const std::vector<std::string>*>, 4> flags = {{
      {"--allow-write", &options.allow_write},
      {"--allow-cache", &options.allow_cache},
      {"--deny-write", &options.deny_write},
      {"--deny-read", &options.deny_read},
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
void add_rules(Policy& policy, const Options& options, const local::ConfigPathRules& config) {
  check_flags_apply(mode_of(policy), options);
  const policy::PathContext context = policy::process_path_context();
  const std::string cwd = working_directory();
  const auto add = [&](std::vector<std::string>& out, const std::vector<std::string>& from) {
    for (const std::string& entry : from) {
      out.push_back(policy::absolute_rule_path(entry, cwd, context.home));
    }
  };
  add(policy.allow_write, config.allow_write);
  add(policy.allow_write, options.allow_write);
  add(policy.deny_write, config.deny_write);
  add(policy.deny_write, options.deny_write);
  add(policy.deny_read, config.deny_read);
  add(policy.deny_read, options.deny_read);
  for (const std::vector<std::string>* names : {&config.allow_cache, &options.allow_cache}) {
    for (std::string& name : policy::split_cache_names(*names)) {
      policy.allow_cache.push_back(std::move(name));
    }
  }
  for (const std::string* file : {&options.config_path, &options.session_path}) {
    if (file->empty()) continue;
    const std::string absolute = file->starts_with('/') ? *file : cwd + "/" + *file;
    if (const auto root = policy::writable_root_covering(absolute, policy.allow_write)) {
      throw InvalidSandboxInputError(fmt::format(
          "--allow-write {} covers {}, which decides later runs; a confined run could rewrite "
          "it. Keep the sandbox's config and session files outside every writable root",
          text::quoted(*root), text::quoted(*file)));
    }
  }
}

}  // namespace

void add_path_rules(SandboxExecutionPolicy& policy, const Options& options,
                    const local::ConfigPathRules& config) {
  add_rules(policy, options, config);
}

void add_path_rules(SandboxPolicy& policy, const Options& options,
                    const local::ConfigPathRules& config) {
  add_rules(policy, options, config);
}

nlohmann::json effective_policy_view(const SandboxPolicy& policy) {
  if (!validate_policy(policy)) return nullptr;
  policy::PathContext context = policy::process_path_context();
  context.create_missing = false;
  context.private_state = local::private_state_directories(false);
  auto effective = policy::effective_policy(policy, context);
  if (!effective) return nullptr;
  return policy::effective_policy_json(effective.value());
}

}  // namespace dsh::sandbox::cli
