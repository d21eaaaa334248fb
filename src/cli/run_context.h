// SPDX-License-Identifier: Apache-2.0
// What `run`, `start` and `shell` share before they spawn anything: where the call's workspace
// is and what it must not trust, and the policy it runs under (src/cli/run_command.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/invocation.h"
#include "cli/setup.h"
#include "dsh/sandbox/policy_service.h"
#include "dsh/sandbox/resolved_workspace.h"

namespace dsh::sandbox::cli {

// Where this call's workspace is and what it must not trust. An explicit --workspace wins over
// the session's recorded cwd, which wins over the working directory; the workspace is resolved
// through symlinks only outside /tmp, $TMPDIR, every workspace the session's earlier runs could
// write and every root the per-user record lists.
struct CallContext {
  std::optional<SessionLog> session;
  ResolvedWorkspace workspace;         // resolved once, here; every later step takes it as is
  std::vector<std::string> written;    // the session's earlier writable workspaces
  std::vector<std::string> untrusted;  // untrusted_roots(workspace, written)
};

CallContext call_context(const RunInvocation& run);

// --mode is the approved mode; then the session's last sandbox/mode event; then the config.
SandboxExecutionPolicy resolve_policy(const RunInvocation& run, const Setup& setup,
                                      const CallContext& call);

}  // namespace dsh::sandbox::cli
