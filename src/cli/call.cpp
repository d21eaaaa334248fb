// SPDX-License-Identifier: Apache-2.0
#include "cli/call.h"

#include <utility>

#include "cli/output.h"

namespace dsh::sandbox::cli {

CallRequest call_request(const Options& options, const RunInvocation& run) {
  CallRequest request;
  request.argv = run.argv;
  request.mode = run.policy.mode;
  request.workspace_root = run.workspace;
  request.workdir = run.workdir;
  if (run.policy.network_given) request.network = run.policy.network;
  request.network_allow = run.policy.network_allow;
  request.allow_write = options.allow_write;
  request.deny_write = options.deny_write;
  request.deny_read = options.deny_read;
  request.allow_cache = options.allow_cache;
  request.config_path = run.config_path;
  request.session_path = run.session_path;
  return request;
}

int prepared_call(Options options, const std::function<void(Options&)>& before,
                  const std::function<int(Call&)>& body, bool held_to_session) {
  Call call;
  call.options = std::move(options);
  try {
    if (before) before(call.options);
    call.run = run_invocation(call.options).value();
    call.plan = plan::plan_call(call_request(call.options, call.run), held_to_session);
    call.audited_mode = call.plan->policy.mode;
  } catch (const SandboxError& error) {
    return fail(error.what(), error.code());  // plan_call logged it once the session was known
  }
  try {
    return body(call);
  } catch (const SandboxError& error) {
    const plan::CallPlan& plan = *call.plan;
    plan::audit_refusal(plan.session, call.run.argv, call.audited_mode, plan.workspace.path(),
                        error);
    return fail(error.what(), error.code());
  }
}

}  // namespace dsh::sandbox::cli
