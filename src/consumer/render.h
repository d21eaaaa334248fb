// SPDX-License-Identifier: Apache-2.0
// What a model sees of a foreground run: the command's output, fenced, then the
// sandbox's markers, one per line, the exit marker always last. A nonzero exit is not an error;
// a runner failure is. Each stream sits between `<stdout NONCE>` and `</stdout NONCE>` (then
// `<stderr NONCE>` ... `</stderr NONCE>`) lines, NONCE being 16 hex digits drawn per render after
// the command ended: nothing the command prints can close the fence and pass as a marker.
#pragma once

#include <string>
#include <string_view>

#include "consumer/bash_executor.h"

namespace dsh::sandbox::consumer {

// `escalation_advertised`: the caller offers a wider mode (sandbox_permissions) to the model.
// `timeout_ms`: the deadline the run had, for the timed-out marker.
std::string render_for_agent(const RunOutcome& outcome, bool escalation_advertised,
                             long long timeout_ms);
// The same with a given fence nonce (tests).
std::string render_for_agent(const RunOutcome& outcome, bool escalation_advertised,
                             long long timeout_ms, std::string_view nonce);

// 16 hex digits from getrandom(2); std::system_error when the kernel has no randomness to give.
std::string output_nonce();

// "Error: <message>" for an error the model should see as a failed tool call.
std::string render_error_for_agent(const std::string& message);

// "SIGKILL" for 9; "signal N" for a number without a name.
std::string signal_name(int signal);

}  // namespace dsh::sandbox::consumer
