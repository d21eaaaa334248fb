// SPDX-License-Identifier: Apache-2.0
// The composer: a selection's layers, built first (compose_layers), then each read through its
// runner's spec (runner_spec.h) into one argv plus the facts a consumer classifies with.
// `enforcement` is the contract's verdict of the outermost confinement layer; the strict reading
// is derived from what is not governed, so its "partial" always comes with its reasons.
#include <algorithm>
#include <array>
#include <stdexcept>

#include <fmt/format.h>

#include "profiles/landlock_run.h"
#include "profiles/profiles.h"

namespace dsh::sandbox::profiles {

namespace {

using Argv = std::vector<std::string>;

// The first confinement layer: its dialect and verdict are the wrap's. Inside bwrap every write
// the mode refuses meets bwrap's read-only bind first, so the inner launcher's EACCES dialect is
// left out ("permission denied" is also every program's own EACCES, which a signature must not
// claim); the launcher's evidence records stay the classifier where they are read.
const RunnerSpec& outermost_confinement(std::span<const ComposedLayer> layers) {
  for (const ComposedLayer& layer : layers) {
    if (layer.spec->confines) return *layer.spec;
  }
  throw std::logic_error("a composition without a confinement layer");
}

// Appends `program args... --` of each layer, outermost first, and its status channel.
void append_layers(ConfinedArgv& out, const LayerContext& context) {
  for (const ComposedLayer& layer : context.layers) {
    const Argv program = layer.spec->program(context.runners);
    out.argv.insert(out.argv.end(), program.begin(), program.end());
    const Argv args = layer.spec->args(context, layer.place);
    out.argv.insert(out.argv.end(), args.begin(), args.end());
    out.argv.emplace_back("--");
    if (!context.needs.status_channels) continue;
    if (auto channel = layer.spec->status_channel(layer.place)) {
      out.status_channels.push_back(*channel);
    }
  }
}

// Each runner's failure rule once (the proxy and its bridge are one program), outermost first,
// and what each layer leaves ungoverned and refuses.
void append_facts(ConfinedArgv& out, const LayerContext& context) {
  for (const ComposedLayer& layer : context.layers) {
    const bool seen =
        std::find(out.layers.begin(), out.layers.end(), layer.spec->layer) != out.layers.end();
    if (!seen) out.runner_failure_rules.push_back(layer.spec->failure_rule(context.runners));
    layer.spec->limits(context, layer.place, out);
    out.layers.push_back(layer.spec->layer);
  }
  // Host Unix sockets are network, and on Linux only landlock-run's supervisor refuses them: a
  // chain without it (bwrap alone, an operator's runner, an allow-list below Landlock ABI 4) says
  // so. Seatbelt's network rules cover Unix sockets themselves.
  const auto has = [&](RunnerLayer kind) {
    return std::any_of(context.layers.begin(), context.layers.end(),
                       [&](const ComposedLayer& layer) { return layer.spec->layer == kind; });
  };
  const bool linux_chain = has(RunnerLayer::kBwrap) || has(RunnerLayer::kRunnerCommand) ||
                           has(RunnerLayer::kLandlockRun);
  if (linux_chain && context.policy.network != NetworkPolicy::kInherit &&
      (!has(RunnerLayer::kLandlockRun) || !context.selection.landlock ||
       !landlock_guards_unix_sockets(context.policy, *context.selection.landlock))) {
    out.ungoverned.emplace_back(
        "named Unix sockets of the host (a Docker socket, a session bus): connect(2) to a socket "
        "file is no network access to bwrap's namespace nor a file access to Landlock, and only "
        "landlock-run's supervisor refuses it");
  }
}

}  // namespace

std::vector<ComposedLayer> compose_layers(const Selection& selection, NetworkPolicy network) {
  if (selection.backend != SandboxBackend::kBwrap) {
    return {{&backend_spec(selection.backend), RunnerPlace::kHost}};
  }
  const bool proxy = network == NetworkPolicy::kAllowList;
  std::vector<ComposedLayer> layers;
  if (proxy) layers.push_back({&netproxy_spec(), RunnerPlace::kHost});
  if (!selection.landlock) layers.push_back({&seccomp_exec_spec(), RunnerPlace::kHost});
  layers.push_back({&bwrap_spec(), RunnerPlace::kHost});
  // The bridge listens on the namespace's loopback before the launcher starts.
  if (proxy) layers.push_back({&netproxy_spec(), RunnerPlace::kInsideBwrap});
  // Defense in depth: inside bwrap's mount view, landlock-run adds IPC scoping, seccomp
  // hardening and its own capability drop.
  if (selection.landlock) layers.push_back({&landlock_run_spec(), RunnerPlace::kInsideBwrap});
  return layers;
}

std::vector<ComposedLayer> operator_layers() {
  return {{&runner_command_spec(), RunnerPlace::kHost}};
}

std::vector<RunnerLayer> selection_layers(const Selection& selection, NetworkPolicy network) {
  std::vector<RunnerLayer> layers;
  for (const ComposedLayer& layer : compose_layers(selection, network)) {
    layers.push_back(layer.spec->layer);
  }
  return layers;
}

std::string selection_name(const Selection& selection) {
  return backend_label(selection_layers(selection));
}

bool host_writable(std::string_view path, SandboxBackend backend, const SandboxPolicy& policy) {
  return backend_spec(backend).host_writable(path, policy);
}

std::optional<std::string> layers_refusal(std::span<const ComposedLayer> layers,
                                          const Selection& selection, const Runners& runners,
                                          const SandboxPolicy& policy, const FsPlan& plan,
                                          const RunNeeds& needs, bool root) {
  const LayerContext context{selection, runners, policy, needs, plan, {}, {}, layers, root};
  for (const ComposedLayer& layer : layers) {
    if (auto reason = layer.spec->refusal(context, layer.place)) return reason;
  }
  return std::nullopt;
}

std::optional<std::string> unsupported_reason(const Selection& selection, const Runners& runners,
                                              const SandboxPolicy& policy, const FsPlan& plan,
                                              const RunNeeds& needs, bool root) {
  const std::vector<ComposedLayer> layers = compose_layers(selection, policy.network);
  const auto composed = [&](RunnerLayer kind) {
    return std::any_of(layers.begin(), layers.end(),
                       [&](const ComposedLayer& layer) { return layer.spec->layer == kind; });
  };
  if (policy.network == NetworkPolicy::kAllowList && !composed(RunnerLayer::kNetProxy)) {
    return netproxy_unsupported_reason(/*bwrap_backend=*/false);
  }
  // Every runner of the chain, the layered launcher included: a layer the command could replace
  // is refused, never silently dropped (the run would be weaker than its facts say).
  const RunnerSpec& confinement = outermost_confinement(layers);
  for (const ComposedLayer& layer : layers) {
    const std::string runner = program_path(*layer.spec, runners);
    if (!runner.empty() && confinement.host_writable(runner, policy)) {
      return fmt::format(
          "the runner {} lies in a directory this policy makes writable, so a confined command "
          "could replace it and later runs would start the impostor unconfined; install "
          "dsh-sandbox outside /tmp and the workspace",
          runner);
    }
  }
  return layers_refusal(layers, selection, runners, policy, plan, needs, root);
}

ConfinedArgv compose_wrap(std::span<const ComposedLayer> layers, const Selection& selection,
                          const Runners& runners, std::span<const std::string> argv,
                          const SandboxPolicy& policy, std::span<const std::string> writable_roots,
                          std::string_view temp_dir, const RunNeeds& needs, const FsPlan& plan) {
  const LayerContext context{selection,      runners,  policy, needs, plan,
                             writable_roots, temp_dir, layers, false};
  const RunnerSpec& confinement = outermost_confinement(layers);
  ConfinedArgv confined;
  confined.network = policy.network;
  confined.denial_signatures = confinement.denial_signatures();
  append_facts(confined, context);
  confined.backend = backend_label(confined.layers);
  confined.enforcement = confinement.enforcement(context);
  confined.strict_enforcement = strict_reading(confined.enforcement, confined.ungoverned);
  confined.argv.reserve(44 + argv.size());
  append_layers(confined, context);
  confined.argv.insert(confined.argv.end(), argv.begin(), argv.end());
  return confined;
}

ConfinedArgv wrap(const Selection& selection, const Runners& runners,
                  std::span<const std::string> argv, const SandboxPolicy& policy,
                  std::span<const std::string> writable_roots, std::string_view temp_dir,
                  const RunNeeds& needs, const FsPlan& plan) {
  const std::vector<ComposedLayer> layers = compose_layers(selection, policy.network);
  return compose_wrap(layers, selection, runners, argv, policy, writable_roots, temp_dir, needs,
                      plan);
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
