// SPDX-License-Identifier: Apache-2.0
// What confine() returns and how a consumer recognises the runner failing before
// the command ran. Consumers check runner_failure_rules before denial_signatures:
// a runner failure means the command never ran; a denial means confinement worked.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/modes.h"

namespace dsh::sandbox {

// One backend's recipe for recognising its own runner's failure in a settled run.
struct RunnerFailureRule {
  // Nonzero exit codes the runner uses for its own failures; absent means any nonzero code.
  std::optional<std::vector<int>> allowed_exit_codes;
  // Substrings matched case-insensitively within single stderr lines; blank entries ignored.
  std::vector<std::string> fatal_signatures;
  // Whole stderr lines (case-insensitive, exact) that are notices, not failure evidence.
  std::optional<std::vector<std::string>> informational_lines;

  bool operator==(const RunnerFailureRule&) const = default;
};

// A descriptor the spawner must open in the child before it runs ConfinedArgv::argv: number
// `fd` in the child, readable from its start, holding exactly `content` and then end of file
// (a pipe whose write end is closed, or a memfd at offset 0). The argv names the number (bwrap's
// `--seccomp N`); a spawn without it makes the runner fail, so the command never runs unconfined.
struct ProvidedFd {
  int fd = -1;
  std::string content;  // raw bytes, not text
  std::string purpose;  // what reads it, e.g. "bwrap --seccomp: the seccomp program"

  bool operator==(const ProvidedFd&) const = default;
};

struct ConfinedArgv {
  // Runner, profile arguments, "--", then the caller's exact argv: spawn this instead.
  std::vector<std::string> argv;
  // What this host enforces, not what was requested.
  SandboxEnforcement enforcement = SandboxEnforcement::kFull;
  // Case-insensitive stderr substrings this backend's denials produce (this backend only,
  // never a union across backends: a union claims denials this backend never produces).
  std::vector<std::string> denial_signatures;
  std::vector<RunnerFailureRule> runner_failure_rules;

  // Extensions beyond the reference's type (its consumers ignore them):
  // the backend that confines, e.g. "bwrap", "landlock", "bwrap+landlock", "seatbelt";
  std::string backend;
  // what this backend does not govern of the mode's promise on this host; non-empty exactly
  // when enforcement is partial, so "partial" is never a bare word;
  std::vector<std::string> ungoverned;
  // the network policy actually applied;
  NetworkPolicy network = NetworkPolicy::kInherit;
  // descriptors the spawner must provide (see ProvidedFd), each number at most once, all >= 3;
  std::vector<ProvidedFd> provided_fds;
  // what this backend refuses that an unconfined command could do, and why: host kernel objects
  // and devices it cannot give the command a private copy of. A refusal is the boundary holding,
  // not a gap, so it does not make enforcement partial.
  std::vector<std::string> refused;

  bool operator==(const ConfinedArgv&) const = default;
};

struct RunnerFailureMatch {
  std::string detail;  // the first fatal stderr line, exactly as the runner wrote it
};

// The reference's classifyRunnerFailure: exit 0 or death by signal (nullopt) is
// never a runner failure; otherwise the first rule whose exit gate admits the code and that
// finds a fatal signature in a non-informational line wins, with that original line as detail.
// Case folding is ASCII-only: runner diagnostics are ASCII.
std::optional<RunnerFailureMatch> classify_runner_failure(std::optional<int> exit_code,
                                                          std::string_view stderr_text,
                                                          std::span<const RunnerFailureRule> rules);

}  // namespace dsh::sandbox
