// SPDX-License-Identifier: Apache-2.0
// Seatbelt SBPL. Seatbelt matches resolved paths (/tmp is /private/tmp), so the
// writable roots arrive canonicalized; the base is allow-default with file writes denied.
#include <fmt/format.h>

#include "profiles/seatbelt.h"

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

}  // namespace dsh::sandbox::profiles
