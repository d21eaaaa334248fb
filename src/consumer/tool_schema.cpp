// SPDX-License-Identifier: Apache-2.0
#include "consumer/tool_schema.h"

#include <filesystem>

#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/escalation.h"
#include "dsh/sandbox/roots.h"

namespace dsh::sandbox::consumer {

namespace {

using nlohmann::json;

constexpr std::string_view kDescription =
    "Run a bash command. A result marked [sandbox: file access denied under <mode> mode] is a "
    "policy denial: do not retry it another way. When escalation is offered, retry that exact "
    "command once in the same turn with sandbox_permissions set to the narrowest wider mode that "
    "suffices and a justification grounded in the denial; the person is asked to approve it, and "
    "a rejection is final for that command.";

// Said to the model when the command's network is off or limited: a wider file mode is no fix.
constexpr std::string_view kNetworkNote =
    " The command has no network access beyond what the sandbox's network policy allows; a "
    "connection it refuses is a policy denial too, and a wider sandbox mode does not open it.";

json pairing_texts() {
  json texts = json::array();
  // The reference's three pairing errors, in its order.
  const std::optional<std::string_view> blank = std::string_view(" ");
  for (const auto& [permissions, justification] :
       {std::pair{std::optional(SandboxMode::kWorkspaceWrite), std::optional<std::string_view>()},
        std::pair{std::optional<SandboxMode>(), std::optional<std::string_view>("why")},
        std::pair{std::optional(SandboxMode::kWorkspaceWrite), blank}}) {
    const Result<void> checked = validate_escalation_args(permissions, justification);
    texts.push_back(checked ? std::string() : checked.error().message);
  }
  return texts;
}

}  // namespace

Result<json> bash_tool_definition(const ToolComposition& composition) {
  const bool confines = composition.executor_mode.has_value() &&
                        *composition.executor_mode != SandboxMode::kDangerFullAccess;
  if (composition.executor_mode && !composition.policy_service) {
    return InvalidInput{std::string(kToolPolicyMissing)};
  }
  json properties = {
      {"command", {{"type", "string"}, {"description", "The bash command to run."}}},
      {"description",
       {{"type", "string"}, {"description", "What the command does, in a few words."}}},
      {"timeoutMs",
       {{"type", "number"},
        {"exclusiveMinimum", 0},
        {"description", "Foreground timeout in milliseconds."}}},
      {"workdir",
       {{"type", "string"},
        {"description",
         "Working directory; a relative path is resolved against the workspace root."}}}};
  if (composition.run_in_background) {
    properties["run_in_background"] = {{"type", "boolean"},
                                       {"description", "Start the command as a background job."}};
  }
  if (confines) {
    json targets = json::array();
    for (const SandboxMode mode : kEscalationTargets) targets.push_back(wire_name(mode));
    properties["sandbox_permissions"] = {
        {"type", "string"},
        {"enum", targets},
        {"description", "Retry under this wider sandbox mode; requires justification."}};
    properties["justification"] = {
        {"type", "string"},
        {"description", "Why the wider mode is needed; only with sandbox_permissions."}};
  }
  json texts = {{"policyMissing", kToolPolicyMissing},
                {"notAvailable", kToolNotAvailable},
                {"pairing", pairing_texts()}};
  if (confines) texts["escalationHint"] = escalation_hint_marker("command");
  std::string description(kDescription);
  if (confines && composition.network != NetworkPolicy::kInherit) {
    description += kNetworkNote;
  }
  return json{{"name", "bash"},
              {"description", description},
              {"network", confines ? json(wire_name(composition.network)) : json("inherit")},
              {"input_schema",
               {{"type", "object"},
                {"properties", properties},
                {"required", json::array({"command", "description"})},
                {"additionalProperties", false}}},
              {"escalation", confines},
              {"texts", texts}};
}

SandboxExecutionPolicy tool_call_policy(const SandboxExecutionPolicy& standing,
                                        const ToolEscalation& escalation,
                                        const ToolComposition& composition, const ToolCall& call) {
  const std::optional<std::string_view> justification =
      escalation.justification ? std::optional<std::string_view>(*escalation.justification)
                               : std::nullopt;
  if (const Result<void> paired =
          validate_escalation_args(escalation.sandbox_permissions, justification);
      !paired) {
    throw InvalidSandboxInputError(paired.error().message);
  }
  if (!escalation.sandbox_permissions) return standing;
  const bool confines = composition.executor_mode.has_value() &&
                        *composition.executor_mode != SandboxMode::kDangerFullAccess;
  if (!confines) throw InvalidSandboxInputError(std::string(kToolNotAvailable));
  EscalationRequest request{*escalation.sandbox_permissions, *escalation.justification,
                            std::string(wire_name(standing.mode)), call.agent};
  request.tool_name = call.tool_name;
  request.call_id = call.call_id;
  SandboxExecutionPolicy granted = standing;
  granted.mode = approve_escalation(request, call.approver);
  if (granted.mode == SandboxMode::kDangerFullAccess) {
    granted.network = NetworkPolicy::kInherit;
    granted.network_allow = {};
  }
  return granted;
}

}  // namespace dsh::sandbox::consumer
