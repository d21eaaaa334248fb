// SPDX-License-Identifier: Apache-2.0
// A run's audit line for the session log, from what the consumer ran and how it ended: the one
// place `run` (foreground) and the job supervisor (background, at settlement) build it.
#pragma once

#include "consumer/bash_executor.h"
#include "dsh/sandbox/policy_service.h"

namespace dsh::sandbox::consumer {

// The sandbox/run payload of `outcome`; argv and workspace from `spec`.
SandboxRunEvent run_event(const RunSpec& spec, const RunOutcome& outcome);

}  // namespace dsh::sandbox::consumer
