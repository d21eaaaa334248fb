// SPDX-License-Identifier: Apache-2.0
// nlohmann::json forms of the seam's values, for components that embed them in larger
// documents (the CLI's output, the config file). The public string API is in json.h.
#pragma once

#include <nlohmann/json.hpp>

#include "dsh/sandbox/confined_argv.h"
#include "dsh/sandbox/policy.h"
#include "dsh/sandbox/result.h"

namespace dsh::sandbox::json {

nlohmann::json to_value(const ConfinedArgv& confined);
nlohmann::json to_value(const SandboxPolicy& policy);
nlohmann::json to_value(const RunnerFailureRule& rule);

Result<ConfinedArgv> confined_argv_from_value(const nlohmann::json& value);
Result<SandboxPolicy> sandbox_policy_from_value(const nlohmann::json& value);
Result<RunnerFailureRule> runner_failure_rule_from_value(const nlohmann::json& value);

// Serializes compactly; fails when a string is not valid UTF-8 (JSON cannot carry it unchanged).
Result<std::string> dump(const nlohmann::json& value);
// Parses a whole document; malformed JSON is an error that says where.
Result<nlohmann::json> parse(std::string_view text, std::string_view what);

// Reads `field` of `object` as an array of strings; `what` names the document in errors.
Result<std::vector<std::string>> string_array(const nlohmann::json& object, std::string_view field,
                                              std::string_view what);

}  // namespace dsh::sandbox::json
