// SPDX-License-Identifier: Apache-2.0
// The flags of every `dsh-sandbox` subcommand as parsed: the fields the rows of man/cli.json fill
// (option_table.cpp binds each row to its field). Each subcommand reads its own; invocation.h
// checks and types them.
#pragma once

#include <string>
#include <vector>

namespace dsh::sandbox::cli {

// Every failure is one "dsh-sandbox: " line on stderr and this exit status, and nothing runs.
inline constexpr int kFailureExit = 125;

struct Options {
  // Numbers. shell's and job-wait's --timeout: 0 when not given.
  double shell_timeout_seconds = 0;
  double wait_timeout_seconds = 0;
  // Repeatable, one value per flag: --network-resolve NAME=ADDRESS, the path rules
  // (--allow-write, --deny-write, --deny-read paths; --allow-cache names, commas), --env NAME
  // (kept through the environment scrub), --unset-env NAME, and the command after `--`.
  std::vector<std::string> network_resolve;
  std::vector<std::string> allow_unix_socket;  // --allow-unix-socket PATH
  std::vector<std::string> allow_write;
  std::vector<std::string> deny_write;
  std::vector<std::string> deny_read;
  std::vector<std::string> allow_cache;
  std::vector<std::string> env_pass;
  std::vector<std::string> env_unset;
  std::vector<std::string> argv;
  // Values; empty: not given.
  std::string mode;          // the session's mode, else the config's, else read-only
  std::string workspace;     // the working directory
  std::string network;       // deny (inherit unconfined), or the config's allow-list
  std::string network_deny;  // --network-deny LIST (with --network allow:)
  std::string config_path;
  std::string cwd;      // confine: where the printed argv will run
  std::string command;  // run, start: -c COMMAND, the bash consumer
  std::string escalate = "never";
  std::string format;         // "agent": the tool render a harness hands to a model
  std::string session_path;   // run, start, shell; job-kill --session: the jobs to end
  std::string workdir;        // run, start, shell, tool-schema: --workdir
  std::string stdin_mode;     // auto | inherit | close
  std::string max_processes;  // a count, or "unlimited"; empty: the default bound
  std::string max_memory;     // a size (K, M, G, T suffixes), or "unlimited"
  std::string handle;         // job-output, job-wait, job-kill: the handle start printed
  std::string timeout;        // run, start: a duration or none; empty: run's 120 s, start's none
  // Flags.
  bool json = false;
  bool json_lines = false;       // run --json-lines: the streaming form
  bool status_channels = false;  // confine: name the runners' status channels, as run does
  bool learn = false;            // run: print the narrowest policy that would have allowed it
  bool verbose = false;          // the chosen backend and why, on stderr
  bool no_evidence = false;      // no denial records (run, confine)
  bool die_with_parent = false;  // run: SIGTERM to itself when its parent dies
  bool no_sandbox = false;       // tool-schema: the composition mounts no sandboxing executor
  bool timeout_given = false;    // the subcommand's --timeout was on the command line
};

}  // namespace dsh::sandbox::cli
