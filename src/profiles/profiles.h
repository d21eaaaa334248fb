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
#include "profiles/seatbelt.h"
#include "profiles/windows_acl.h"

namespace dsh::sandbox::profiles {

// Absolute paths of the runners, located once (local::locate_runners) and passed as a value.
struct Runners {
  std::string bwrap;
  std::string landlock_run;
  std::string sandbox_exec = "/usr/bin/sandbox-exec";
  std::vector<std::string> windows_acl;  // the runner's argv prefix, e.g. [node, runner.js]
  std::string netproxy;                  // dsh-netproxy, for the network allow-list
  std::string seccomp_exec;              // dsh-seccomp-exec, in front of bwrap alone
};

// The chain's verdict: which backend confines, and what landlock-run offers when it is used,
// alone (kLandlock) or as a second layer inside bwrap's namespace (kBwrap with features).
struct Selection {
  SandboxBackend backend = SandboxBackend::kBwrap;
  std::optional<LandlockFeatures> landlock;

  bool operator==(const Selection&) const = default;
};

// The runners a selection's argv starts, outermost first: bwrap then landlock-run when layered.
std::vector<RunnerLayer> selection_layers(const Selection& selection);

// "bwrap", "bwrap+landlock", "landlock", "seatbelt", "windows-acl": ConfinedArgv::backend,
// backend_label(selection_layers(selection)).
std::string selection_name(const Selection& selection);

// Whether a command confined by `backend` under `policy` can write `path` on the host: beneath
// the workspace under workspace-write, and beneath the host /tmp too under Landlock (bwrap's
// /tmp is a private tmpfs). `path` is compared as spelled; pass canonical paths.
bool host_writable(std::string_view path, SandboxBackend backend, const SandboxPolicy& policy);

// Why `selection` cannot honour `policy`, or nullopt: a denied network the backend cannot
// enforce, or a runner the confined command could replace on the host (every later run would
// then start an impostor, unconfined). The provider refuses such a call as unavailable rather
// than run it with less.
std::optional<std::string> unsupported_reason(const Selection& selection, const Runners& runners,
                                              const SandboxPolicy& policy);

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

// What the runners of `confined` reported on its status channels once the run settled:
// `status[i]` is everything channel confined.status_channels[i] carried. Only a nonzero exit is
// read (a clean exit or a signal death is never a runner's report); the innermost runner first.
RunnerReport read_status_reports(const ConfinedArgv& confined, std::span<const std::string> status,
                                 std::optional<int> exit_code, std::string_view stderr_tail);

}  // namespace dsh::sandbox::profiles
