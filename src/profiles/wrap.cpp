// SPDX-License-Identifier: Apache-2.0
// The composer: a selected backend's layers, each from its runner's home, into one argv plus the
// facts a consumer classifies with. `enforcement` is the contract's verdict per backend; the
// strict reading is derived from what is not governed, so its "partial" always comes with its
// reasons.
#include <algorithm>
#include <array>
#include <stdexcept>

#include <fmt/format.h>

#include "profiles/profiles.h"

namespace dsh::sandbox::profiles {

namespace {

using Argv = std::vector<std::string>;

// The reference's verdict: bwrap (with or without landlock-run inside, whose read-only binds
// refuse every write outside the workspace) and Seatbelt are full when usable, Landlock is what
// the launcher's --probe said (partial below the ABI it fully knows), windows-acl is partial.
SandboxEnforcement contract_enforcement(const Selection& selection) {
  switch (selection.backend) {
    case SandboxBackend::kBwrap:
    case SandboxBackend::kSeatbelt:
      return SandboxEnforcement::kFull;
    case SandboxBackend::kLandlock:
      return selection.landlock.value().enforcement;
    case SandboxBackend::kWindowsAcl:
      return SandboxEnforcement::kPartial;
  }
  throw std::logic_error("unreachable variant in SandboxBackend");
}

ConfinedArgv facts_for(const Selection& selection, const SandboxPolicy& policy,
                       const RunNeeds& needs, const FsPlan& plan) {
  ConfinedArgv facts;
  facts.network = policy.network;
  switch (selection.backend) {
    case SandboxBackend::kBwrap:
      // One dialect, also with landlock-run inside: every write the mode refuses meets bwrap's
      // read-only bind first (the VFS checks the mount, EROFS, before any LSM hook such as
      // Landlock's runs), so "read-only file system" is what a refused write prints. Landlock's
      // EACCES inside bwrap is left out: "permission denied" is also every program's own EACCES
      // (a file the user may not read), and a signature must not claim those. The launcher's
      // evidence records stay the classifier where they are read (docs/evidence-and-network.md).
      facts.denial_signatures = {std::string(kBwrapDenial)};
      // Outermost first: bwrap alone starts behind its exec shim.
      if (!selection.landlock) facts.runner_failure_rules.push_back(seccomp_exec_failure_rule());
      facts.runner_failure_rules.push_back(bwrap_failure_rule());
      if (selection.landlock) facts.runner_failure_rules.push_back(landlock_failure_rule());
      append_kernel_refusals(facts.refused);
      break;
    case SandboxBackend::kLandlock:
      facts.denial_signatures = {std::string(kLandlockDenial)};
      facts.runner_failure_rules = {landlock_failure_rule()};
      facts.ungoverned =
          landlock_ungoverned(policy, selection.landlock.value(), plan,
                              landlock_contains_metadata(needs, policy, LandlockPlace::kHost));
      append_kernel_refusals(facts.refused);
      append_plan_refusals(plan, facts.refused);
      append_host_device_refusals(facts.refused);
      break;
    case SandboxBackend::kSeatbelt:
      facts.denial_signatures = {std::string(kSeatbeltDenial)};
      facts.runner_failure_rules = {seatbelt_failure_rule()};
      break;
    case SandboxBackend::kWindowsAcl:
      facts.denial_signatures = windows_acl_denial_signatures();
      facts.runner_failure_rules = {windows_acl_failure_rule()};
      facts.ungoverned = windows_acl_ungoverned();
      break;
  }
  if (policy.network == NetworkPolicy::kAllowList) {
    facts.runner_failure_rules.insert(facts.runner_failure_rules.begin(), netproxy_failure_rule());
  }
  facts.layers = selection_layers(selection);
  facts.backend = backend_label(facts.layers);
  facts.enforcement = contract_enforcement(selection);
  facts.strict_enforcement = strict_reading(facts.enforcement, facts.ungoverned);
  return facts;
}

// The launcher's grants and hardening, then the paths its supervisor names refusals at.
Argv landlock_layer_args(const SandboxPolicy& policy, const LandlockFeatures& features,
                         LandlockPlace place, const RunNeeds& needs, const FsPlan& plan) {
  Argv args = landlock_args(policy, features, place, plan);
  const Argv supervisor = landlock_supervisor_args(needs, policy, place, plan);
  args.insert(args.end(), supervisor.begin(), supervisor.end());
  return args;
}

// Appends `runner run_args... args... --` to `out`.
void append_runner(Argv& out, const std::string& runner, const Argv& run_args, const Argv& args) {
  out.push_back(runner);
  out.insert(out.end(), run_args.begin(), run_args.end());
  out.insert(out.end(), args.begin(), args.end());
  out.emplace_back("--");
}

// The bwrap chain: the allow-list's proxy outside (when the policy has one), bwrap behind the
// exec shim when it runs alone, the proxy's bridge and the launcher inside.
void append_bwrap_chain(ConfinedArgv& out, const Selection& selection, const Runners& runners,
                        const SandboxPolicy& policy, const RunNeeds& needs, const FsPlan& plan) {
  // The allow-list: the proxy heads the chain outside; inside bwrap's network namespace the
  // bridge listens on loopback before the launcher starts (profiles/netproxy.h).
  const bool allow_list = policy.network == NetworkPolicy::kAllowList;
  if (allow_list) {
    append_runner(out.argv, runners.netproxy, netproxy_run_args(needs), netproxy_args(policy));
    if (needs.status_channels) out.status_channels.push_back(netproxy_status_channel());
  }
  Argv args = bwrap_args(policy, plan, needs.tmpfs_bytes);
  if (allow_list) {
    const Argv env = netproxy_env_args();
    args.insert(args.end(), env.begin(), env.end());
    if (bwrap_hides(runners.netproxy, policy)) {
      args.insert(args.end(), {"--ro-bind", runners.netproxy, runners.netproxy});
    }
  }
  if (!selection.landlock) {
    // bwrap alone gets the launcher's always-on filter through descriptor 5, which the exec
    // shim in front of it opens: the argv needs nothing from its spawner. In the layered
    // default the inner launcher installs that same filter itself, so bwrap loads none.
    const Argv seccomp = bwrap_seccomp_args();
    args.insert(args.end(), seccomp.begin(), seccomp.end());
    append_runner(out.argv, runners.seccomp_exec, {}, seccomp_exec_args());
  }
  // Defense in depth: inside bwrap's mount view, landlock-run adds IPC scoping, seccomp
  // hardening and its own capability drop. The read-only root shows it at its own path
  // unless one of the profile's own mounts covers it (a launcher under /tmp vanishes under
  // workspace-write's tmpfs): only then is it bound back, last, read-only. Each bind is a
  // mount in every run, so it is not added where it changes nothing.
  if (selection.landlock && bwrap_hides(runners.landlock_run, policy)) {
    args.insert(args.end(), {"--ro-bind", runners.landlock_run, runners.landlock_run});
  }
  append_runner(out.argv, runners.bwrap, bwrap_run_args(needs), args);
  if (needs.status_channels) out.status_channels.push_back(bwrap_status_channel());
  if (allow_list) append_runner(out.argv, runners.netproxy, netproxy_bridge_args(), {});
  if (selection.landlock) {
    append_runner(
        out.argv, runners.landlock_run, landlock_run_args(needs),
        landlock_layer_args(policy, *selection.landlock, LandlockPlace::kInsideBwrap, needs, plan));
    if (needs.status_channels) out.status_channels.push_back(landlock_status_channel());
  }
}

// Appends the runners, their flags, profiles and separators to `out` (confine()'s hot path: no
// copies), the descriptors they read to `fds` and the status channels they write to `channels`.
void append_prefix(ConfinedArgv& out, const Selection& selection, const Runners& runners,
                   const SandboxPolicy& policy, std::span<const std::string> writable_roots,
                   std::string_view temp_dir, const RunNeeds& needs, const FsPlan& plan) {
  switch (selection.backend) {
    case SandboxBackend::kBwrap:
      append_bwrap_chain(out, selection, runners, policy, needs, plan);
      return;
    case SandboxBackend::kLandlock:
      append_runner(out.argv, runners.landlock_run, landlock_run_args(needs),
                    landlock_layer_args(policy, selection.landlock.value(), LandlockPlace::kHost,
                                        needs, plan));
      if (needs.status_channels) out.status_channels.push_back(landlock_status_channel());
      return;
    case SandboxBackend::kSeatbelt:
      append_runner(out.argv, runners.sandbox_exec, {},
                    {"-p", seatbelt_profile(policy, writable_roots, plan)});
      return;
    case SandboxBackend::kWindowsAcl:
      out.argv.insert(out.argv.end(), runners.windows_acl.begin(), runners.windows_acl.end());
      {
        const Argv args = windows_acl_args(policy, temp_dir);
        out.argv.insert(out.argv.end(), args.begin(), args.end());
      }
      out.argv.emplace_back("--");
      return;
  }
  throw std::logic_error("unreachable variant in SandboxBackend");
}

}  // namespace

std::vector<RunnerLayer> selection_layers(const Selection& selection) {
  switch (selection.backend) {
    case SandboxBackend::kBwrap:
      if (selection.landlock) return {RunnerLayer::kBwrap, RunnerLayer::kLandlockRun};
      return {RunnerLayer::kSeccompExec, RunnerLayer::kBwrap};
    case SandboxBackend::kLandlock:
      return {RunnerLayer::kLandlockRun};
    case SandboxBackend::kSeatbelt:
      return {RunnerLayer::kSeatbelt};
    case SandboxBackend::kWindowsAcl:
      return {RunnerLayer::kWindowsAcl};
  }
  throw std::logic_error("unreachable variant in SandboxBackend");
}

std::string selection_name(const Selection& selection) {
  return backend_label(selection_layers(selection));
}

bool host_writable(std::string_view path, SandboxBackend backend, const SandboxPolicy& policy) {
  if (backend == SandboxBackend::kLandlock) return landlock_host_writable(path, policy);
  // bwrap's view, and Seatbelt's and the ACL runner's grants: the workspace only.
  return bwrap_host_writable(path, policy);
}

std::optional<std::string> unsupported_reason(const Selection& selection, const Runners& runners,
                                              const SandboxPolicy& policy) {
  // Every runner of the chain, the layered launcher included: a layer the command could replace
  // is refused, never silently dropped (the run would be weaker than its facts say).
  std::vector<const std::string*> chain;
  if (selection.backend == SandboxBackend::kBwrap) chain.push_back(&runners.bwrap);
  if (selection.backend == SandboxBackend::kBwrap && !selection.landlock) {
    chain.push_back(&runners.seccomp_exec);
  }
  if (selection.landlock && (selection.backend == SandboxBackend::kBwrap ||
                             selection.backend == SandboxBackend::kLandlock)) {
    chain.push_back(&runners.landlock_run);
  }
  if (policy.network == NetworkPolicy::kAllowList) {
    if (auto reason = netproxy_unsupported_reason(selection.backend == SandboxBackend::kBwrap)) {
      return reason;
    }
    chain.push_back(&runners.netproxy);
  }
  for (const std::string* runner : chain) {
    if (host_writable(*runner, selection.backend, policy)) {
      return fmt::format(
          "the runner {} lies in a directory this policy makes writable, so a confined command "
          "could replace it and later runs would start the impostor unconfined; install "
          "dsh-sandbox outside /tmp and the workspace",
          *runner);
    }
  }
  if (policy.network != NetworkPolicy::kDeny) return std::nullopt;
  if (selection.backend == SandboxBackend::kWindowsAcl) {
    return "the windows-acl runner cannot deny network access";
  }
  if (selection.backend == SandboxBackend::kLandlock && !selection.landlock.value().deny_network) {
    return "landlock-run cannot deny network access on this host (seccomp is unavailable)";
  }
  return std::nullopt;
}

ConfinedArgv wrap(const Selection& selection, const Runners& runners,
                  std::span<const std::string> argv, const SandboxPolicy& policy,
                  std::span<const std::string> writable_roots, std::string_view temp_dir,
                  const RunNeeds& needs, const FsPlan& plan) {
  ConfinedArgv confined = facts_for(selection, policy, needs, plan);
  confined.argv.reserve(44 + argv.size());
  append_prefix(confined, selection, runners, policy, writable_roots, temp_dir, needs, plan);
  confined.argv.insert(confined.argv.end(), argv.begin(), argv.end());
  return confined;
}

RunnerReport read_status_reports(const ConfinedArgv& confined, std::span<const std::string> status,
                                 std::optional<int> exit_code, std::string_view stderr_tail) {
  if (!exit_code || *exit_code == 0) return {};
  const std::vector<StatusChannel>& channels = confined.status_channels;
  const std::size_t count = std::min(channels.size(), status.size());
  // The proxy heads the chain: its own failure line means nothing inside it ran.
  for (std::size_t i = 0; i < count; ++i) {
    if (channels[i].format != StatusFormat::kProxyLines) continue;
    if (RunnerReport report = netproxy_status_report(status[i]); report != RunnerReport{}) {
      return report;
    }
  }
  // The launcher first: it is always the innermost runner, so its line is the nearest fact.
  for (std::size_t i = 0; i < count; ++i) {
    if (channels[i].format != StatusFormat::kLauncherLines) continue;
    if (RunnerReport report = landlock_status_report(status[i]); report != RunnerReport{}) {
      return report;
    }
  }
  // bwrap execs the command itself unless the launcher runs inside it.
  const bool launcher_inside =
      std::find(confined.layers.begin(), confined.layers.end(), RunnerLayer::kLandlockRun) !=
          confined.layers.end() ||
      std::any_of(channels.begin(), channels.end(),
                  [](const StatusChannel& c) { return c.layer == RunnerLayer::kLandlockRun; });
  const bool behind_shim = std::find(confined.layers.begin(), confined.layers.end(),
                                     RunnerLayer::kSeccompExec) != confined.layers.end();
  for (std::size_t i = 0; i < count; ++i) {
    if (channels[i].format != StatusFormat::kBwrapJson) continue;
    // The exec shim in front of bwrap alone has no channel: when it failed, bwrap never started
    // (its channel holds no exit) and the shim's one line is on stderr, with exit 125.
    if (behind_shim && status[i].find("\"exit-code\"") == std::string::npos) {
      const std::array<RunnerFailureRule, 1> shim = {seccomp_exec_failure_rule()};
      if (auto match = classify_runner_failure(exit_code, stderr_tail, shim)) {
        return {std::move(match->detail), {}, {}};
      }
    }
    if (RunnerReport report = bwrap_status_report(status[i], stderr_tail, !launcher_inside);
        report != RunnerReport{}) {
      return report;
    }
  }
  return {};
}

}  // namespace dsh::sandbox::profiles
