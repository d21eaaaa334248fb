// SPDX-License-Identifier: Apache-2.0
#include "cli/commands.h"

#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/invocation.h"
#include "cli/setup.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/local_provider.h"
#include "dsh/sandbox/roots.h"
#include "dsh/sandbox/trust.h"
#include "seam/json_codec.h"

namespace dsh::sandbox::cli {

namespace {

SandboxPolicy confined_policy(const PolicyOptions& options, SandboxMode default_mode,
                              const ResolvedWorkspace& workspace) {
  const std::optional<ConfinedSandboxMode> confined =
      to_confined_mode(options.mode.value_or(default_mode));
  if (!confined) {
    throw InvalidSandboxInputError(
        "confine: danger-full-access runs the command unconfined; there is nothing to confine");
  }
  return {*confined,       workspace.path(), std::nullopt,
          options.network, workspace,        options.network_allow};
}

nlohmann::json report_json(const BackendReport& report) {
  nlohmann::json value = {{"backend", backend_name(report.backend)},
                          {"runner", report.runner},
                          {"probed", report.probed},
                          {"usable", report.usable}};
  if (report.usable) value["enforcement"] = wire_name(report.enforcement);
  if (report.backend == SandboxBackend::kLandlock && report.usable) {
    value["landlockAbi"] = report.landlock_abi;
  }
  if (!report.usable) {
    value["cause"] = report.cause;
    value["fix"] = report.fix;
  }
  return value;
}

void print_report(const BackendReport& report) {
  if (report.usable) {
    std::string abi;
    if (report.backend == SandboxBackend::kLandlock) {
      abi = fmt::format(" (Landlock ABI {})", report.landlock_abi);
    }
    fmt::print("{:<12} usable    {:<8} {}{}\n", backend_name(report.backend),
               wire_name(report.enforcement), report.runner, abi);
    return;
  }
  fmt::print("{:<12} unusable           {}\n  cause: {}\n  fix:   {}\n",
             backend_name(report.backend), report.runner, report.cause, report.fix);
}

}  // namespace

int fail(const std::string& message) {
  fmt::print(stderr, "dsh-sandbox: {}\n", message);
  return kFailureExit;
}

int confine(const Options& options) {
  try {
    const PolicyOptions requested = policy_options(options).value();
    const ResolvedWorkspace workspace = workspace_root(
        options.workspace, {}, recorded_workspaces(spelled_workspace_roots(options.workspace)));
    const std::vector<std::string> untrusted = untrusted_roots(workspace);
    const Setup setup = load_setup(options.config_path, untrusted);
    const SandboxPolicy policy = confined_policy(requested, setup.mode, workspace);
    require_trusted_self(untrusted, policy.mode);
    // confine starts nothing, but its caller spawns the argv it prints: record it first.
    record_writable_workspace(workspace, to_sandbox_mode(policy.mode), untrusted);
    LocalSandboxProvider provider = make_provider(setup.provider);
    // The directory the caller will spawn the argv in: bwrap enters it (--chdir) or refuses.
    const std::string cwd = options.cwd.empty() ? working_directory() : options.cwd;
    const ConfinedArgv confined =
        provider.confine(ConfineRequest{options.argv, policy, cwd, options.status_channels});
    fmt::print("{}\n", json::dump(json::to_value(confined)).value());
    return 0;
  } catch (const SandboxError& error) {
    return fail(error.what());
  }
}

int probe(const Options& options) {
  try {
    // A probe confines nothing and has no workspace: the config is held to /tmp and $TMPDIR.
    const Setup setup = load_setup(options.config_path, untrusted_roots(""));
    LocalSandboxProvider provider(setup.provider);  // a probe always probes: no cache
    const ProbeSummary summary = provider.probe_all();
    if (options.json) {
      nlohmann::json backends = nlohmann::json::array();
      for (const BackendReport& report : summary.backends) backends.push_back(report_json(report));
      const nlohmann::json selected =
          summary.selected.empty() ? nlohmann::json(nullptr) : nlohmann::json(summary.selected);
      fmt::print("{}\n",
                 nlohmann::json{
                     {"platform", summary.platform}, {"backends", backends}, {"selected", selected}}
                     .dump());
    } else {
      for (const BackendReport& report : summary.backends) print_report(report);
      fmt::print("selected: {}\n",
                 summary.selected.empty() ? "none (SANDBOX_UNAVAILABLE)" : summary.selected);
    }
    return summary.selected.empty() ? kFailureExit : 0;
  } catch (const SandboxError& error) {
    return fail(error.what());
  }
}

}  // namespace dsh::sandbox::cli
