// SPDX-License-Identifier: Apache-2.0
#include "render.h"

#include <cstring>  // sigabbrev_np (glibc 2.32, a GNU extension of string.h)

#include <fmt/format.h>

#include "dsh/sandbox/escalation.h"

namespace dsh::sandbox::consumer {

namespace {

std::string truncation_suffix(const exec::Result& process) {
  if (!process.out.truncated && !process.err.truncated) return {};
  std::string spills;
  for (const exec::StreamOutput* stream : {&process.out, &process.err}) {
    if (!stream->truncated) continue;
    if (!spills.empty()) spills += ", ";
    spills += stream->spill_path.value_or("(unavailable)");
  }
  return fmt::format("[output truncated; full output: {}]\n", spills);
}

}  // namespace

std::string signal_name(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  return abbrev != nullptr ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", signal);
}

std::string render_for_agent(const RunOutcome& outcome, bool escalation_advertised,
                             long long timeout_ms) {
  const exec::Result& process = outcome.process;
  std::string text = process.out.tail;
  if (!process.err.tail.empty()) {
    if (!text.empty() && !text.ends_with('\n')) text += '\n';
    text += "[stderr]\n" + process.err.tail;
  }
  if (text.empty()) text = "(no output)";
  if (!text.ends_with('\n')) text += '\n';
  text += truncation_suffix(process);
  if (outcome.sandbox.denied) {
    text += sandbox_denial_marker(outcome.sandbox.mode) + "\n";
    if (escalation_advertised) text += escalation_hint_marker("command") + "\n";
  }
  if (process.timed_out) text += fmt::format("[timed out after {}ms]\n", timeout_ms);
  if (process.signal) {
    text += fmt::format("[killed by signal: {}]\n", signal_name(*process.signal));
  } else if (process.exit_code && *process.exit_code != 0) {
    text += fmt::format("[exit code: {}]\n", *process.exit_code);
  }
  text.pop_back();  // no trailing newline after the last line
  return text;
}

std::string render_error_for_agent(const std::string& message) { return "Error: " + message; }

}  // namespace dsh::sandbox::consumer
