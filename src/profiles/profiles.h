// SPDX-License-Identifier: Apache-2.0
// PURE profile generators: policy -> runner argv and facts, for every backend (spec §2.4, §2.5).
// No I/O, no host state: every input (runner paths, kernel features, temp dir) is a parameter,
// so the Seatbelt and Windows generators are unit tested on Linux like the rest.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/backend.h"
#include "dsh/sandbox/confined_argv.h"
#include "dsh/sandbox/policy.h"

namespace dsh::sandbox::profiles {

// What landlock-run reported about this kernel: `--probe` (enforcement) and `--features`.
struct LandlockFeatures {
  SandboxEnforcement enforcement = SandboxEnforcement::kPartial;
  int abi = 0;
  bool deny_network = false;   // seccomp socket filter available
  bool scope_ipc = false;      // Landlock ABI >= 6 scoping of abstract sockets and signals
  bool deny_metadata = false;  // seccomp metadata filter available

  bool operator==(const LandlockFeatures&) const = default;
};

// Absolute paths of the runners, resolved once by the provider.
struct Runners {
  std::string bwrap;
  std::string landlock_run;
  std::string sandbox_exec = "/usr/bin/sandbox-exec";
  std::vector<std::string> windows_acl;  // the runner's argv prefix, e.g. [node, runner.js]
};

// The chain's verdict: which backend confines, and what landlock-run offers when it is used,
// alone (kLandlock) or as a second layer inside bwrap's namespace (kBwrap with features).
struct Selection {
  SandboxBackend backend = SandboxBackend::kBwrap;
  std::optional<LandlockFeatures> landlock;

  bool operator==(const Selection&) const = default;
};

// "bwrap", "bwrap+landlock", "landlock", "seatbelt", "windows-acl": ConfinedArgv::backend.
std::string selection_name(const Selection& selection);

// bwrap: `--ro-bind / / --dev /dev --unshare-pid --proc /proc --die-with-parent --new-session
// --cap-drop ALL`, then `--unshare-net` for a denied network, then under workspace-write
// `--tmpfs /tmp --bind WS WS`.
std::vector<std::string> bwrap_args(const SandboxPolicy& policy);

// landlock-run: `--ro / --rw /dev/null`, under workspace-write `--rw /tmp --rw WS`, then the
// hardening options this kernel supports.
std::vector<std::string> landlock_args(const SandboxPolicy& policy,
                                       const LandlockFeatures& features);

// SBPL string literal: `"` + text with `\` and `"` escaped + `"`.
std::string sbpl_string(std::string_view text);
// `writable_roots` is seam::writable_roots(policy): canonical, deduplicated, workspace first.
std::string seatbelt_profile(const SandboxPolicy& policy,
                             std::span<const std::string> writable_roots);

// windows-acl runner arguments: `--workspace WS --temp TEMP --mode MODE`.
std::vector<std::string> windows_acl_args(const SandboxPolicy& policy, std::string_view temp_dir);

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

// The whole ConfinedArgv for a supported selection: argv, enforcement, what is not governed,
// denial signatures and runner-failure rules of every layer. bwrap layers landlock-run inside
// only while the command cannot replace the launcher on the host; the layer is then bound
// read-only at its own path, which also keeps it visible over workspace-write's tmpfs /tmp.
ConfinedArgv wrap(const Selection& selection, const Runners& runners,
                  std::span<const std::string> argv, const SandboxPolicy& policy,
                  std::span<const std::string> writable_roots, std::string_view temp_dir);

// The operator's runnerCommand override (spec §2.2): runner + bwrap profile, asserted full.
ConfinedArgv wrap_runner_command(std::span<const std::string> runner_command,
                                 std::span<const std::string> failure_signatures,
                                 std::span<const std::string> argv, const SandboxPolicy& policy);

}  // namespace dsh::sandbox::profiles
