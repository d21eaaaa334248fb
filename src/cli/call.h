// SPDX-License-Identifier: Apache-2.0
// What `run`, `confine`, `start` and `shell` share before they spawn anything, written once: the
// flags checked, the CallRequest they make, and that request's plan (plan/call_plan.h), whose
// refusals reach the session's log and stderr alike.
#pragma once

#include <functional>
#include <optional>

#include "cli/invocation.h"
#include "dsh/sandbox/call.h"
#include "plan/call_plan.h"

namespace dsh::sandbox::cli {

// A call as prepared before it spawns anything.
struct Call {
  Options options;                     // the flags as given (and as `before` adjusted them)
  RunInvocation run;                   // the flags, checked and typed
  std::optional<plan::CallPlan> plan;  // set once planned; the body always has it
  SandboxMode audited_mode = SandboxMode::kReadOnly;  // the mode a refusal's audit line names
};

// The request the flags make: the argv, the mode, the workspace and workdir, the network (its
// allow-list canonical), the path rules, the config and the session.
CallRequest call_request(const Options& options, const RunInvocation& run);

// The shared prologue, then `body`: `before` (may be empty) checks and adjusts the flags, then
// run_invocation and plan_call. Any SandboxError, there or in `body`, is the call's refusal: its
// sandbox/refused line in the session's log (when the session is known), then fail() with its
// code. `held_to_session`: the call's tree runs on after the plan (a shell, a job).
int prepared_call(Options options, const std::function<void(Options&)>& before,
                  const std::function<int(Call&)>& body, bool held_to_session = false);

}  // namespace dsh::sandbox::cli
