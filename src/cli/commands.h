// SPDX-License-Identifier: Apache-2.0
// The `dsh-sandbox` subcommands. Each returns the process exit status; every failure is one
// "dsh-sandbox: " line on stderr and exit 125, and nothing runs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace dsh::sandbox::cli {

inline constexpr int kFailureExit = 125;

struct Options {
  std::string mode;          // empty: the session's mode, else the config's, else read-only
  std::string workspace;     // empty: the working directory
  std::string network;       // empty: not given (inherit, unless the config names an allow-list)
  std::string network_deny;  // --network-deny LIST (with --network allow:)
  std::vector<std::string> network_resolve;  // --network-resolve NAME=ADDRESS, repeatable
  std::string config_path;
  // --allow-write, --deny-write, --deny-read (repeatable paths), --allow-cache (names, commas)
  std::vector<std::string> allow_write;
  std::vector<std::string> deny_write;
  std::vector<std::string> deny_read;
  std::vector<std::string> allow_cache;
  bool json = false;
  std::vector<std::string> argv;
  // confine only
  std::string cwd;               // where the printed argv will run; empty: the working directory
  bool status_channels = false;  // name the runners' status channels, as run does
  // run only
  std::string command;           // -c COMMAND: the bash consumer
  double timeout_seconds = 120;  // at most 600
  std::string escalate = "never";
  bool learn = false;  // run --learn: print the narrowest policy that would have allowed it
  std::string format;  // "agent": the tool render a harness hands to a model
  std::string session_path;
  std::string workdir;        // run, start: --workdir; empty: the policy root; relative: against it
  std::string stdin_mode;     // auto | inherit | close; empty: not given (auto)
  std::string max_processes;  // a count, or "unlimited"; empty: the default bound
  std::string max_memory;     // a size (K, M, G, T suffixes), or "unlimited"
  std::vector<std::string> env_pass;   // --env NAME: kept through the environment scrub
  std::vector<std::string> env_unset;  // --unset-env NAME: removed from the command's environment
  bool json_lines = false;             // --json-lines: the streaming form
  bool verbose = false;                // --verbose: the chosen backend and why, on stderr
  bool no_evidence = false;            // --no-evidence: no denial records (run, confine)
};

// Prints the ConfinedArgv as JSON (the reference's field names); runs nothing.
int confine(const Options& options);
// Runs ARGV (or bash -c COMMAND) confined, streams its output, exits with its status.
int run(const Options& options);
// Reports each backend of this platform's chain: usable or not, enforcement, why, how to fix.
int probe(const Options& options);

// One "dsh-sandbox: <message>" line on stderr; returns kFailureExit. When the call asked for
// JSON, the error object (code: the seam's error code, or USAGE) is printed on stdout too.
int fail(const std::string& message, std::string_view code = "SANDBOX_INVALID_INPUT");

// Prints the bash tool definition (schema, texts, resolved workdir) as JSON; runs nothing.
// `plain_executor`: the composition mounts no sandboxing executor.
int tool_schema(const Options& options, bool plain_executor, const std::string& workdir);

}  // namespace dsh::sandbox::cli
