// SPDX-License-Identifier: Apache-2.0
// A call's path rules as its caller spelled them (the CLI's flags and config file, a
// SandboxExecutor's RunRequest), folded into the policy by one piece of code for every surface:
// made absolute, held to what the call's mode can enforce, kept off the files that decide later
// runs, and refused when an earlier confined run could have pointed them elsewhere.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "dsh/sandbox/policy.h"

namespace dsh::sandbox::policy {

struct PathRules {
  std::vector<std::string> allow_write;
  std::vector<std::string> deny_write;
  std::vector<std::string> deny_read;
  std::vector<std::string> allow_cache;  // names, each value may hold several joined by commas
};

// `defaults`' rules (a config file's), then `call`'s, each made absolute ("~/" against $HOME,
// relative against the working directory) and appended to `policy`. InvalidSandboxInputError
// when a rule of `call` cannot apply in the policy's mode (allow_write or allow_cache under
// read-only, any rule under danger-full-access: an error, never dropped), and when an extra
// writable root covers one of `decisive_files` (the config, the session log: a confined run could
// then rewrite what decides the next run). The messages name the CLI's flags, which the
// executor's fields mirror.
void add_path_rules(SandboxExecutionPolicy& policy, const PathRules& defaults,
                    const PathRules& call, std::span<const std::string> decisive_files);
void add_path_rules(SandboxPolicy& policy, const PathRules& defaults, const PathRules& call,
                    std::span<const std::string> decisive_files);

// InvalidSandboxInputError when an allow-write, deny-write or deny-read path of `policy` is
// reached through a symlink beneath one of `roots` (untrusted_roots of the session's earlier
// workspaces, and the recorded roots): the rule the workspace obeys, for every path the policy
// names. An earlier confined run could have planted that symlink to make a new writable root of
// a directory nobody named, or to point a carve-out away from what it should protect.
void require_unplanted_rule_paths(const SandboxPolicy& policy, std::span<const std::string> roots);

}  // namespace dsh::sandbox::policy
