// SPDX-License-Identifier: Apache-2.0
#include "cli/path_rules.h"

#include <array>
#include <string>

#include <nlohmann/json.hpp>

#include "local/probe_cache.h"
#include "policy/call_rules.h"
#include "policy/effective_policy.h"

namespace dsh::sandbox::cli {

namespace {

policy::PathRules rules_of(const local::ConfigPathRules& config) {
  return {config.allow_write, config.deny_write, config.deny_read, config.allow_cache};
}

policy::PathRules rules_of(const Options& options) {
  return {options.allow_write, options.deny_write, options.deny_read, options.allow_cache};
}

}  // namespace

void add_path_rules(SandboxExecutionPolicy& policy, const Options& options,
                    const local::ConfigPathRules& config) {
  const std::array<std::string, 2> decisive = {options.config_path, options.session_path};
  policy::add_path_rules(policy, rules_of(config), rules_of(options), decisive);
}

void add_path_rules(SandboxPolicy& policy, const Options& options,
                    const local::ConfigPathRules& config) {
  const std::array<std::string, 2> decisive = {options.config_path, options.session_path};
  policy::add_path_rules(policy, rules_of(config), rules_of(options), decisive);
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
