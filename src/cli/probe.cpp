// SPDX-License-Identifier: Apache-2.0
// `dsh-sandbox probe`: each backend of this host's chain, usable or not, its enforcement, why
// and how to fix; with --json one object, which also shows the policy a call from here would
// have by default. Always probes (no cached verdict); exit 0, or 125 when nothing is usable.
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/output.h"
#include "cli/setup.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/local_provider.h"
#include "dsh/sandbox/roots.h"
#include "dsh/sandbox/trust.h"
#include "local/probe_cache.h"
#include "policy/call_policy.h"

namespace dsh::sandbox::cli {

namespace {

// The path rules and network a call from here would have by default (this directory as its
// workspace, the config's mode when it confines, else read-only); null without a usable
// working directory.
nlohmann::json default_policy_view(const Options& options, const Setup& setup) {
  try {
    policy::CallInputs inputs;
    inputs.request.mode =
        to_confined_mode(setup.defaults.mode) ? setup.defaults.mode : SandboxMode::kReadOnly;
    inputs.request.decisive_files = {options.config_path};
    inputs.defaults = setup.defaults;
    inputs.workspace_root = working_directory();
    const SandboxExecutionPolicy policy = policy::build_call_policy(inputs);
    return effective_policy_view(*to_sandbox_policy(policy));
  } catch (const SandboxError&) {
    return nullptr;  // no usable working directory: nothing to show
  }
}

}  // namespace

int probe(const Options& options) {
  try {
    // A probe confines nothing and has no workspace: the config is held to /tmp and $TMPDIR.
    const Setup setup = load_setup(options.config_path, untrusted_roots(""));
    // A probe always probes (no cache); its modes carry the state every call hides.
    LocalSandboxHooks hooks;
    hooks.private_state = local::private_state_directories(false);
    LocalSandboxProvider provider(setup.provider, std::move(hooks));
    const ProbeSummary summary = provider.probe_all();
    print_probe(summary, options.json,
                options.json ? default_policy_view(options, setup) : nlohmann::json());
    return summary.selected.empty() ? kFailureExit : 0;
  } catch (const SandboxError& error) {
    return fail(error.what(), error.code());
  }
}

}  // namespace dsh::sandbox::cli
