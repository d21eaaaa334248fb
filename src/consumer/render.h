// SPDX-License-Identifier: Apache-2.0
// What a model sees of a foreground run (spec §5.7): output, then markers, one per line, the
// exit marker always last. A nonzero exit is not an error; a runner failure is.
#pragma once

#include <string>

#include "bash_executor.h"

namespace dsh::sandbox::consumer {

// `escalation_advertised`: the caller offers a wider mode (sandbox_permissions) to the model.
// `timeout_ms`: the deadline the run had, for the timed-out marker.
std::string render_for_agent(const RunOutcome& outcome, bool escalation_advertised,
                             long long timeout_ms);

// "Error: <message>" for an error the model should see as a failed tool call.
std::string render_error_for_agent(const std::string& message);

// "SIGKILL" for 9; "signal N" for a number without a name.
std::string signal_name(int signal);

}  // namespace dsh::sandbox::consumer
