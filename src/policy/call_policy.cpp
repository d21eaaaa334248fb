// SPDX-License-Identifier: Apache-2.0
#include "policy/call_policy.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

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

// A cache name from the command line, named as the person wrote it (the policy's own check
// speaks of the library's allow_cache field, which no flag is called).
void check_cache_flag(const std::string& name) {
  std::vector<std::string> known;
  for (const std::string_view preset : cache_preset_names()) known.emplace_back(preset);
  if (std::find(known.begin(), known.end(), name) != known.end()) return;
  std::string message = fmt::format("--allow-cache {}: not a known cache preset; known presets: {}",
                                    text::quoted(name), fmt::join(known, ", "));
  if (const auto suggestion = text::closest(name, known)) {
    message += fmt::format("; did you mean --allow-cache {}?", *suggestion);
  }
  throw InvalidSandboxInputError(message);
}

// `defaults`' rules (a config file's), then `call`'s, each made absolute and appended. A rule of
// `call` the mode cannot apply is an error; the config's apply where they can.
void add_path_rules(SandboxExecutionPolicy& policy, const PathRules& defaults,
                    const PathRules& call, const std::vector<std::string>& decisive_files) {
  check_rules_apply(policy.mode, call);
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
      if (rules == &call) check_cache_flag(name);
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

// InvalidSandboxInputError when an allow-write, deny-write or deny-read path is reached through a
// symlink beneath one of `roots`: the rule the workspace obeys, for every path the policy names.
// An earlier confined run could have planted that symlink to make a new writable root of a
// directory nobody named, or to point a carve-out away from what it should protect.
void require_unplanted_rule_paths(const SandboxExecutionPolicy& policy,
                                  std::span<const std::string> roots) {
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

// `front` then the entries of `list` it does not hold, each once.
std::vector<std::string> joined(const std::vector<std::string>& front,
                                const std::vector<std::string>& list) {
  std::vector<std::string> out = front;
  for (const std::string& entry : list) {
    if (std::find(out.begin(), out.end(), entry) == out.end()) out.push_back(entry);
  }
  return out;
}

// The call's network. Unconfined, the command has the network whatever the default says, so
// only --network inherit stands there; any other --network is refused. Confined: without
// --network a config networkAllow makes the call's policy the allow-list; with it, inherit and
// deny stand as given and an allow: list gets the config's entries in front. networkDeny joins
// whichever allow-list is then in force.
void set_network(SandboxExecutionPolicy& policy, const CallRequest& request,
                 const CallDefaults& defaults) {
  const bool given = request.network.has_value();
  if (policy.mode == SandboxMode::kDangerFullAccess) {
    if (auto refused = unenforceable_network(
            policy.mode, request.network.value_or(NetworkPolicy::kDeny), given)) {
      throw InvalidSandboxInputError(*refused);
    }
    policy.network = NetworkPolicy::kInherit;
    return;
  }
  policy.network = request.network.value_or(NetworkPolicy::kDeny);
  policy.network_allow = request.network_allow;
  if (!given && !defaults.network_allow.empty()) {
    policy.network = NetworkPolicy::kAllowList;
  }
  // The config's sockets join the call's wherever the network is not inherited (where every
  // socket is reachable and an entry would be an error).
  if (policy.network != NetworkPolicy::kInherit) {
    policy.network_allow.unix_sockets =
        joined(defaults.unix_sockets, policy.network_allow.unix_sockets);
  }
  if (policy.network != NetworkPolicy::kAllowList) return;
  policy.network_allow.allow = joined(defaults.network_allow, policy.network_allow.allow);
  policy.network_allow.deny = joined(defaults.network_deny, policy.network_allow.deny);
}

// The mode (request > the session's last sandbox/mode event > the default), the root and the
// session id: through the policy service's one precedence for a resolved workspace; a root as
// given (the executor's, which has no session log) is made absolute and canonical here.
SandboxExecutionPolicy mode_and_root(const CallInputs& inputs) {
  SandboxExecutionPolicy policy;
  if (inputs.workspace) {
    SandboxPolicyRequest request;
    request.session = inputs.session;
    request.mode = inputs.request.mode;
    request.workspace_root = inputs.workspace;
    policy = SandboxPolicyService(inputs.defaults.mode, *inputs.workspace).resolve(request);
  } else {
    policy.mode = inputs.request.mode.value_or(inputs.defaults.mode);
    policy.workspace_root = resolve_workspace_root(inputs.workspace_root);
  }
  if (inputs.session == nullptr) policy.session_id = inputs.session_id;
  return policy;
}

}  // namespace

std::optional<std::string> unenforceable_network(SandboxMode mode, NetworkPolicy network,
                                                 bool network_given) {
  if (mode != SandboxMode::kDangerFullAccess || !network_given ||
      network == NetworkPolicy::kInherit) {
    return std::nullopt;
  }
  return fmt::format(
      "--network {}: danger-full-access runs the command unconfined, so nothing would enforce "
      "it; use --mode read-only or workspace-write, or drop --network",
      wire_name(network));
}

SandboxExecutionPolicy build_call_policy(const CallInputs& inputs) {
  SandboxExecutionPolicy policy = mode_and_root(inputs);
  set_network(policy, inputs.request, inputs.defaults);
  const CallRequest& request = inputs.request;
  add_path_rules(policy, inputs.defaults.rules,
                 {request.allow_write, request.deny_write, request.deny_read, request.allow_cache},
                 {request.config_path, request.session_path});
  if (policy.mode != SandboxMode::kDangerFullAccess && !inputs.planted_roots.empty()) {
    require_unplanted_rule_paths(policy, inputs.planted_roots);
  }
  return policy;
}

std::string resolve_workdir(std::string_view policy_root,
                            std::optional<std::string_view> session_cwd,
                            std::optional<std::string_view> model_workdir) {
  // With neither a root nor a session, the process's directory is the root, absolute: a
  // relative "." would leave the answer to whoever changes directory before the spawn.
  std::string root = !policy_root.empty() ? std::string(policy_root)
                     : session_cwd        ? canonical_path(*session_cwd)
                                          : canonical_path(working_directory());
  if (!model_workdir) return root;
  const std::filesystem::path given(*model_workdir);
  if (given.is_absolute()) return std::string(*model_workdir);
  return (std::filesystem::path(root) / given).lexically_normal().string();
}

}  // namespace dsh::sandbox::policy
