// SPDX-License-Identifier: Apache-2.0
// The bash tool a harness hands to a model, as data: its input schema (with the escalation fields
// only when the session's mode confines), the texts the tool layer answers with, and its
// working-directory rule. Pure: no I/O beyond canonicalizing the session's cwd.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "dsh/sandbox/modes.h"
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

// The working directory of a call, the one rule of every consumer (the CLI's run, start and
// shell; SandboxExecutor and SandboxBashExecutor): with no model workdir, the policy's root, or
// the canonical session cwd when there is no root, or the process's directory when there is
// neither; a relative model workdir against that root, never against the process's directory; an
// absolute one as given.
std::string resolve_tool_workdir(std::string_view policy_root,
                                 std::optional<std::string_view> session_cwd,
                                 std::optional<std::string_view> model_workdir);

}  // namespace dsh::sandbox::consumer
