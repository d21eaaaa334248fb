// SPDX-License-Identifier: Apache-2.0
#include "cli/commands.h"

#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/text.h"
#include "cli/habits.h"
#include "cli/invocation.h"
#include "cli/network_config.h"
#include "cli/path_rules.h"
#include "cli/run_options.h"
#include "cli/setup.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/local_provider.h"
#include "dsh/sandbox/roots.h"
#include "dsh/sandbox/trust.h"
#include "exec/exec.h"
#include "local/probe_cache.h"
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
  SandboxPolicy policy{*confined, workspace.path(), std::nullopt, options.network, workspace};
  policy.network_allow = options.network_allow;
  return policy;
}

nlohmann::json modes_json(const std::vector<ModeEnforcement>& modes) {
  nlohmann::json value = nlohmann::json::array();
  for (const ModeEnforcement& mode : modes) {
    value.push_back({{"mode", wire_name(mode.mode)},
                     {"enforcement", wire_name(mode.enforcement)},
                     {"strictEnforcement", wire_name(mode.strict_enforcement)},
                     {"ungoverned", mode.ungoverned}});
  }
  return value;
}

// One line per mode, then one per gap: what confine answers for that mode, in the strict reading
// a person is shown (its "partial" always followed by the gaps).
void print_modes(const std::vector<ModeEnforcement>& modes, std::string_view indent) {
  for (const ModeEnforcement& mode : modes) {
    fmt::print("{}{:<16} {}\n", indent, wire_name(mode.mode), wire_name(mode.strict_enforcement));
    for (const std::string& gap : mode.ungoverned) fmt::print("{}  ungoverned: {}\n", indent, gap);
  }
}

nlohmann::json report_json(const BackendReport& report) {
  nlohmann::json value = {{"backend", backend_name(report.backend)},
                          {"runner", report.runner},
                          {"probed", report.probed},
                          {"usable", report.usable}};
  if (report.usable) {
    value["enforcement"] = wire_name(report.enforcement);
    value["strictEnforcement"] = wire_name(report.strict_enforcement);
    value["modes"] = modes_json(report.modes);
  }
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
               wire_name(report.strict_enforcement), report.runner, abi);
    print_modes(report.modes, "  ");
    return;
  }
  fmt::print("{:<12} unusable           {}\n  cause: {}\n  fix:   {}\n",
             backend_name(report.backend), report.runner, report.cause, report.fix);
}

nlohmann::json component_json(const ComponentReport& report) {
  nlohmann::json value = {{"component", report.component},
                          {"feature", report.feature},
                          {"runner", report.runner},
                          {"probed", report.probed},
                          {"usable", report.usable}};
  if (!report.usable) {
    value["cause"] = report.cause;
    value["fix"] = report.fix;
  }
  return value;
}

// After the backends: the programs a feature starts on top of the selected backend.
void print_component(const ComponentReport& report) {
  if (report.usable) {
    fmt::print("{:<12} usable             {} ({})\n", report.component, report.runner,
               report.feature);
    return;
  }
  fmt::print("{:<12} unusable           {} ({})\n  cause: {}\n  fix:   {}\n", report.component,
             report.runner, report.feature, report.cause, report.fix);
}

}  // namespace

int fail(const std::string& message, std::string_view code) {
  if (json_errors()) fmt::print("{}\n", error_json(code, message));
  // The message is ours, but a runner's detail or a path in it may carry bytes a confined
  // command chose: one line, and nothing in it drives the terminal.
  std::string shown;
  for (const char c : text::inert_lines(message)) {
    shown += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  fmt::print(stderr, "dsh-sandbox: {}\n", shown);
  return kFailureExit;
}

int confine(const Options& options) {
  try {
    if (options.argv.empty()) {
      throw InvalidSandboxInputError("confine: give the command after -- as ARGV...");
    }
    const PolicyOptions requested = policy_options(options).value();
    const RecordedWorkspaces recorded =
        recorded_workspaces(spelled_workspace_roots(options.workspace));
    const ResolvedWorkspace workspace = workspace_root(options.workspace, {}, recorded);
    // Every root earlier calls recorded is as untrusted as this call's workspace.
    const std::vector<std::string> untrusted = untrusted_roots(workspace, recorded.roots);
    const Setup setup = load_setup(options.config_path, untrusted);
    SandboxPolicy policy = confined_policy(requested, setup.mode, workspace);
    add_path_rules(policy, options, setup.path_rules);
    require_unplanted_rule_paths(policy, untrusted_roots("", recorded.roots));
    add_config_network(policy, requested.network_given, setup.network_rules);
    require_trusted_self(
        chosen_writable_roots(to_sandbox_mode(policy.mode), workspace.path(), policy.allow_write),
        recorded.roots, policy.mode);
    // confine starts nothing, but its caller spawns the argv it prints: record it first.
    record_writable_workspace(workspace, policy, untrusted);
    LocalSandboxProvider provider = make_provider(setup.provider, recorded.roots, untrusted);
    // The directory the caller will spawn the argv in: bwrap enters it (--chdir) or refuses.
    // By default where run runs it: the policy root (run's --workdir rule without --workdir).
    const std::string cwd = options.cwd.empty() ? policy.workspace_root : options.cwd;
    // The tmpfs mounts sized as a `run` with the default memory bound sizes them (half of RAM,
    // tmpfs' own default too), so the argv printed is the one such a run spawns.
    const ConfinedArgv confined =
        provider.confine(ConfineRequest{options.argv, policy, cwd, options.status_channels,
                                        !options.no_evidence, exec::default_max_memory_bytes()});
    nlohmann::json printed = json::to_value(confined);
    printed["policy"] = effective_policy_view(policy);
    fmt::print("{}\n", json::dump(printed).value());
    if (options.verbose) {
      fmt::print(stderr,
                 "dsh-sandbox: mode {}: backend {} ({}), the first backend of this host's chain "
                 "that works here (bwrap, then Landlock; `dsh-sandbox probe` shows each and why "
                 "not)\n",
                 wire_name(policy.mode), confined.backend,
                 enforcement_text(confined.strict_enforcement, confined.ungoverned));
    }
    return 0;
  } catch (const SandboxError& error) {
    return fail(error.what(), error.code());
  }
}

int probe(const Options& options) {
  try {
    // A probe confines nothing and has no workspace: the config is held to /tmp and $TMPDIR.
    const Setup setup = load_setup(options.config_path, untrusted_roots(""));
    // A probe always probes (no cache); its modes carry the state every call hides.
    LocalSandboxHooks hooks;
    hooks.private_state = local::private_state_directories(false);
    LocalSandboxProvider provider(setup.provider, std::move(hooks));
    const ProbeSummary summary = provider.probe_all();
    if (options.json) {
      // The path rules a call from here would have by default (this directory as workspace).
      nlohmann::json policy_view = nullptr;
      try {
        SandboxPolicy view{to_confined_mode(setup.mode).value_or(ConfinedSandboxMode::kReadOnly),
                           working_directory()};
        add_path_rules(view, options, setup.path_rules);
        add_config_network(view, false, setup.network_rules);
        policy_view = effective_policy_view(view);
      } catch (const SandboxError&) {
        policy_view = nullptr;  // no usable working directory: nothing to show
      }
      nlohmann::json backends = nlohmann::json::array();
      for (const BackendReport& report : summary.backends) backends.push_back(report_json(report));
      const nlohmann::json selected =
          summary.selected.empty() ? nlohmann::json(nullptr) : nlohmann::json(summary.selected);
      nlohmann::json components = nlohmann::json::array();
      for (const ComponentReport& report : summary.components) {
        components.push_back(component_json(report));
      }
      nlohmann::json value = {{"platform", summary.platform},       {"backends", backends},
                              {"components", components},           {"selected", selected},
                              {"modes", modes_json(summary.modes)}, {"policy", policy_view}};
      if (!summary.runner_command.empty()) value["runnerCommand"] = summary.runner_command;
      fmt::print("{}\n", value.dump());
    } else {
      for (const BackendReport& report : summary.backends) print_report(report);
      for (const ComponentReport& report : summary.components) print_component(report);
      fmt::print("selected: {}\n",
                 summary.selected.empty() ? "none (SANDBOX_UNAVAILABLE)" : summary.selected);
      if (!summary.runner_command.empty()) {
        fmt::print("  runnerCommand: {} (used instead of the chain)\n",
                   fmt::join(summary.runner_command, " "));
      }
      print_modes(summary.modes, "  ");
    }
    return summary.selected.empty() ? kFailureExit : 0;
  } catch (const SandboxError& error) {
    return fail(error.what(), error.code());
  }
}

}  // namespace dsh::sandbox::cli
