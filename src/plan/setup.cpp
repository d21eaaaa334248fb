// SPDX-License-Identifier: Apache-2.0
#include "plan/setup.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/text.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/roots.h"
#include "dsh/sandbox/trust.h"
#include "local/config.h"
#include "local/probe_cache.h"
#include "local/runners.h"
#include "local/workspace_record.h"
#include "policy/effective_policy.h"
#include "seam/call_scope.h"
#include "seam/json_codec.h"
#include "seam/trusted_file.h"

namespace dsh::sandbox::plan {

Result<Setup> parse_setup(std::string_view text) {
  return json::parse(text, "config").and_then(parse_setup_document);
}

Result<Setup> parse_setup_document(const nlohmann::json& document) {
  return local::config_from_document(document).and_then(
      [&document](LocalSandboxConfig provider) -> Result<Setup> {
        Setup setup{std::move(provider)};
        auto rules = local::path_rules_from_document(document);
        if (!rules) return rules.error();
        setup.defaults.rules = {
            std::move(rules.value().allow_write), std::move(rules.value().deny_write),
            std::move(rules.value().deny_read), std::move(rules.value().allow_cache)};
        auto network = local::network_rules_from_document(document);
        if (!network) return network.error();
        setup.defaults.network_allow = std::move(network.value().allow);
        setup.defaults.network_deny = std::move(network.value().deny);
        setup.defaults.unix_sockets = std::move(network.value().unix_sockets);
        if (!document.contains("mode")) return setup;
        const nlohmann::json& mode = document["mode"];
        if (!mode.is_string()) return InvalidInput{"mode must be a string", ErrorCode::kMalformed};
        return parse_sandbox_mode(mode.get<std::string>()).transform([&setup](SandboxMode parsed) {
          setup.defaults.mode = parsed;
          return std::move(setup);
        });
      });
}

RecordedWorkspaces recorded_workspaces(std::span<const std::string> spelled_roots) {
  // The anchor first: a cache directory ($XDG_RUNTIME_DIR) beneath a root it lists is distrusted,
  // and its record (which a run there could have planted to forget that root) is not read.
  auto anchor = local::read_anchor_record(untrusted_roots("", spelled_roots));
  std::vector<std::string> known(spelled_roots.begin(), spelled_roots.end());
  std::vector<std::string> anchored = anchor ? anchor.value() : std::vector<std::string>{};
  known.insert(known.end(), anchored.begin(), anchored.end());
  auto recorded = local::read_workspace_record(untrusted_roots("", known));
  if (!recorded) return {std::move(anchored), recorded.error().message};
  std::vector<std::string> roots = local::merge_workspace_record(anchored, recorded.value());
  if (!anchor) return {std::move(roots), anchor.error().message};
  return {std::move(roots), {}};
}

namespace {

// The record's part of a confined policy.
void record_confined_workspace(const ResolvedWorkspace& workspace, const SandboxPolicy& policy,
                               std::span<const std::string> untrusted_roots) {
  auto added = local::record_writable_roots(workspace.path(), policy, untrusted_roots);
  if (!added) throw InvalidSandboxInputError(added.error().message);
}

}  // namespace

void record_writable_workspace(const ResolvedWorkspace& workspace,
                               const SandboxExecutionPolicy& policy,
                               std::span<const std::string> untrusted_roots) {
  if (const auto confined = to_sandbox_policy(policy)) {
    record_confined_workspace(workspace, *confined, untrusted_roots);
  }
}

// An absolute existing directory, resolved once, through trusted symlinks only.
ResolvedWorkspace workspace_root(const std::string& given,
                                 std::span<const std::string> written_workspaces,
                                 const RecordedWorkspaces& recorded) {
  const std::string spelled = given.empty() ? working_directory() : given;
  if (spelled.empty() || spelled.front() != '/') {
    throw InvalidSandboxInputError(fmt::format(
        "--workspace \"{}\" is not an absolute path; pass an absolute directory", spelled));
  }
  struct stat info {};
  if (::stat(spelled.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    throw InvalidSandboxInputError(fmt::format(
        "--workspace \"{}\" is not an existing directory; create it or pass another", spelled));
  }
  std::vector<std::string> roots = untrusted_roots("", written_workspaces);
  // The record holds canonical paths only (its reader refuses any other): resolving each again
  // would cost every call a realpath per recorded root.
  roots.insert(roots.end(), recorded.roots.begin(), recorded.roots.end());
  auto resolved = ResolvedWorkspace::resolve_trusted(spelled, roots);
  if (!resolved) {
    throw InvalidSandboxInputError(fmt::format(
        "--workspace \"{}\" cannot be used: {}; an earlier confined run could have planted that "
        "symlink to redirect this run's writes. Remove the symlink, or pass the directory you "
        "mean by its real path",
        spelled, resolved.error().message));
  }
  if (!recorded.problem.empty() && resolved.value().path() != lexically_normalize(spelled)) {
    throw InvalidSandboxInputError(fmt::format(
        "--workspace \"{}\" is reached through a symlink, and which directories earlier "
        "confined runs could write is unknown, so a planted symlink cannot be told from yours: "
        "{}",
        spelled, recorded.problem));
  }
  return std::move(resolved).value();
}

std::vector<std::string> spelled_workspace_roots(const std::string& given) {
  const std::string spelled = given.empty() ? working_directory() : given;
  if (!spelled.starts_with('/')) return {};
  return {lexically_normalize(spelled), canonical_path(spelled)};
}

std::vector<std::string> chosen_writable_roots(SandboxMode mode, const std::string& workspace,
                                               std::span<const std::string> allow_write) {
  if (mode != SandboxMode::kWorkspaceWrite) return {};
  std::vector<std::string> roots = {canonical_path(workspace)};
  for (const std::string& root : allow_write) roots.push_back(canonical_path(root));
  return roots;
}

void require_trusted_self(std::span<const std::string> chosen_roots,
                          std::span<const std::string> earlier_roots, ConfinedSandboxMode mode,
                          std::string_view program) {
  const std::string exe = self_executable();
  for (const std::string& root : chosen_roots) {
    if (exe.empty() || !is_beneath(exe, root)) continue;
    throw InvalidSandboxInputError(fmt::format(
        "the writable root {} of this {} call (its workspace or an --allow-write root) contains "
        "the running {} {}: a confined run could replace it and later calls would run the "
        "impostor. Pass a --workspace (and --allow-write roots) that do not contain {}, or use "
        "--mode read-only, which makes no workspace writable",
        text::quoted(root), wire_name(mode), program, text::quoted(exe), text::quoted(exe)));
  }
  std::vector<std::string> extra(chosen_roots.begin(), chosen_roots.end());
  extra.insert(extra.end(), earlier_roots.begin(), earlier_roots.end());
  auto checked =
      check_trusted_path(exe.empty() ? "/proc/self/exe" : exe, untrusted_roots("", extra));
  if (checked) return;
  throw SandboxUnavailableError::refused(
      mode, fmt::format("the running {} {} cannot be trusted: {}; a confined run could replace "
                        "it and later calls would run the impostor: install it where no confined "
                        "run can write ({})",
                        program, exe, checked.error().message, trusted_path_fix()));
}

LocalSandboxProvider make_provider(const LocalSandboxConfig& config,
                                   std::optional<std::vector<std::string>> earlier_roots,
                                   std::span<const std::string> cache_untrusted) {
  // Located once: the verdict store's key names the very runners the provider will start.
  LocalSandboxHooks hooks;
  const profiles::Runners runners = local::locate_runners(config, hooks);
  hooks.launcher_path = runners.landlock_run;
  LocalSandboxConfig located = config;
  located.bwrap_path = runners.bwrap;
  hooks.earlier_writable_roots = std::move(earlier_roots);
  hooks.private_state = local::private_state_directories();
  return LocalSandboxProvider(
      std::move(located), std::move(hooks),
      local::make_user_verdict_store(config, runners,
                                     {cache_untrusted.begin(), cache_untrusted.end()}));
}

}  // namespace dsh::sandbox::plan
