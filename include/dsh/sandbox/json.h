// SPDX-License-Identifier: Apache-2.0
// JSON for the seam's values with the reference's field names (argv, enforcement,
// denialSignatures, runnerFailureRules, allowedExitCodes, fatalSignatures, informationalLines;
// mode, workspaceRoot, sessionId), so our JSON is interchangeable with the reference's
// TypeScript types. Absent optional fields are omitted; unknown fields are ignored on input.
#pragma once

#include <string>
#include <string_view>

#include "dsh/sandbox/confined_argv.h"
#include "dsh/sandbox/policy.h"
#include "dsh/sandbox/result.h"

namespace dsh::sandbox {

// Fails only when a string is not valid UTF-8, which JSON cannot carry without changing it.
Result<std::string> to_json(const ConfinedArgv& confined);
Result<std::string> to_json(const SandboxPolicy& policy);

// Malformed JSON, a missing field, a wrong type or an unknown mode is an error naming the field.
Result<ConfinedArgv> confined_argv_from_json(std::string_view text);
// Also applies validate_policy.
Result<SandboxPolicy> sandbox_policy_from_json(std::string_view text);

}  // namespace dsh::sandbox
