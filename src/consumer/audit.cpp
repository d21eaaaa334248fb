// SPDX-License-Identifier: Apache-2.0
#include "consumer/audit.h"

#include <string>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "consumer/denials.h"
#include "consumer/render.h"

namespace dsh::sandbox::consumer {

SandboxRunEvent run_event(const RunSpec& spec, const RunOutcome& outcome) {
  SandboxRunEvent event;
  event.argv = spec.argv;
  event.mode = outcome.sandbox.mode;
  event.workspace_root = spec.policy.workspace_root;
  event.backend = outcome.sandbox.backend;
  if (outcome.sandbox.enforcement) {
    event.enforcement = std::string(wire_name(*outcome.sandbox.enforcement));
  }
  event.exit_code = exit_code_of(outcome.status);
  if (const auto signal = signal_of(outcome.status)) event.signal = signal_name(*signal);
  event.timed_out = std::holds_alternative<status::TimedOut>(outcome.status);
  event.denied = outcome.sandbox.denied;
  if (event.denied) {
    const std::vector<std::string> markers = denial_markers(outcome.sandbox);
    event.denial = fmt::format("{}", fmt::join(markers, " "));
  }
  event.denial_source = outcome.sandbox.denial_source;
  event.denials = outcome.sandbox.denials;
  return event;
}

}  // namespace dsh::sandbox::consumer
