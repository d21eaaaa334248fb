// SPDX-License-Identifier: Apache-2.0
#include "cli/call.h"

#include <sys/stat.h>

#include <filesystem>
#include <utility>

#include "cli/habits.h"
#include "cli/output.h"
#include "consumer/tool_schema.h"
#include "dsh/sandbox/roots.h"
#include "dsh/sandbox/trust.h"
#include "policy/call_policy.h"

namespace dsh::sandbox::cli {

namespace {

// The session log named by --session: opened when it exists, else created for the workspace.
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

CallContext call_context(const RunInvocation& run) {
  // Before the session says where it worked, its file is checked against the workspace as
  // spelled (and as resolved), /tmp, $TMPDIR and every root the per-user record lists: the
  // workspaces and extra writable roots earlier calls, with or without a session, let confined
  // runs write. Nothing beneath one decides this call (config, session, verdicts, runners), and
  // no symlink there is followed into this call's workspace or path rules.
  const std::vector<std::string> spelled = spelled_workspace_roots(run.workspace);
  const RecordedWorkspaces recorded = recorded_workspaces(spelled);
  std::vector<std::string> before = spelled;
  before.insert(before.end(), recorded.roots.begin(), recorded.roots.end());
  std::optional<SessionLog> session;
  std::vector<std::string> written;
  if (!run.session_path.empty()) {
    session = open_session(run.session_path, untrusted_roots("", before),
                           [&] { return workspace_root(run.workspace, {}, recorded); });
    written = session->written_workspaces();
  }
  const bool from_session = run.workspace.empty() && session && session->cwd();
  ResolvedWorkspace workspace =
      workspace_root(from_session ? *session->cwd() : run.workspace, written, recorded);
  std::vector<std::string> earlier = written;
  earlier.insert(earlier.end(), recorded.roots.begin(), recorded.roots.end());
  std::vector<std::string> untrusted = untrusted_roots(workspace, earlier);
  if (session) {
    // Now that every workspace is known, the session is held to all of them.
    session = SessionLog::open(session->path(), {false, untrusted});
  }
  return {std::move(session), std::move(workspace), std::move(written), std::move(untrusted),
          recorded.roots};
}

// The roots earlier confined runs could write: the session's workspaces and the record's. A
// record that cannot be read adds none: the check then holds what it held before the record
// existed, this call's roots, /tmp and $TMPDIR.
std::vector<std::string> earlier_roots(const CallContext& call) {
  std::vector<std::string> roots = call.written;
  roots.insert(roots.end(), call.recorded.begin(), call.recorded.end());
  return roots;
}

// The call's policy: its flags, the config's defaults, the session's mode, the workspace, and
// the roots no rule path may be planted beneath (the record's are canonical already).
SandboxExecutionPolicy call_policy(const Options& options, const RunInvocation& run,
                                   const Setup& setup, const CallContext& call) {
  policy::CallInputs inputs;
  inputs.request.mode = run.policy.mode;
  inputs.request.network = run.policy.network;
  inputs.request.network_allow = run.policy.network_allow;
  inputs.request.network_given = run.policy.network_given;
  inputs.request.rules = {options.allow_write, options.deny_write, options.deny_read,
                          options.allow_cache};
  inputs.request.decisive_files = {options.config_path, options.session_path};
  inputs.defaults = setup.defaults;
  if (call.session) inputs.session = &*call.session;
  inputs.workspace = call.workspace;
  inputs.planted_roots = untrusted_roots("", call.written);
  inputs.planted_roots.insert(inputs.planted_roots.end(), call.recorded.begin(),
                              call.recorded.end());
  return policy::build_call_policy(inputs);
}

}  // namespace

int prepared_call(Options options, const std::function<void(Options&)>& before,
                  const std::function<int(Call&)>& body, bool held_to_session) {
  Call call;
  call.options = std::move(options);
  try {
    if (before) before(call.options);
    call.run = run_invocation(call.options).value();
    call.context = call_context(call.run);
    call.setup = load_setup(call.run.config_path, call.context->untrusted);
    if (held_to_session && call.context->session) {
      // Before the policy: a switch landing between the two is then judged as news.
      call.session_start = policy::session_start(*call.context->session, call.setup.defaults.mode);
    }
    call.policy = call_policy(call.options, call.run, call.setup, *call.context);
    call.audited_mode = call.policy.mode;
    return body(call);
  } catch (const SandboxError& error) {
    audit_refusal(call.context ? &*call.context : nullptr, call.run.argv, call.audited_mode, error);
    return fail(flag_named(error.what(), call.options), error.code());
  }
}

void admit(const CallContext& call, const SandboxExecutionPolicy& policy) {
  const auto confined = to_confined_mode(policy.mode);
  if (!confined) return;
  require_trusted_self(
      chosen_writable_roots(policy.mode, call.workspace.path(), policy.allow_write),
      earlier_roots(call), *confined);
  record_writable_workspace(call.workspace, policy, call.untrusted);
}

std::vector<std::string> state_untrusted_roots(const CallContext& call,
                                               const SandboxExecutionPolicy& policy) {
  std::vector<std::string> roots =
      chosen_writable_roots(policy.mode, call.workspace.path(), policy.allow_write);
  const std::vector<std::string> earlier = earlier_roots(call);
  roots.insert(roots.end(), earlier.begin(), earlier.end());
  return untrusted_roots("", roots);
}

LocalSandboxProvider call_provider(const Setup& setup, const CallContext& call) {
  return make_provider(setup.provider, earlier_roots(call), call.untrusted);
}

std::string call_workdir(const RunInvocation& run, const SandboxExecutionPolicy& policy,
                         const CallContext& call) {
  std::optional<std::string_view> session_cwd;
  if (call.session && call.session->cwd()) session_cwd = *call.session->cwd();
  return consumer::resolve_tool_workdir(
      policy.workspace_root, session_cwd,
      run.workdir.empty() ? std::nullopt : std::optional<std::string_view>(run.workdir));
}

void audit_refusal(const CallContext* call, const std::vector<std::string>& argv, SandboxMode mode,
                   const SandboxError& error) {
  if (call == nullptr || !call->session) return;
  try {
    record_refusal(*call->session,
                   {argv, mode, call->workspace.path(), std::string(error.code()), error.what()});
  } catch (const std::exception&) {
    // The refusal itself is reported on stderr; a log that cannot take it changes nothing.
  }
}

}  // namespace dsh::sandbox::cli
