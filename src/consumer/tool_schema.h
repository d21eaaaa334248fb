// SPDX-License-Identifier: Apache-2.0
// The bash tool a harness hands to a model, as data: its input schema (with the escalation fields
// only when the session's mode confines), the texts the tool layer answers with, its
// working-directory rule, and the policy one tool call runs under, foreground or background.
// No I/O beyond canonicalizing the session's cwd and asking the approver.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "dsh/sandbox/escalation.h"
#include "dsh/sandbox/modes.h"
#include "dsh/sandbox/policy.h"
#include "dsh/sandbox/result.h"

namespace dsh::sandbox::consumer {

// Plugin load fails with this when the executor confines but no policy service is composed.
inline constexpr std::string_view kToolPolicyMissing =
    "tool-bash: the mounted bash executor confines but ctx.sandboxPolicy is missing";
// A call carries sandbox_permissions but no confining executor is mounted.
inline constexpr std::string_view kToolNotAvailable =
    "sandbox_permissions is not available in this composition (no sandboxing executor to "
    "escalate)";

struct ToolComposition {
  // The session's mode when a sandboxing executor is mounted; nullopt: a plain executor.
  std::optional<SandboxMode> executor_mode;
  bool policy_service = true;     // whether a policy service is composed
  bool run_in_background = true;  // whether background runs are offered
  // The network a confined command gets: none unless the session's policy opens it.
  NetworkPolicy network = NetworkPolicy::kDeny;
};

// {"name":"bash","description":...,"input_schema":{...},"texts":{...}}; the load error (exact
// text, kToolPolicyMissing) when the executor confines without a policy service.
Result<nlohmann::json> bash_tool_definition(const ToolComposition& composition);

// The model's escalation fields of one tool call.
struct ToolEscalation {
  std::optional<SandboxMode> sandbox_permissions;
  std::optional<std::string> justification;
};

// Who is asked about which call.
struct ToolCall {
  std::optional<std::string> agent;  // nullopt or empty: the call has no agent
  std::string tool_name = "bash";
  std::string call_id;
  Approver* approver = nullptr;
};

// The policy one tool call runs under, the same whether it runs in the foreground
// (SandboxBashExecutor::run) or as a background job (run_in_background,
// SandboxBashExecutor::start): the escalation pairing checked first (InvalidSandboxInputError with
// the reference's texts); without sandbox_permissions, `standing` as it is; with them,
// kToolNotAvailable (InvalidSandboxInputError) when `composition` mounts no confining executor,
// else approve_escalation judged against the standing mode, whose grant replaces the mode for
// this one call (danger-full-access keeps the process's own network: nothing could enforce
// another), keeping the root, the session id and the rules. EscalationError when it is not
// granted: nothing may run. Nothing is written to a session.
SandboxExecutionPolicy tool_call_policy(const SandboxExecutionPolicy& standing,
                                        const ToolEscalation& escalation,
                                        const ToolComposition& composition, const ToolCall& call);

}  // namespace dsh::sandbox::consumer
