// SPDX-License-Identifier: Apache-2.0
// `run --escalate ask`: after a run the kernel refused something in, the one retry a person at
// this terminal may approve, narrowest first (the refused directories as --allow-write, else the
// next wider mode), for that retry only; nothing is persisted.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/invocation.h"
#include "consumer/bash_executor.h"

namespace dsh::sandbox::cli {

// The one retry `--escalate ask` may offer, for that retry only: its mode and the directories
// it adds as writable roots.
struct RetryOffer {
  SandboxMode mode = SandboxMode::kWorkspaceWrite;
  std::vector<std::string> allow_write;
};

// The retry a person at this terminal approves, narrowest first; nullopt otherwise (no
// evidence, no terminal, no wider mode that helps, a --network it could not enforce, a no).
std::optional<RetryOffer> approved_retry(const RunInvocation& run, const consumer::RunSpec& spec,
                                         const consumer::RunOutcome& outcome);

// The approved retry's policy: its mode (full access inherits the network) and extra roots.
void apply_retry(consumer::RunSpec& spec, const RetryOffer& retry);

// Unconfined, nothing could enforce a network policy: a --network deny or allow: the caller
// wrote is refused rather than ignored, for a first run and for an approved retry to a wider mode
// alike. The default (no network in confined modes) is no such request: a danger-full-access
// run, or a retry into it, keeps the network it inherently has.
std::optional<std::string> unenforceable_network(SandboxMode mode, NetworkPolicy network,
                                                 bool network_given);

}  // namespace dsh::sandbox::cli
