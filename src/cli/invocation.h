// SPDX-License-Identifier: Apache-2.0
// The typed form of a `dsh-sandbox` call: the command-line strings checked and parsed once,
// into enums and numbers, before anything touches the filesystem. The names go back to strings
// only at a JSON or config boundary.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/options.h"
#include "dsh/sandbox/modes.h"
#include "dsh/sandbox/result.h"
#include "exec/exec.h"

namespace dsh::sandbox::cli {

// --mode and --network.
struct PolicyOptions {
  std::optional<SandboxMode> mode;  // the approved mode for this call; nullopt: the default
  NetworkPolicy network = NetworkPolicy::kInherit;
  NetworkAllowList network_allow;  // --network allow:..., --network-deny, --network-resolve
  bool network_given = false;      // --network was on the command line (policy/call_policy.h)
};

enum class Escalation { kNever, kAsk };
enum class StdinMode { kAuto, kInherit, kClose };

// `run`, checked: what to run, under which options, reported how.
struct RunInvocation {
  std::vector<std::string> argv;  // {"bash", "-c", COMMAND}, or ARGV as given
  PolicyOptions policy;
  std::string workspace;  // --workspace as spelled; empty: the working directory
  std::string config_path;
  std::string session_path;
  std::string workdir;  // --workdir as given; empty: none (the policy root)
  bool json = false;
  bool agent = false;  // --format agent
  Escalation escalate = Escalation::kNever;
  StdinMode stdin_mode = StdinMode::kAuto;
  bool stdin_given = false;  // --stdin was on the command line
  // --timeout: the deadline in ms; nullopt: none (`--timeout none`, and start without --timeout).
  std::optional<double> timeout_ms = exec::kDefaultTimeoutMs;
  exec::ResourceBounds bounds;
  bool learn = false;       // never runs wider itself; prints what would have allowed the refusals
  bool json_lines = false;  // --json-lines
  bool verbose = false;     // --verbose
  bool evidence = true;     // false: --no-evidence, classification from stderr only
  std::vector<std::string> env_pass;   // --env NAME
  std::vector<std::string> env_unset;  // --unset-env NAME
};

// The mode and network names, parsed; the error names the valid ones.
Result<PolicyOptions> policy_options(const Options& options);

// Every option of `run`, checked in order: --format, the command, --mode, --network,
// --max-processes, --max-memory, --escalate, --stdin. The first error is the one reported.
Result<RunInvocation> run_invocation(const Options& options);

// --timeout's DURATION: seconds ("90", "1.5"), or a number with s, m, h or d ("30m", "2h"),
// more than 0 and at most exec::kMaxDeadlineMs; "none": nullopt, no deadline.
Result<std::optional<double>> parse_duration_ms(std::string_view text);

// "unlimited" (nullopt), or a positive count or size: digits with an optional K, M, G or T
// (powers of 1024) for sizes; empty: `fallback`.
Result<std::optional<std::uint64_t>> parse_bound(const std::string& text, const std::string& option,
                                                 bool size, std::optional<std::uint64_t> fallback);

}  // namespace dsh::sandbox::cli
