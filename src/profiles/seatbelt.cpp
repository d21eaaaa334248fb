// SPDX-License-Identifier: Apache-2.0
// Seatbelt SBPL. Seatbelt matches resolved paths (/tmp is /private/tmp), so the
// writable roots arrive canonicalized; the base is allow-default with file writes denied.
#include <fmt/format.h>

#include "profiles/seatbelt.h"

#include "profiles/bwrap.h"
#include "profiles/runner_spec.h"

namespace dsh::sandbox::profiles {

std::string sbpl_string(std::string_view text) {
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '\\' || c == '"') quoted += '\\';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

std::string seatbelt_profile(const SandboxPolicy& policy,
                             std::span<const std::string> writable_roots, const FsPlan& plan) {
  std::string profile =
      "(version 1) (allow default) (deny file-write*) (allow file-write* (literal \"/dev/null\"))";
  const bool workspace_write = policy.mode == ConfinedSandboxMode::kWorkspaceWrite;
  if (workspace_write && (!writable_roots.empty() || !plan.writable.empty())) {
    profile += " (allow file-write*";
    for (const std::string& root : writable_roots) {
      profile += fmt::format(" (subpath {})", sbpl_string(root));
    }
    for (const std::string& root : plan.writable) {
      profile += fmt::format(" (subpath {})", sbpl_string(root));
    }
    profile += ")";
  }
  if (workspace_write &&
      (!plan.pinned.empty() || !plan.read_only.empty() || !plan.startup_guarded.empty())) {
    profile += " (deny file-write*";
    for (const std::string& dir : plan.pinned) {
      profile += fmt::format(" (literal {})", sbpl_string(dir));
    }
    for (const PlannedPath& path : plan.read_only) {
      profile += fmt::format(" (subpath {})", sbpl_string(path.path));
    }
    // SBPL matches names, existing or not: a startup file that is missing stays uncreatable.
    for (const std::string& path : plan.startup_guarded) {
      profile += fmt::format(" (subpath {})", sbpl_string(path));
    }
    profile += ")";
  }
  if (!plan.unreadable.empty()) {
    profile += " (deny file-read*";
    for (const PlannedPath& path : plan.unreadable) {
      profile += fmt::format(" (subpath {})", sbpl_string(path.path));
    }
    profile += ")";
  }
  if (policy.network == NetworkPolicy::kDeny) profile += " (deny network*)";
  return profile;
}

RunnerFailureRule seatbelt_failure_rule() {
  return {std::nullopt, {"sandbox-exec: "}, std::nullopt};
}

const RunnerSpec& seatbelt_spec() {
  using Argv = std::vector<std::string>;
  static const RunnerSpec spec{
      .layer = RunnerLayer::kSeatbelt,
      .role = "sandbox-exec runner",
      .backend = SandboxBackend::kSeatbelt,
      .confines = true,
      .source = RunnerSource::kHost,
      .installed_name = {},
      .located_by = "/usr/bin/sandbox-exec, or the sandbox_exec_path hook",
      .probe = RunnerProbe::kBackend,
      .program = [](const Runners& runners) { return Argv{runners.sandbox_exec}; },
      .args =
          [](const LayerContext& context, RunnerPlace) {
            return Argv{"-p",
                        seatbelt_profile(context.policy, context.writable_roots, context.plan)};
          },
      .status_channel = no_status_channel,
      .failure_rule = [](const Runners&) { return seatbelt_failure_rule(); },
      .limits = no_limits,
      .refusal = no_refusal,
      .denial_signatures = [] { return Argv{std::string(kSeatbeltDenial)}; },
      .enforcement = [](const LayerContext&) { return SandboxEnforcement::kFull; },
      // Its grants: the workspace and the extra writable roots, as bwrap's view.
      .host_writable = bwrap_host_writable,
  };
  return spec;
}

}  // namespace dsh::sandbox::profiles
