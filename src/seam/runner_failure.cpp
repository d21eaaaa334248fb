// SPDX-License-Identifier: Apache-2.0
// classify_runner_failure. A runner's own failure lines share prefixes with what a command may
// print, so a shared prefix is not a protocol: an exit gate, exact informational exclusion and
// per-line fatal matching keep a child's own failures (exit 1, 2, even 125) from being read as the
// runner's.
#include <algorithm>
#include <unordered_set>

#include "base/text.h"
#include "dsh/sandbox/confined_argv.h"

namespace dsh::sandbox {

namespace {

// Splits on "\n" and drops one "\r" before it, as JavaScript's split(/\r?\n/).
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (true) {
    const std::size_t newline = text.find('\n', start);
    std::string_view line = text.substr(
        start, newline == std::string_view::npos ? std::string_view::npos : newline - start);
    if (newline != std::string_view::npos && line.ends_with('\r')) line.remove_suffix(1);
    lines.push_back(line);
    if (newline == std::string_view::npos) return lines;
    start = newline + 1;
  }
}

bool is_blank(std::string_view value) {
  return std::all_of(value.begin(), value.end(), [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
  });
}

bool exit_gate_admits(const RunnerFailureRule& rule, int exit_code) {
  if (!rule.allowed_exit_codes) return true;
  const std::vector<int>& codes = *rule.allowed_exit_codes;
  return std::find(codes.begin(), codes.end(), exit_code) != codes.end();
}

std::optional<RunnerFailureMatch> match_rule(const RunnerFailureRule& rule,
                                             const std::vector<std::string_view>& lines) {
  std::unordered_set<std::string> informational;
  for (const std::string& line : rule.informational_lines.value_or(std::vector<std::string>{})) {
    informational.insert(text::ascii_lower(line));
  }
  std::vector<std::string> fatal;
  for (const std::string& signature : rule.fatal_signatures) {
    if (!is_blank(signature)) fatal.push_back(text::ascii_lower(signature));
  }
  for (const std::string_view line : lines) {
    const std::string lower = text::ascii_lower(line);
    if (informational.contains(lower)) continue;
    for (const std::string& signature : fatal) {
      if (lower.find(signature) != std::string::npos) return RunnerFailureMatch{std::string(line)};
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<RunnerFailureMatch> classify_runner_failure(
    std::optional<int> exit_code, std::string_view stderr_text,
    std::span<const RunnerFailureRule> rules) {
  // Exit status alone never proves a runner failure; a clean exit or a signal death never does.
  if (!exit_code || *exit_code == 0) return std::nullopt;
  const std::vector<std::string_view> lines = split_lines(stderr_text);
  for (const RunnerFailureRule& rule : rules) {
    if (!exit_gate_admits(rule, *exit_code)) continue;
    if (auto match = match_rule(rule, lines)) return match;
  }
  return std::nullopt;
}

}  // namespace dsh::sandbox
