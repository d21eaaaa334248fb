// SPDX-License-Identifier: Apache-2.0
// The operator's runnerCommand's home: its argv (the runner, then the documented bwrap-compatible
// profile), its failure rule (the operator's signatures) and its denial dialect. The mechanism is
// unknown, so it gets no status channel and no --chdir: a runner given flags it does not know
// would refuse to start. Only an operator who says the runner accepts bwrap's hardening options
// (config runnerAcceptsHardening) gets them; without them what they close is named ungoverned.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dsh/sandbox/confined_argv.h"
#include "dsh/sandbox/policy.h"
#include "profiles/fs_plan.h"

namespace dsh::sandbox::profiles {

// The documented bwrap-compatible profile, exactly: `--ro-bind / / --dev /dev --unshare-pid
// --proc /proc --die-with-parent`, under workspace-write also `--tmpfs /tmp --bind WS WS`.
std::vector<std::string> documented_bwrap_args(const SandboxPolicy& policy);

// What the documented profile leaves open that bwrap's hardening options close.
std::vector<std::string> runner_command_ungoverned();

// Why a runner without the hardening options cannot honour `policy` (a denied network needs
// --unshare-net), or nullopt.
std::optional<std::string> runner_command_unsupported_reason(const SandboxPolicy& policy,
                                                             bool accepts_hardening);

// Why the documented profile (no path rules) cannot run this plan, or nullopt: it would leave
// the home startup files a writable root reaches writable and creatable.
std::optional<std::string> runner_command_startup_refusal(const FsPlan& plan,
                                                          bool accepts_hardening);

// runner + profile + "--" + argv, layers [runner-command]; enforcement is full, the operator's
// assertion (the reference's rule). With `accepts_hardening` the profile is bwrap's whole profile
// (bwrap_args: --unshare-ipc, --new-session, --cap-drop ALL, --unshare-net under a denied
// network) and the strict reading is full too; without it the documented profile, and the strict
// reading is partial, naming runner_command_ungoverned() and the plan's carve-outs and
// unreadable paths it cannot apply.
ConfinedArgv wrap_runner_command(std::span<const std::string> runner_command,
                                 std::span<const std::string> failure_signatures,
                                 std::span<const std::string> argv, const SandboxPolicy& policy,
                                 bool accepts_hardening = false, const FsPlan& plan = {});

}  // namespace dsh::sandbox::profiles
