// SPDX-License-Identifier: Apache-2.0
// One call, planned once, for every door (the CLI's run, confine, start and shell, and the
// public SandboxExecutor): from a CallRequest, where the call's workspace is and what it must not
// trust, the config's defaults, the session, the one policy it runs under and where it starts.
// Then the admission of the running program with the record of what the call makes writable,
// the provider held to the same roots, and a refusal's line in the session's log.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/call.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/local_provider.h"
#include "dsh/sandbox/policy_service.h"
#include "dsh/sandbox/resolved_workspace.h"
#include "plan/config_files.h"
#include "plan/setup.h"
#include "policy/session_watch.h"

namespace dsh::sandbox::plan {

struct CallPlan {
  CallRequest request;  // as the door built it
  std::optional<SessionLog> session;
  // Resolved once: an explicit workspace_root wins over the session's recorded directory, which
  // wins over the working directory; through symlinks only outside /tmp, $TMPDIR, every
  // workspace the session's earlier runs could write and every root the per-user record lists.
  ResolvedWorkspace workspace;
  std::vector<std::string> written;    // the session's earlier writable workspaces
  std::vector<std::string> recorded;   // the roots the per-user record lists
  std::vector<std::string> untrusted;  // untrusted_roots(workspace, written + recorded)
  Setup setup;                         // the config file's
  SandboxExecutionPolicy policy;       // build_call_policy's
  std::string workdir;                 // absolute: where the command starts
  // For a call whose tree outlives the plan (shell, start) and is held to its session: the
  // session as it was before the policy was resolved (policy/session_watch.h).
  std::optional<policy::SessionStart> session_start;

  // The roots earlier confined runs could write: the session's workspaces and the record's. A
  // record that cannot be read adds none: the checks then hold what they held before the record
  // existed, this call's roots, /tmp and $TMPDIR.
  std::vector<std::string> earlier_roots() const;
};

// The plan of `request`. `held_to_session`: the call's tree runs on after the plan (a shell, a
// job), so the session's start is taken before the policy. A SandboxError once the session is
// known is logged there as the call's refusal (audit_refusal) before it propagates.
CallPlan plan_call(const CallRequest& request, bool held_to_session = false);

// Before anything runs under `policy` (the plan's, or an approved retry's): the running program
// (/proc/self/exe: the CLI, or the program linking SandboxExecutor) must pass the trust check
// against the roots this call's mode makes writable (the workspace and extra writable roots under
// workspace-write, none under read-only), /tmp, $TMPDIR and the roots earlier runs could write; a
// program a confined run could replace would run as the impostor of every later call. Then a
// workspace-write call's writable roots join the per-user record (before the command starts, so a
// killed run still counts). Nothing under danger-full-access, which confines nothing. `program`
// names it in a refusal.
void admit(const CallPlan& plan, const SandboxExecutionPolicy& policy, std::string_view program);

// The roots a directory of per-user state this call writes (background jobs) must lie outside:
// what `policy`'s mode makes writable (none under read-only, so a read-only job can start from / or
// an ancestor of the state), /tmp, $TMPDIR and the roots earlier runs could write.
std::vector<std::string> state_untrusted_roots(const CallPlan& plan,
                                               const SandboxExecutionPolicy& policy);

// The provider for this call (the config's runners), holding them to the same roots as admit().
LocalSandboxProvider plan_provider(const CallPlan& plan);

// The call's sandbox/refused line in its session's log, when it has one; a log that cannot take
// it changes nothing (the refusal is reported to the caller anyway).
void audit_refusal(const std::optional<SessionLog>& session, const std::vector<std::string>& argv,
                   SandboxMode mode, const std::string& workspace, const SandboxError& error);

}  // namespace dsh::sandbox::plan
