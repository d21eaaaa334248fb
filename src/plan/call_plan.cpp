// SPDX-License-Identifier: Apache-2.0
#include "plan/call_plan.h"

#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <utility>

#include "dsh/sandbox/roots.h"
#include "dsh/sandbox/trust.h"
#include "policy/call_policy.h"

namespace dsh::sandbox::plan {

namespace {

// The session log named by the request: opened when it exists, else created for the workspace.
// Either way it must pass the trust check against `roots`, on every read and append.
// `creating_for` resolves the workspace the new session records as its cwd.
std::optional<SessionLog> open_session(const std::string& path, std::vector<std::string> roots,
                                       const std::function<ResolvedWorkspace()>& creating_for) {
  if (path.empty()) return std::nullopt;
  std::string absolute = path;
  if (!absolute.starts_with('/')) absolute = working_directory() + "/" + absolute;
  const SessionLogOptions options{false, std::move(roots)};
  struct stat info {};
  if (::lstat(absolute.c_str(), &info) == 0) return SessionLog::open(absolute, options);
  return SessionLog::create(absolute, std::filesystem::path(absolute).stem().string(),
                            creating_for().path(), options);
}

// What the plan knows before its policy: the session, the workspace and the roots it distrusts.
struct Context {
  std::optional<SessionLog> session;
  std::optional<ResolvedWorkspace> workspace;
  std::vector<std::string> written;
  std::vector<std::string> recorded;
  std::vector<std::string> untrusted;
};

void find_workspace(const CallRequest& request, Context& context) {
  // Before the session says where it worked, its file is checked against the workspace as
  // spelled (and as resolved), /tmp, $TMPDIR and every root the per-user record lists: the
  // workspaces and extra writable roots earlier calls, with or without a session, let confined
  // runs write. Nothing beneath one decides this call (config, session, verdicts, runners), and
  // no symlink there is followed into this call's workspace or path rules.
  const std::vector<std::string> spelled = spelled_workspace_roots(request.workspace_root);
  const RecordedWorkspaces recorded = recorded_workspaces(spelled);
  context.recorded = recorded.roots;
  std::vector<std::string> before = spelled;
  before.insert(before.end(), recorded.roots.begin(), recorded.roots.end());
  if (!request.session_path.empty()) {
    context.session = open_session(request.session_path, untrusted_roots("", before), [&] {
      return workspace_root(request.workspace_root, {}, recorded);
    });
    context.written = context.session->written_workspaces();
  }
  const bool from_session =
      request.workspace_root.empty() && context.session && context.session->cwd();
  context.workspace = workspace_root(
      from_session ? *context.session->cwd() : request.workspace_root, context.written, recorded);
  std::vector<std::string> earlier = context.written;
  earlier.insert(earlier.end(), context.recorded.begin(), context.recorded.end());
  context.untrusted = untrusted_roots(*context.workspace, earlier);
  if (context.session) {
    // Now that every workspace is known, the session is held to all of them.
    context.session = SessionLog::open(context.session->path(), {false, context.untrusted});
  }
}

// The call's policy: the request, the config's defaults, the session's mode, the workspace, and
// the roots no rule path may be planted beneath (the record's are canonical already).
SandboxExecutionPolicy call_policy(const CallRequest& request, const Setup& setup,
                                   const Context& context) {
  policy::CallInputs inputs;
  inputs.request = request;
  inputs.defaults = setup.defaults;
  if (context.session) inputs.session = &*context.session;
  inputs.session_id = request.session_id;
  inputs.workspace = context.workspace;
  inputs.planted_roots = untrusted_roots("", context.written);
  inputs.planted_roots.insert(inputs.planted_roots.end(), context.recorded.begin(),
                              context.recorded.end());
  return policy::build_call_policy(inputs);
}

std::string call_workdir(const CallRequest& request, const SandboxExecutionPolicy& policy,
                         const std::optional<SessionLog>& session) {
  std::optional<std::string_view> session_cwd;
  if (session && session->cwd()) session_cwd = *session->cwd();
  return policy::resolve_workdir(
      policy.workspace_root, session_cwd,
      request.workdir.empty() ? std::nullopt : std::optional<std::string_view>(request.workdir));
}

}  // namespace

std::vector<std::string> CallPlan::earlier_roots() const {
  std::vector<std::string> roots = written;
  roots.insert(roots.end(), recorded.begin(), recorded.end());
  return roots;
}

CallPlan plan_call(const CallRequest& request, bool held_to_session) {
  Context context;
  try {
    find_workspace(request, context);
    Setup setup = load_setup(request.config_path, context.untrusted);
    std::optional<policy::SessionStart> start;
    if (held_to_session && context.session) {
      // Before the policy: a switch landing between the two is then judged as news.
      start = policy::session_start(*context.session, setup.defaults.mode);
    }
    SandboxExecutionPolicy policy = call_policy(request, setup, context);
    std::string workdir = call_workdir(request, policy, context.session);
    return CallPlan{request,
                    std::move(context.session),
                    std::move(*context.workspace),
                    std::move(context.written),
                    std::move(context.recorded),
                    std::move(context.untrusted),
                    std::move(setup),
                    std::move(policy),
                    std::move(workdir),
                    start};
  } catch (const SandboxError& error) {
    // Once the workspace is known; the refusal's mode is read-only until a policy exists, the
    // fail-safe default.
    if (context.workspace) {
      audit_refusal(context.session, request.argv, SandboxMode::kReadOnly,
                    context.workspace->path(), error);
    }
    throw;
  }
}

void admit(const CallPlan& plan, const SandboxExecutionPolicy& policy, std::string_view program) {
  const auto confined = to_confined_mode(policy.mode);
  if (!confined) return;
  require_trusted_self(
      chosen_writable_roots(policy.mode, plan.workspace.path(), policy.allow_write),
      plan.earlier_roots(), *confined, program);
  record_writable_workspace(plan.workspace, policy, plan.untrusted);
}

std::vector<std::string> state_untrusted_roots(const CallPlan& plan,
                                               const SandboxExecutionPolicy& policy) {
  std::vector<std::string> roots =
      chosen_writable_roots(policy.mode, plan.workspace.path(), policy.allow_write);
  const std::vector<std::string> earlier = plan.earlier_roots();
  roots.insert(roots.end(), earlier.begin(), earlier.end());
  return untrusted_roots("", roots);
}

LocalSandboxProvider plan_provider(const CallPlan& plan) {
  return make_provider(plan.setup.provider, plan.earlier_roots(), plan.untrusted);
}

void audit_refusal(const std::optional<SessionLog>& session, const std::vector<std::string>& argv,
                   SandboxMode mode, const std::string& workspace, const SandboxError& error) {
  if (!session) return;
  try {
    record_refusal(*session, {argv, mode, workspace, std::string(error.code()), error.what()});
  } catch (const std::exception&) {
    // The refusal itself is reported to the caller; a log that cannot take it changes nothing.
  }
}

}  // namespace dsh::sandbox::plan
