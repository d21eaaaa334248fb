// SPDX-License-Identifier: Apache-2.0
// The operator's runnerCommand's home: its argv (the runner, then bwrap's profile), its failure
// rule (the operator's signatures) and its denial dialect. The mechanism is unknown, so it gets
// no status channel and no --chdir: a runner given flags it does not know would refuse to start.
#pragma once

#include <span>
#include <string>

#include "dsh/sandbox/confined_argv.h"
#include "dsh/sandbox/policy.h"
#include "profiles/fs_plan.h"

namespace dsh::sandbox::profiles {

// runner + bwrap profile (with the call's filesystem plan) + "--" + argv, asserted full, layers
// [runner-command].
ConfinedArgv wrap_runner_command(std::span<const std::string> runner_command,
                                 std::span<const std::string> failure_signatures,
                                 std::span<const std::string> argv, const SandboxPolicy& policy,
                                 const FsPlan& plan = {});

}  // namespace dsh::sandbox::profiles
