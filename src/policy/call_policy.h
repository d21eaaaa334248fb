// SPDX-License-Identifier: Apache-2.0
// The one place a call's policy is resolved. What the caller asked for (the CLI's flags, a
// SandboxExecutor's RunRequest), the config file's defaults, the session's mode and the roots
// earlier confined runs could write (the session's and the per-user record's) are folded, once
// per call, into the SandboxExecutionPolicy the call runs under. Every call's plan
// (plan/call_plan.h) and the CLI's probe call build_call_policy, so the library and
// the CLI confine alike; the provider then makes the policy's paths effective
// (policy/effective_policy.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/call.h"
#include "dsh/sandbox/modes.h"
#include "dsh/sandbox/policy.h"
#include "dsh/sandbox/policy_service.h"
#include "dsh/sandbox/resolved_workspace.h"

namespace dsh::sandbox::policy {

// Path rules as a caller spells them: "~/" against $HOME, a relative path against the working
// directory, "!PATH" lifting a default.
struct PathRules {
  std::vector<std::string> allow_write;
  std::vector<std::string> deny_write;
  std::vector<std::string> deny_read;
  std::vector<std::string> allow_cache;  // names, each value may hold several joined by commas
};

// The config file's defaults for every call.
struct CallDefaults {
  SandboxMode mode = SandboxMode::kReadOnly;  // the fail-safe default
  PathRules rules;                            // allowWrite, denyWrite, denyRead, allowCache
  std::vector<std::string> network_allow;     // networkAllow, canonical
  std::vector<std::string> network_deny;      // networkDeny, canonical
  std::vector<std::string> unix_sockets;      // allowUnixSockets, absolute
};

struct CallInputs {
  // What the call asked for (its network allow-list canonical: the door's parser made it so).
  CallRequest request;
  CallDefaults defaults;
  const SessionLog* session = nullptr;    // its last sandbox/mode event, its id (with `workspace`)
  std::optional<std::string> session_id;  // without a session log: the caller's opaque id
  // The workspace resolved once (the CLI); without it, `workspace_root` made absolute and
  // canonical here (the executor's root as given).
  std::optional<ResolvedWorkspace> workspace;
  std::string workspace_root;
  // The roots earlier confined runs could write, with /tmp and $TMPDIR (untrusted_roots): no
  // path of a rule may be reached through a symlink beneath one. Empty: no such check (a view
  // that confines nothing).
  std::vector<std::string> planted_roots;
};

// Unconfined, nothing could enforce a network policy: a --network deny or allow: the caller
// wrote is refused rather than ignored, for every call (run, start, shell, the executor) and for
// an approved retry into danger-full-access alike. The default (no network in confined modes) is
// no such request: a danger-full-access call keeps the network it inherently has.
std::optional<std::string> unenforceable_network(SandboxMode mode, NetworkPolicy network,
                                                 bool network_given);

// The call's policy: the mode (request > session > defaults), the workspace root, the session
// id, the network (an unconfined call without --network inherits it; the config's allow-list
// joins a confined one), the path rules (the config's, then the call's, each made absolute).
// InvalidSandboxInputError when a rule of the call cannot apply in its mode, an extra writable
// root covers a decisive file, a --network cannot be enforced (unenforceable_network), or a
// rule path was planted (call_policy.cpp says which).
SandboxExecutionPolicy build_call_policy(const CallInputs& inputs);

// The working directory of a call, the one rule of every consumer (the CLI's run, start and
// shell; SandboxExecutor and SandboxBashExecutor): with no model workdir, the policy's root, or
// the canonical session cwd when there is no root, or the process's directory when there is
// neither; a relative model workdir against that root, never against the process's directory; an
// absolute one as given.
std::string resolve_workdir(std::string_view policy_root,
                            std::optional<std::string_view> session_cwd,
                            std::optional<std::string_view> model_workdir);

}  // namespace dsh::sandbox::policy
