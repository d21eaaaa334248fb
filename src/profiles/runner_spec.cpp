// SPDX-License-Identifier: Apache-2.0
// The registration table: the one place that lists the runners. A new runner adds its spec in its
// own home and one line here; tests/unit/profiles checks each is complete and installed.
#include "profiles/runner_spec.h"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace dsh::sandbox::profiles {

bool LayerContext::has(RunnerLayer layer) const {
  return std::any_of(layers.begin(), layers.end(),
                     [&](const ComposedLayer& composed) { return composed.spec->layer == layer; });
}

std::string program_path(const RunnerSpec& spec, const Runners& runners) {
  const std::vector<std::string> program = spec.program(runners);
  return program.empty() ? std::string() : program.front();
}

std::span<const RunnerSpec* const> runner_specs() {
  static const std::array<const RunnerSpec*, 7> table = {
      &netproxy_spec(),       &seccomp_exec_spec(), &bwrap_spec(),       &landlock_run_spec(),
      &runner_command_spec(), &seatbelt_spec(),     &windows_acl_spec(),
  };
  return table;
}

const RunnerSpec& runner_spec(RunnerLayer layer) {
  for (const RunnerSpec* spec : runner_specs()) {
    if (spec->layer == layer) return *spec;
  }
  throw std::logic_error("unreachable variant in RunnerLayer");
}

const RunnerSpec& backend_spec(SandboxBackend backend) {
  for (const RunnerSpec* spec : runner_specs()) {
    if (spec->backend == backend) return *spec;
  }
  throw std::logic_error("unreachable variant in SandboxBackend");
}

std::optional<StatusChannel> no_status_channel(RunnerPlace /*place*/) { return std::nullopt; }

void no_limits(const LayerContext& /*context*/, RunnerPlace /*place*/, ConfinedArgv& /*facts*/) {}

std::optional<std::string> no_refusal(const LayerContext& /*context*/, RunnerPlace /*place*/) {
  return std::nullopt;
}

}  // namespace dsh::sandbox::profiles
