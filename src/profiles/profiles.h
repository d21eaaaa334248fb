// SPDX-License-Identifier: Apache-2.0
// The composer of runner layers: policy + selection -> the whole ConfinedArgv. Each runner lives
// in its own home (bwrap.h, landlock_run.h, runner_command.h, seatbelt.h, windows_acl.h); this
// header includes them all. PURE: no I/O, no host state: every input (runner paths, kernel
// features, temp dir, the run's workdir) is a parameter, so the Seatbelt and Windows generators
// are unit tested on Linux like the rest.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/backend.h"
#include "dsh/sandbox/confined_argv.h"
#include "dsh/sandbox/policy.h"
#include "profiles/bwrap.h"
#include "profiles/landlock_run.h"
#include "profiles/netproxy.h"
#include "profiles/runner_command.h"
#include "profiles/runner_report.h"
#include "profiles/runner_spec.h"
#include "profiles/seatbelt.h"
#include "profiles/windows_acl.h"

namespace dsh::sandbox::profiles {

// The chain's verdict: which backend confines, and what landlock-run offers when it is used,
// alone (kLandlock) or as a second layer inside bwrap's namespace (kBwrap with features).
struct Selection {
  SandboxBackend backend = SandboxBackend::kBwrap;
  std::optional<LandlockFeatures> landlock;

  bool operator==(const Selection&) const = default;
};

// The layers a selection's argv starts, outermost first, each with where it runs: built first,
// and read by every consumer (the argv and its facts here, the trust and probe steps of
// src/local). bwrap alone starts behind its exec shim; layered, landlock-run runs inside bwrap's
// namespaces; under a network allow-list dsh-netproxy heads a bwrap chain and its bridge runs
// inside bwrap's network namespace, ahead of the launcher. Another backend is its one runner.
std::vector<ComposedLayer> compose_layers(const Selection& selection, NetworkPolicy network);
// The operator's runnerCommand in place of every backend: its one layer.
std::vector<ComposedLayer> operator_layers();

// The runners compose_layers puts in a selection's argv, outermost first: ConfinedArgv::layers.
std::vector<RunnerLayer> selection_layers(const Selection& selection,
                                          NetworkPolicy network = NetworkPolicy::kInherit);

// "bwrap", "bwrap+landlock", "landlock", "seatbelt", "windows-acl": ConfinedArgv::backend,
// backend_label(selection_layers(selection)).
std::string selection_name(const Selection& selection);

// Whether a command confined by `backend` under `policy` can write `path` on the host: beneath
// the workspace under workspace-write, and beneath the host /tmp too under Landlock (bwrap's
// /tmp is a private tmpfs). `path` is compared as spelled; pass canonical paths.
bool host_writable(std::string_view path, SandboxBackend backend, const SandboxPolicy& policy);

// Why `selection` cannot honour `policy`, or nullopt: a network allow-list without the bwrap
// chain that forces it, a runner the confined command could replace on the host (every later run
// would then start an impostor, unconfined), or a layer's own refusal (a denied network the
// backend cannot enforce; for Landlock alone, startup files beneath a writable root under `plan`
// and, for a `root` caller, metadata without the supervisor). The provider refuses such a call
// as unavailable rather than run it with less.
std::optional<std::string> unsupported_reason(const Selection& selection, const Runners& runners,
                                              const SandboxPolicy& policy, const FsPlan& plan = {},
                                              const RunNeeds& needs = {}, bool root = false);

// The first refusal of `layers` (RunnerSpec::refusal, outermost first), or nullopt: what
// unsupported_reason asks of each layer, and all the operator's runnerCommand is asked.
std::optional<std::string> layers_refusal(std::span<const ComposedLayer> layers,
                                          const Selection& selection, const Runners& runners,
                                          const SandboxPolicy& policy, const FsPlan& plan = {},
                                          const RunNeeds& needs = {}, bool root = false);

// The whole ConfinedArgv for a supported selection: argv (each runner with its run flags:
// status channels and --chdir as `needs` asks), enforcement, what is not governed, denial
// signatures, runner-failure rules, layers and status channels of every layer. bwrap layers
// landlock-run inside, bound back read-only at its own path where a profile mount (/dev, /proc,
// workspace-write's tmpfs /tmp) would hide it.
// `plan` is the call's filesystem plan (policy/effective_policy.h); empty: no path rules.
ConfinedArgv wrap(const Selection& selection, const Runners& runners,
                  std::span<const std::string> argv, const SandboxPolicy& policy,
                  std::span<const std::string> writable_roots, std::string_view temp_dir,
                  const RunNeeds& needs = {}, const FsPlan& plan = {});

// wrap of the given layers: each layer's program, its arguments and "--", outermost first, then
// `argv`; its status channels (when `needs` asks), its failure rule (once per runner), what it
// leaves ungoverned and refuses; the outermost confinement layer's denial dialect and verdict.
ConfinedArgv compose_wrap(std::span<const ComposedLayer> layers, const Selection& selection,
                          const Runners& runners, std::span<const std::string> argv,
                          const SandboxPolicy& policy, std::span<const std::string> writable_roots,
                          std::string_view temp_dir, const RunNeeds& needs, const FsPlan& plan);

// What the runners of `confined` reported on its status channels once the run settled:
// `status[i]` is everything channel confined.status_channels[i] carried. Only a nonzero exit is
// read (a clean exit or a signal death is never a runner's report); the innermost runner first.
RunnerReport read_status_reports(const ConfinedArgv& confined, std::span<const std::string> status,
                                 std::optional<int> exit_code, std::string_view stderr_tail);

}  // namespace dsh::sandbox::profiles
