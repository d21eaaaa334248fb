// SPDX-License-Identifier: Apache-2.0
#include "consumer/render.h"

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstring>  // sigabbrev_np (glibc 2.32, a GNU extension of string.h)
#include <system_error>

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

std::string output_nonce() {
  std::array<unsigned char, 8> random{};
  std::size_t filled = 0;
  while (filled < random.size()) {
    const ssize_t n = ::getrandom(random.data() + filled, random.size() - filled, 0);
    if (n > 0) {
      filled += static_cast<std::size_t>(n);
    } else if (errno != EINTR) {
      // No kernel randomness: a nonce the command could predict would let it close the fence.
      throw std::system_error(errno, std::generic_category(), "getrandom for the output fence");
    }
  }
  std::string nonce;
  for (const unsigned char byte : random) nonce += fmt::format("{:02x}", byte);
  return nonce;
}

std::string render_for_agent(const RunOutcome& outcome, bool escalation_advertised,
                             long long timeout_ms) {
  return render_for_agent(outcome, escalation_advertised, timeout_ms, output_nonce());
}

std::string render_for_agent(const RunOutcome& outcome, bool escalation_advertised,
                             long long timeout_ms, std::string_view nonce) {
  const exec::Result& process = outcome.process;
  std::string text;
  // The command's bytes, fenced: everything between the opening and the closing line is the
  // command's, and only lines after the last closing fence are the sandbox's. The nonce is drawn
  // after the command ended, so the command cannot print a closing line that matches.
  const auto fence = [&text, nonce](std::string_view stream, const std::string& bytes) {
    if (bytes.empty()) return;
    text += fmt::format("<{} {}>\n", stream, nonce);
    text += bytes;
    if (!bytes.ends_with('\n')) text += '\n';
    text += fmt::format("</{} {}>\n", stream, nonce);
  };
  fence("stdout", process.out.tail);
  fence("stderr", process.err.tail);
  if (text.empty()) text = "(no output)\n";
  text += truncation_suffix(process);
  if (outcome.sandbox.denied) {
    text += sandbox_denial_marker(outcome.sandbox.mode) + "\n";
    if (escalation_advertised) text += escalation_hint_marker("command") + "\n";
  }
  if (process.timed_out) text += fmt::format("[timed out after {}ms]\n", timeout_ms);
  if (process.signal) {
    text += fmt::format("[killed by signal: {}]\n", signal_name(*process.signal));
  } else if (process.exit_code) {
    text += fmt::format("[exit code: {}]\n", *process.exit_code);
  }
  text.pop_back();  // no trailing newline after the last line
  return text;
}

std::string render_error_for_agent(const std::string& message) { return "Error: " + message; }

}  // namespace dsh::sandbox::consumer
