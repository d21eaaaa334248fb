// SPDX-License-Identifier: Apache-2.0
// `dsh-sandbox probe`: each backend of this host's chain, usable or not, its enforcement, why
// and how to fix; with --json one object, which also shows the policy a call from here would
// have by default. Always probes (no cached verdict); exit 0, or 125 when nothing is usable.
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/output.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/local_provider.h"
#include "dsh/sandbox/roots.h"
#include "dsh/sandbox/trust.h"
#include "local/probe_cache.h"
#include "plan/config_files.h"
#include "policy/call_policy.h"

namespace dsh::sandbox::cli {

namespace {

// The policy a call from here would have by default (this directory as its workspace, the
// config's mode when it confines, else read-only); nullopt without a usable working directory.
std::optional<SandboxPolicy> default_policy(const Options& options, const plan::Setup& setup) {
  try {
    policy::CallInputs inputs;
    inputs.request.mode =
        to_confined_mode(setup.defaults.mode) ? setup.defaults.mode : SandboxMode::kReadOnly;
    inputs.request.config_path = options.config_path;
    inputs.defaults = setup.defaults;
    inputs.workspace_root = working_directory();
    return to_sandbox_policy(policy::build_call_policy(inputs));
  } catch (const SandboxError&) {
    return std::nullopt;  // no usable working directory: nothing to show
  }
}

// Whether what was selected confines a call from here under the default policy: the provider
// (holding the runners to what a call's would: the per-user record's roots) is asked exactly as
// a call asks it, so every reason such a call would be refused for (an operator's runner that
// cannot deny the network, a launcher that lacks a filter) reaches the probe, not a list of
// them. The refusal's reason names its fix.
std::optional<std::string> default_policy_refusal(LocalSandboxProvider& provider,
                                                  const std::optional<SandboxPolicy>& policy) {
  if (!policy) return std::nullopt;
  try {
    const std::vector<std::string> argv{"true"};
    static_cast<void>(provider.confine(ConfineRequest{argv, *policy, {}, false}));
    return std::nullopt;
  } catch (const SandboxUnavailableError& error) {
    return error.refusal().value_or(error.what());
  } catch (const InvalidSandboxInputError&) {
    return std::nullopt;  // a fault of this directory as a workspace, not of the backend
  }
}

}  // namespace

int probe(const Options& options) {
  try {
    // A probe confines nothing and has no workspace: the config is held to /tmp and $TMPDIR.
    const plan::Setup setup = plan::load_setup(options.config_path, untrusted_roots(""));
    // A probe always probes (no cache); its modes carry the state every call hides.
    LocalSandboxHooks hooks;
    hooks.private_state = local::private_state_directories(false);
    hooks.earlier_writable_roots =
        plan::recorded_workspaces(plan::spelled_workspace_roots("")).roots;
    LocalSandboxProvider provider(setup.provider, std::move(hooks));
    ProbeSummary summary = provider.probe_all();
    const std::optional<SandboxPolicy> policy = default_policy(options, setup);
    ProbeVerdict verdict{std::move(summary), {}};
    if (!verdict.summary.selected.empty()) {
      verdict.default_refusal = default_policy_refusal(provider, policy);
    }
    print_probe(verdict, options.json,
                options.json && policy ? effective_policy_view(*policy) : nlohmann::json());
    return verdict.summary.selected.empty() || verdict.default_refusal ? kFailureExit : 0;
  } catch (const SandboxError& error) {
    return fail(error.what(), error.code());
  }
}

}  // namespace dsh::sandbox::cli
