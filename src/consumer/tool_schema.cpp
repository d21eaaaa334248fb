// SPDX-License-Identifier: Apache-2.0
#include "consumer/tool_schema.h"

#include <algorithm>
#include <array>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/text.h"
#include "consumer/denials.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/escalation.h"
#include "dsh/sandbox/roots.h"
#include "exec/exec.h"

namespace dsh::sandbox::consumer {

namespace {

using nlohmann::json;

constexpr std::string_view kDescription =
    "Run a bash command. A result marked [sandbox: file access denied under <mode> mode] is a "
    "policy denial: do not retry it another way. When escalation is offered, retry that exact "
    "command once in the same turn asking for the narrowest change the denial supports: the "
    "refused directory in allow_write, the refused host in network_allow, the cache in "
    "allow_cache (the [narrowest change: ...] lines name them), and only when none of those "
    "suffices sandbox_permissions set to the narrowest wider mode; always with a justification "
    "grounded in the denial. The person is asked to approve exactly that, and a rejection is "
    "final for that command.";

// Said to the model when the command's network is off or limited: a wider file mode is no fix.
constexpr std::string_view kNetworkNote =
    " The command has no network access beyond what the sandbox's network policy allows; a "
    "connection it refuses is a policy denial too, and a wider sandbox mode does not open it.";

// The bounds `dsh-sandbox run --timeout` enforces, so a value the schema admits is never refused
// by the CLI a harness hands it to.
json timeout_property() {
  return {{"type", "number"},
          {"exclusiveMinimum", 0},
          {"maximum", exec::kMaxDeadlineMs},
          {"default", exec::kDefaultTimeoutMs},
          {"description",
           "Foreground timeout in milliseconds: 120000 (2 minutes) unless given, at most "
           "31536000000 (365 days)."}};
}

// The narrow grants a model asks for instead of a wider mode, one property each.
void add_grant_properties(json& properties) {
  const auto list = [](std::string_view description) {
    return json{{"type", "array"},
                {"items", {{"type", "string"}}},
                {"minItems", 1},
                {"description", description}};
  };
  properties["allow_write"] = list(
      "Absolute directories this one call may also write (--allow-write), for a write refused "
      "outside the writable roots; under read-only it runs under workspace-write. Requires "
      "justification.");
  properties["network_allow"] = list(
      "Host names or addresses this one call may also reach through the sandbox's proxy "
      "(--network allow:), each one destination, for a connection the network policy refused. "
      "Requires justification.");
  json caches = json::array();
  for (const std::string_view name : cache_preset_names()) caches.push_back(name);
  properties["allow_cache"] = list(
      "Package caches this one call may write (--allow-cache), for a write refused in a "
      "tool's cache; under read-only it runs under workspace-write. Requires justification.");
  properties["allow_cache"]["items"] = {{"type", "string"}, {"enum", caches}};
}

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
      {"timeoutMs", timeout_property()},
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
        {"description",
         "Retry under this wider sandbox mode, only when no narrower grant (allow_write, "
         "network_allow, allow_cache) suffices; danger-full-access runs the command with no "
         "sandbox at all. Requires justification."}};
    add_grant_properties(properties);
    properties["justification"] = {
        {"type", "string"},
        {"description",
         "Why the grant or the wider mode is needed, grounded in the denial; only with "
         "allow_write, network_allow, allow_cache or sandbox_permissions."}};
  }
  json texts = {{"policyMissing", kToolPolicyMissing},
                {"notAvailable", kToolNotAvailable},
                {"pairing", pairing_texts()},
                {"grantNeedsJustification", kGrantNeedsJustification}};
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

namespace {

bool confining(const ToolComposition& composition) {
  return composition.executor_mode.has_value() &&
         *composition.executor_mode != SandboxMode::kDangerFullAccess;
}

// No writable root may lie in these (the policy refuses them): the kernel's own trees.
constexpr std::array<std::string_view, 3> kKernelTrees = {"/proc", "/dev", "/sys"};

[[noreturn]] void refuse_entry(std::string_view field, const std::string& entry,
                               std::string_view expected) {
  throw InvalidSandboxInputError(
      fmt::format("{} entry {}: expected {}", field, text::quoted(entry), expected));
}

// Each entry as a policy takes it, or InvalidSandboxInputError naming the field: the person is
// asked for exactly what runs, and a grant never opens more than the entries name.
NarrowGrant checked_grant(const NarrowGrant& asked, NetworkPolicy network) {
  NarrowGrant grant;
  for (const std::string& dir : asked.allow_write) {
    const std::string normal = std::filesystem::path(dir).lexically_normal().string();
    const bool kernel = std::any_of(kKernelTrees.begin(), kKernelTrees.end(), [&](auto tree) {
      return normal == tree || normal.starts_with(std::string(tree) + "/");
    });
    if (!dir.starts_with('/') || normal == "/" || kernel || dir.find('\0') != std::string::npos) {
      refuse_entry("allow_write", dir,
                   "an absolute directory other than / and outside /proc, /dev and /sys");
    }
    grant.allow_write.push_back(normal);
  }
  for (const std::string& host : asked.network_allow) {
    const std::optional<std::string> single = single_destination(host);
    if (!single) {
      refuse_entry("network_allow", host,
                   "one host name or address (no range, wildcard, port or host-local address)");
    }
    grant.network_allow.push_back(*single);
  }
  if (!grant.network_allow.empty() && network == NetworkPolicy::kInherit) {
    throw InvalidSandboxInputError(
        "network_allow: this call's network is already open (inherit); nothing to grant");
  }
  const std::span<const std::string_view> presets = cache_preset_names();
  for (const std::string& name : asked.allow_cache) {
    if (std::find(presets.begin(), presets.end(), name) == presets.end()) {
      refuse_entry("allow_cache", name, fmt::format("one of {}", fmt::join(presets, ", ")));
    }
    grant.allow_cache.push_back(name);
  }
  return grant;
}

// The call's policy under an approved narrow grant (tool_call_policy, tool_schema.h).
SandboxExecutionPolicy granted_policy(const SandboxExecutionPolicy& standing,
                                      const ToolEscalation& escalation,
                                      const ToolComposition& composition, const ToolCall& call) {
  if (!escalation.justification) {
    throw InvalidSandboxInputError(std::string(kGrantNeedsJustification));
  }
  if (const Result<void> blank =
          validate_escalation_args(SandboxMode::kWorkspaceWrite, *escalation.justification);
      !blank) {
    throw InvalidSandboxInputError(blank.error().message);
  }
  if (!confining(composition)) throw InvalidSandboxInputError(std::string(kToolNotAvailable));
  SandboxMode mode = escalation.sandbox_permissions.value_or(standing.mode);
  if (mode == SandboxMode::kDangerFullAccess) {
    throw InvalidSandboxInputError(
        "allow_write, network_allow and allow_cache with sandbox_permissions danger-full-access: "
        "that mode confines nothing, so there is nothing to grant; ask for one of them alone");
  }
  const NarrowGrant grant = checked_grant(escalation.grant, standing.network);
  // --allow-write and --allow-cache take effect under workspace-write only.
  if (mode == SandboxMode::kReadOnly &&
      (!grant.allow_write.empty() || !grant.allow_cache.empty())) {
    mode = SandboxMode::kWorkspaceWrite;
  }
  EscalationRequest request{mode, *escalation.justification, std::string(wire_name(standing.mode)),
                            call.agent};
  request.tool_name = call.tool_name;
  request.call_id = call.call_id;
  approve_grant(grant, request, call.approver);
  SandboxExecutionPolicy granted = standing;
  granted.mode = mode;
  granted.allow_write.insert(granted.allow_write.end(), grant.allow_write.begin(),
                             grant.allow_write.end());
  granted.allow_cache.insert(granted.allow_cache.end(), grant.allow_cache.begin(),
                             grant.allow_cache.end());
  std::vector<std::string>& allowed = granted.network_allow.allow;
  for (const std::string& host : grant.network_allow) {
    if (std::find(allowed.begin(), allowed.end(), host) == allowed.end()) allowed.push_back(host);
  }
  if (!grant.network_allow.empty()) granted.network = NetworkPolicy::kAllowList;
  return granted;
}

}  // namespace

SandboxExecutionPolicy tool_call_policy(const SandboxExecutionPolicy& standing,
                                        const ToolEscalation& escalation,
                                        const ToolComposition& composition, const ToolCall& call) {
  if (!escalation.grant.empty()) return granted_policy(standing, escalation, composition, call);
  const std::optional<std::string_view> justification =
      escalation.justification ? std::optional<std::string_view>(*escalation.justification)
                               : std::nullopt;
  if (const Result<void> paired =
          validate_escalation_args(escalation.sandbox_permissions, justification);
      !paired) {
    throw InvalidSandboxInputError(paired.error().message);
  }
  if (!escalation.sandbox_permissions) return standing;
  if (!confining(composition)) throw InvalidSandboxInputError(std::string(kToolNotAvailable));
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
