// SPDX-License-Identifier: Apache-2.0
// What `run`, `confine`, `start` and `shell` share before they spawn anything, written once:
// the flags checked, where the call's workspace is and what it must not trust, the config, and
// the one policy the call runs under (policy/call_policy.h); then the admission of the running
// CLI, the provider, the workdir, and the refusal's line in the session's log.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/invocation.h"
#include "cli/setup.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/policy_service.h"
#include "dsh/sandbox/resolved_workspace.h"
#include "policy/session_watch.h"

namespace dsh::sandbox::cli {

// Where this call's workspace is and what it must not trust. An explicit --workspace wins over
// the session's recorded cwd, which wins over the working directory; the workspace (and every
// path rule) is resolved through symlinks only outside /tmp, $TMPDIR, every workspace the
// session's earlier runs could write and every root the per-user record lists.
struct CallContext {
  std::optional<SessionLog> session;
  ResolvedWorkspace workspace;         // resolved once, here; every later step takes it as is
  std::vector<std::string> written;    // the session's earlier writable workspaces
  std::vector<std::string> untrusted;  // untrusted_roots(workspace, written + recorded)
  std::vector<std::string> recorded;   // the roots the per-user record lists
};

// A call as prepared before it spawns anything.
struct Call {
  Options options;                     // the flags as given (and as `before` adjusted them)
  RunInvocation run;                   // the flags, checked and typed
  std::optional<CallContext> context;  // set once the workspace is known
  Setup setup;                         // the config file
  SandboxExecutionPolicy policy;       // build_call_policy's, once per call
  SandboxMode audited_mode = SandboxMode::kReadOnly;  // the mode a refusal's audit line names
  // For a call whose tree outlives the resolution (shell, start) and is held to its session:
  // the session as it was before the policy was resolved (policy/session_watch.h).
  std::optional<policy::SessionStart> session_start;
};

// The shared prologue, then `body`: `before` (may be empty) checks and adjusts the flags, then
// run_invocation, call_context, load_setup and build_call_policy. Any SandboxError, there or in
// `body`, is the call's refusal: its sandbox/refused line in the session's log (when the session
// is known), then fail() with its code. `held_to_session`: the call's tree runs on after the
// call's policy is resolved (a shell, a job), so the session's start is taken (session_start).
int prepared_call(Options options, const std::function<void(Options&)>& before,
                  const std::function<int(Call&)>& body, bool held_to_session = false);

// Before anything runs under `policy`: the running CLI must pass the trust check against the
// roots this call's mode makes writable (the workspace and --allow-write roots under
// workspace-write, none under read-only), /tmp, $TMPDIR and the roots earlier runs could write
// (the session's and the record's); then a workspace-write workspace is recorded. Nothing under
// danger-full-access, which confines nothing.
void admit(const CallContext& call, const SandboxExecutionPolicy& policy);

// The roots a directory of per-user state this call writes (background jobs) must lie outside:
// what its mode makes writable (none under read-only, so a read-only job can start from / or an
// ancestor of the state), /tmp, $TMPDIR and the roots earlier runs could write.
std::vector<std::string> state_untrusted_roots(const CallContext& call,
                                               const SandboxExecutionPolicy& policy);

// The provider for this call, holding its runners to the same roots as admit() does.
LocalSandboxProvider call_provider(const Setup& setup, const CallContext& call);

// Where the command runs: the tool layer's rule (consumer/tool_schema.h), the same for run,
// start and shell. No --workdir: the policy's root (the resolved workspace, which is the
// session's recorded cwd when the session names one and --workspace does not); a relative
// --workdir against that root; an absolute one as given.
std::string call_workdir(const RunInvocation& run, const SandboxExecutionPolicy& policy,
                         const CallContext& call);

// The call's sandbox/refused line in its session's log, when it has one; a log that cannot take
// it changes nothing (the refusal is reported on stderr anyway).
void audit_refusal(const CallContext* call, const std::vector<std::string>& argv, SandboxMode mode,
                   const SandboxError& error);

}  // namespace dsh::sandbox::cli
