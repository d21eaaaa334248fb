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

// The runners of a wrap, outermost first: a typed list, never a string to parse. "landlock-run"
// is the launcher, alone or as the second layer inside bwrap; "runner-command" is the operator's
// own runner (LocalSandboxConfig::runner_command).
// "netproxy" is the network allow-list's proxy (docs/evidence-and-network.md): outermost when
// present, a network runner rather than a confinement layer, so backend labels leave it out.
// "seccomp-exec" is dsh-seccomp-exec, right before bwrap when bwrap confines alone: it opens
// bwrap's seccomp program on the descriptor `--seccomp` names and execs bwrap; it confines
// nothing itself, so backend labels leave it out too.
enum class RunnerLayer {
  kBwrap,
  kLandlockRun,
  kRunnerCommand,
  kSeatbelt,
  kWindowsAcl,
  kNetProxy,
  kSeccompExec
};

// "bwrap", "landlock-run", "runner-command", "seatbelt", "windows-acl", "netproxy",
// "seccomp-exec".
std::string_view layer_name(RunnerLayer layer);
// The backend label of a layer list, as ConfinedArgv::backend spells it: "bwrap",
// "bwrap+landlock", "landlock", "runner-command", "seatbelt", "windows-acl".
std::string backend_label(std::span<const RunnerLayer> layers);

// How a runner writes to its status channel.
enum class StatusFormat {
  // bwrap `--json-status-fd N`: JSON objects; {"exit-code": N} once the command it started has
  // exited. A bwrap that exits without that line failed before or while setting up.
  kBwrapJson,
  // landlock-run `--status-fd N`: one "landlock-run: ..." line, written only when it failed.
  kLauncherLines,
  // dsh-netproxy `--status-fd N`: one "denial op=connect ..." line per refused connection
  // (profiles/denial_line.h), and one "dsh-netproxy: ..." line when it failed itself.
  kProxyLines,
};

// "bwrap-json", "launcher-lines", "proxy-lines".
std::string_view status_format_name(StatusFormat format);

// A runner's out-of-band status channel, asked for with ConfineRequest::status_channels: the
// spawner opens a pipe and maps its write end to number `fd` in the child (closing its own copy
// once the child started), then reads what `layer` wrote once the run settled. The argv names
// the number; a spawn without it makes the runner fail (bwrap cannot write its status), so the
// command never runs unconfined. A command that merely prints a runner's line cannot forge it.
struct StatusChannel {
  int fd = -1;
  RunnerLayer layer = RunnerLayer::kBwrap;
  StatusFormat format = StatusFormat::kBwrapJson;

  bool operator==(const StatusChannel&) const = default;
};

struct ConfinedArgv {
  // Runner, profile arguments, "--", then the caller's exact argv: spawn this instead.
  std::vector<std::string> argv;
  // The contract's fact, as the reference computes it: the backend's verdict (bwrap, Seatbelt
  // and an operator's runnerCommand full; Landlock the launcher's own --probe verdict; windows-acl
  // partial). What this project finds beyond it is in `ungoverned` and `strict_enforcement`.
  SandboxEnforcement enforcement = SandboxEnforcement::kFull;
  // Case-insensitive stderr substrings this backend's denials produce (this backend only,
  // never a union across backends: a union claims denials this backend never produces).
  std::vector<std::string> denial_signatures;
  std::vector<RunnerFailureRule> runner_failure_rules;

  // Extensions beyond the reference's type (its consumers ignore them):
  // the backend that confines, e.g. "bwrap", "landlock", "bwrap+landlock", "seatbelt";
  std::string backend;
  // what this backend does not govern of the mode's promise on this host, as this project reads
  // it (stricter than the reference: Landlock's metadata under workspace-write, a runnerCommand
  // without the hardening); may be non-empty while `enforcement` is full;
  std::vector<std::string> ungoverned;
  // the network policy actually applied;
  NetworkPolicy network = NetworkPolicy::kInherit;
  // descriptors the spawner must provide (see ProvidedFd), each number at most once, all >= 3;
  std::vector<ProvidedFd> provided_fds;
  // what this backend refuses that an unconfined command could do, and why: host kernel objects
  // and devices it cannot give the command a private copy of. A refusal is the boundary holding,
  // not a gap, so it does not make enforcement partial.
  std::vector<std::string> refused;
  // the runners of argv, outermost first (backend is their label);
  std::vector<RunnerLayer> layers;
  // the status channels argv names (only when the request asked for them), each number at most
  // once and distinct from every provided descriptor's.
  std::vector<StatusChannel> status_channels;
  // the strict reading of `enforcement`: partial exactly when `ungoverned` is non-empty (or
  // `enforcement` is partial), so a strict "partial" is never a bare word; what a person is
  // shown. Last, so aggregate initialisers of the fields above keep their meaning.
  SandboxEnforcement strict_enforcement = SandboxEnforcement::kFull;

  bool operator==(const ConfinedArgv&) const = default;
};

// The strict reading of `enforcement` and `ungoverned`: partial when either says so.
SandboxEnforcement strict_reading(SandboxEnforcement enforcement,
                                  std::span<const std::string> ungoverned);

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
