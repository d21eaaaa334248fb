// SPDX-License-Identifier: Apache-2.0
// The call's path rules from the command line (--allow-write, --deny-write, --deny-read,
// --allow-cache) and the config file, merged into the policy, and the checks that keep the
// sandbox's own files out of every extra writable root.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cli/commands.h"
#include "dsh/sandbox/policy.h"
#include "local/config.h"

namespace dsh::sandbox::cli {

// The config's rules, then the command line's, through policy::add_path_rules (the executor's
// path too), with the config file and the session log as the files no extra writable root may
// cover.
void add_path_rules(SandboxExecutionPolicy& policy, const Options& options,
                    const local::ConfigPathRules& config);
void add_path_rules(SandboxPolicy& policy, const Options& options,
                    const local::ConfigPathRules& config);

// The effective policy after defaults as the `policy` JSON object; null when the policy cannot
// be made effective (confine and run then report that error themselves).
nlohmann::json effective_policy_view(const SandboxPolicy& policy);

}  // namespace dsh::sandbox::cli
