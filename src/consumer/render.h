// SPDX-License-Identifier: Apache-2.0
// The forms of one RunOutcome, each a switch over its one status: the agent render, the
// `--json` object and the exit status of `dsh-sandbox run`.
//
// What a model sees of a foreground run: the command's output, fenced, then the
// sandbox's markers, one per line, the exit marker always last. A nonzero exit is not an error;
// a runner failure is. Each stream sits between `<stdout NONCE>` and `</stdout NONCE>` (then
// `<stderr NONCE>` ... `</stderr NONCE>`) lines, NONCE being 16 hex digits drawn per render after
// the command ended: nothing the command prints can close the fence and pass as a marker.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

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

// Appends `bytes` (nothing when empty) between "<STREAM NONCE>" and "</STREAM NONCE>" lines, so
// everything between them is the command's and only lines after the last closing fence are the
// sandbox's.
void append_fenced(std::string& text, std::string_view stream, const std::string& bytes,
                   std::string_view nonce);

// "Error: <message>" for an error the model should see as a failed tool call.
std::string render_error_for_agent(const std::string& message);

inline constexpr int kTimeoutExit = 124;
inline constexpr int kNotRunExit = 125;  // the runner failed: the command did not run

// The exit status `dsh-sandbox run` passes on: the command's code, 128+N for a signal, 124 on
// timeout, 127 (ENOENT) or 126 for a program or workdir that could not be started, as a shell
// reports them, 125 when the runner failed.
int exit_status(const RunStatus& status);

// The `--json` object of a run; `interrupted`: the signal that interrupted `run`, or 0. A runner
// failure reports the command as not run: no backend, no output, no bounds.
nlohmann::json result_json(const RunOutcome& outcome, int interrupted);

// Why the command never started, when its status is NotStarted: the refused program or workdir,
// and for a workdir that only bwrap's view hides, what to do instead.
std::optional<std::string> start_failure(const RunOutcome& outcome);

// "SIGKILL" for 9; "signal N" for a number without a name.
// The line naming a tree the supervisor ended for its memory (exec::BoundFact::exceeded).
std::string memory_exceeded_marker(const exec::BoundFact& memory);

std::string signal_name(int signal);

}  // namespace dsh::sandbox::consumer
