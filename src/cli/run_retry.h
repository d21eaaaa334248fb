// SPDX-License-Identifier: Apache-2.0
// `run --escalate ask`: after a run the kernel refused something in, the one retry a person at
// this terminal may approve, narrowest first (the refused directories as --allow-write, the
// hosts the proxy refused as --network allow: entries, else the next wider mode), for that retry
// only; nothing is persisted.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/invocation.h"
#include "consumer/bash_executor.h"

namespace dsh::sandbox::cli {

// The one retry `--escalate ask` may offer, for that retry only: its mode, the directories it
// adds as writable roots and the destinations it adds to the network allow-list.
struct RetryOffer {
  SandboxMode mode = SandboxMode::kWorkspaceWrite;
  std::vector<std::string> allow_write;
  std::vector<std::string> network_allow;
};

// The retry a person at this terminal approves, narrowest first; nullopt otherwise (no
// evidence, no terminal, no wider mode that helps, a --network it could not enforce, a no).
std::optional<RetryOffer> approved_retry(const RunInvocation& run, const consumer::RunSpec& spec,
                                         const consumer::RunOutcome& outcome);

// The approved retry's policy: its mode (full access inherits the network) and extra roots.
void apply_retry(consumer::RunSpec& spec, const RetryOffer& retry);

}  // namespace dsh::sandbox::cli
