// SPDX-License-Identifier: Apache-2.0
// SandboxPolicyService: precedence, root resolution, the policy texts.
#include "dsh/sandbox/policy_service.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/text.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/roots.h"

namespace dsh::sandbox {

namespace {

SandboxMode configured_mode(std::string_view name) {
  auto mode = parse_sandbox_mode(name);
  if (!mode) {
    throw InvalidSandboxInputError(fmt::format("sandbox policy config: {}", mode.error().message));
  }
  return mode.value();
}

std::string configured_root(const std::optional<std::string>& root) {
  // Only a missing root means "the working directory"; an empty string is a mistake, not a
  // request for the default.
  if (!root) return resolve_workspace_root(".");
  if (root->empty() || root->find('\0') != std::string::npos) {
    throw InvalidSandboxInputError(
        fmt::format("sandbox policy config: workspace root {} is empty or contains a NUL byte; "
                    "omit it to use the working directory",
                    text::quoted(*root)));
  }
  return resolve_workspace_root(*root);
}

// JSON.stringify of the root, as the reference quotes it. A byte sequence that is not UTF-8
// becomes U+FFFD rather than failing: the text only informs the model.
std::string json_quoted(const std::string& value) {
  return nlohmann::json(value).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

SandboxPolicyService::SandboxPolicyService(const SandboxPolicyConfig& config)
    : default_mode_(configured_mode(config.mode)),
      workspace_root_(configured_root(config.workspace_root)) {}

SandboxPolicyService::SandboxPolicyService(SandboxMode default_mode,
                                           const ResolvedWorkspace& workspace_root)
    : default_mode_(default_mode), workspace_root_(workspace_root.path()) {}

SandboxExecutionPolicy SandboxPolicyService::resolve(const SandboxPolicyRequest& request) const {
  SandboxExecutionPolicy policy;
  const SessionLog* session = request.session;
  const std::optional<SandboxMode> session_mode =
      session != nullptr ? override_of(*session) : std::nullopt;
  policy.mode = request.mode.value_or(session_mode.value_or(default_mode_));
  // The session's cwd is immutable; the configured root serves agentless calls and sessions
  // created without a cwd.
  // An explicit root named for this call wins over both.
  const bool has_cwd = session != nullptr && session->cwd().has_value();
  if (request.workspace_root) {
    policy.workspace_root = request.workspace_root->path();
    policy.resolved_workspace = request.workspace_root;
  } else {
    policy.workspace_root = has_cwd ? resolve_workspace_root(*session->cwd()) : workspace_root_;
  }
  if (session != nullptr) policy.session_id = session->id();
  return policy;
}

std::optional<SandboxMode> SandboxPolicyService::override_of(const SessionLog& session) const {
  return effective_sandbox_mode(session.sandbox_mode_events());
}

std::string SandboxPolicyService::policy_context(const SessionLog* session) const {
  if (session == nullptr) return {};
  return sandbox_policy_text(resolve({.session = session}));
}

std::string sandbox_policy_text(const SandboxExecutionPolicy& policy) {
  switch (policy.mode) {
    case SandboxMode::kReadOnly:
      return "Current DSH file policy: read-only. Any available operation enforced by the DSH "
             "file sandbox cannot modify files in the standing mode. Do not refuse a required "
             "modification from this policy alone: try an available tool normally and follow "
             "any denial and escalation guidance it returns.";
    case SandboxMode::kWorkspaceWrite:
      return fmt::format(
          "Current DSH file policy: workspace-write. Any available operation enforced by the DSH "
          "file sandbox may modify files under the session workspace: {}. Some platform "
          "temporary areas may also be writable.",
          json_quoted(policy.workspace_root));
    case SandboxMode::kDangerFullAccess:
      return "Current DSH file policy: danger-full-access. The DSH file sandbox does not "
             "restrict file modifications by available operations.";
  }
  throw std::logic_error("unreachable variant in SandboxMode");
}

}  // namespace dsh::sandbox
