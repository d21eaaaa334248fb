// SPDX-License-Identifier: Apache-2.0
#include "cli/policy_flags.h"

namespace dsh::sandbox::cli {

namespace {

// What only run and confine report on: the backend chosen, and the kernel's evidence channel.
void add_report_flags(CLI::App& command, Options& options) {
  command.add_flag("--verbose", options.verbose, "say on stderr which backend was chosen and why");
  command.add_flag("--no-evidence", options.no_evidence,
                   "no kernel records of refused operations (denials inferred from stderr)");
}

}  // namespace

void add_policy_options(CLI::App& command, Options& options) {
  command.add_option("--mode", options.mode,
                     "read-only | workspace-write | danger-full-access (default: the session's, "
                     "else the config's, else read-only)");
  command.add_option("--workspace", options.workspace, "absolute workspace root (default: cwd)");
  command.add_option("--network", options.network,
                     "inherit | deny | allow:NAME,*.SUFFIX,ADDRESS[/BITS],... (default: deny, no "
                     "network, or the config's networkAllow; deny or allow: with "
                     "danger-full-access is an error; docs/evidence-and-network.md)");
  command.add_option("--network-deny", options.network_deny,
                     "with allow:, destinations refused even when allowed (same grammar)");
  command
      .add_option("--network-resolve", options.network_resolve,
                  "with allow:, NAME=ADDRESS: the proxy dials ADDRESS for NAME (tests, mirrors)")
      ->allow_extra_args(false);
  command.add_option("--config", options.config_path, "JSON config file");
  // One value per flag, each repeatable: a list option would swallow the words that follow it.
  command
      .add_option("--allow-write", options.allow_write,
                  "PATH: an extra writable directory (workspace-write only; repeatable)")
      ->allow_extra_args(false);
  command
      .add_option("--deny-write", options.deny_write,
                  "PATH: read-only inside a writable root (repeatable; !PATH lifts a default)")
      ->allow_extra_args(false);
  command
      .add_option("--deny-read", options.deny_read,
                  "PATH: unreadable in read-only and workspace-write (repeatable; !PATH lifts a "
                  "default)")
      ->allow_extra_args(false);
  command
      .add_option("--allow-cache", options.allow_cache,
                  "NAMES: package caches made writable, e.g. npm,pip,cargo,go (workspace-write "
                  "only; repeatable)")
      ->allow_extra_args(false);
}

void add_bound_options(CLI::App& command, Options& options) {
  command.add_option("--max-processes", options.max_processes,
                     "tasks of the command's tree (default 4096) | unlimited");
  command.add_option("--max-memory", options.max_memory,
                     "memory of the tree, e.g. 2G (default: half of RAM) | unlimited");
}

CLI::App* add_confine_command(CLI::App& app, Options& options) {
  CLI::App* confine = app.add_subcommand("confine", "print the confined argv as JSON; run nothing");
  add_policy_options(*confine, options);
  add_report_flags(*confine, options);
  confine->add_option("--cwd", options.cwd,
                      "absolute directory the argv will run in, given to bwrap as --chdir "
                      "(default: the workspace root, where run runs it)");
  confine->add_flag("--status-channels", options.status_channels,
                    "name the runners' status channels in the argv, exactly as run executes it; "
                    "the spawner must open each descriptor listed in statusChannels");
  confine->add_option("argv", options.argv, "-- ARGV...");
  return confine;
}

CLI::App* add_run_command(CLI::App& app, Options& options) {
  CLI::App* run = app.add_subcommand("run", "run ARGV (or -c COMMAND) confined");
  add_policy_options(*run, options);
  add_report_flags(*run, options);
  run->add_option("-c", options.command, "a bash command line: bash -c COMMAND");
  run->add_option("--timeout", options.timeout_seconds, "seconds (default 120, at most 600)");
  run->add_option("--escalate", options.escalate, "ask | never")
      ->check(CLI::IsMember({"ask", "never"}));
  run->add_option("--format", options.format, "agent: the render a harness hands to a model");
  run->add_option("--session", options.session_path, "JSONL session log");
  run->add_option("--workdir", options.workdir,
                  "where the command runs (default: the workspace root; relative: against it)");
  run->add_flag("--json", options.json, "print one result object");
  run->add_flag("--learn", options.learn,
                "print the narrowest policy that would have allowed what was refused");
  run->add_option("--stdin", options.stdin_mode,
                  "auto (pass stdin through unless it is a terminal) | inherit | close")
      ->check(CLI::IsMember({"auto", "inherit", "close"}));
  add_bound_options(*run, options);
  run->add_flag("--json-lines", options.json_lines,
                "stream JSON lines: started, stdout, stderr, denial, exit");
  // One NAME per flag, repeatable: a list option would swallow the words that follow it.
  run->add_option("--env", options.env_pass, "NAME: pass this variable through the scrub")
      ->allow_extra_args(false);
  run->add_option("--unset-env", options.env_unset, "NAME: remove this variable")
      ->allow_extra_args(false);
  run->add_option("argv", options.argv, "-- ARGV...");
  return run;
}

}  // namespace dsh::sandbox::cli
