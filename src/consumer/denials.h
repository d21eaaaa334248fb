// SPDX-License-Identifier: Apache-2.0
// What every surface says about a run's recorded refusals (docs/evidence.md): the lines the agent
// render appends, the narrowest policy change that would have allowed them (also `run --learn`),
// and the JSON fields. Pure: no I/O.
#pragma once

#include <string>
#include <vector>

#include "consumer/bash_executor.h"
#include "nlohmann/json.hpp"

namespace dsh::sandbox::consumer {

// "[sandbox refused: OP PATH (RULE)]" per distinct record (at most a few, then how many more).
std::vector<std::string> denial_lines(const SandboxFacts& sandbox);

// The smallest changes that would have allowed what was refused, one per line, each a flag of
// `dsh-sandbox run` (--allow-write DIR, --mode workspace-write, --network inherit, ...) or a
// sentence when no flag can (a kernel object). Empty: nothing was refused.
std::vector<std::string> narrowest_changes(const SandboxFacts& sandbox,
                                           const std::string& workspace_root);

// denialSource, denials [{op, path, rule, pid, exe}], denialCount, merged into `object`.
void add_denial_json(nlohmann::json& object, const SandboxFacts& sandbox);

}  // namespace dsh::sandbox::consumer
