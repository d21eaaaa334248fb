// SPDX-License-Identifier: Apache-2.0
// dsh-sandbox: the CLI of the sandbox (docs/contract.md says what each command promises).
#include <CLI/CLI.hpp>

#include <exception>

#include "cli/commands.h"
#include "cli/habits.h"
#include "cli/jobs_and_shell.h"
#include "cli/policy_flags.h"

namespace {

using dsh::sandbox::cli::add_bound_options;
using dsh::sandbox::cli::add_policy_options;
using dsh::sandbox::cli::Options;

// What only run and confine report on: the backend chosen, and the kernel's evidence channel.
void add_report_flags(CLI::App& command, Options& options) {
  command.add_flag("--verbose", options.verbose, "say on stderr which backend was chosen and why");
  command.add_flag("--no-evidence", options.no_evidence,
                   "no kernel records of refused operations (denials inferred from stderr)");
}

int run(int argc, char** argv) {
  Options options;
  CLI::App app{"dsh-sandbox: run commands you did not write, confined"};
  app.footer(dsh::sandbox::cli::help_footer());
  app.set_version_flag("--version", dsh::sandbox::cli::version_text());
  app.require_subcommand(1);
  CLI::App* confine = app.add_subcommand("confine", "print the confined argv as JSON; run nothing");
  add_policy_options(*confine, options);
  add_report_flags(*confine, options);
  confine->add_option("--cwd", options.cwd,
                      "absolute directory the argv will run in, given to bwrap as --chdir "
                      "(default: the workspace root, where run runs it)");
  confine->add_flag("--status-channels", options.status_channels,
                    "name the runners' status channels in the argv, exactly as run executes it; "
                    "the spawner must open each descriptor listed in statusChannels");
  confine->add_option("argv", options.argv, "-- ARGV...")->required();
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
  CLI::App* probe = app.add_subcommand("probe", "report each backend of this host's chain");
  probe->add_option("--config", options.config_path, "JSON config file");
  probe->add_flag("--json", options.json, "print one JSON object");
  const dsh::sandbox::cli::JobAndShellCommands jobs_and_shell(app);
  CLI::App* schema =
      app.add_subcommand("tool-schema", "print the bash tool definition a harness hands a model");
  schema->add_option("--mode", options.mode, "the session's mode (default: the config's)");
  schema->add_option("--workspace", options.workspace, "the policy's workspace root");
  schema->add_option("--config", options.config_path, "JSON config file");
  schema->add_option("--network", options.network,
                     "the session's network: inherit | deny | allow:LIST (default: deny, or the "
                     "config's networkAllow)");
  bool plain_executor = false;
  schema->add_flag("--no-sandbox", plain_executor, "the composition mounts no sandboxing executor");
  std::string workdir;
  schema->add_option("--workdir", workdir,
                     "a model workdir to resolve (relative: against the root)");
  const std::vector<std::string> args(argv + 1, argv + argc);
  dsh::sandbox::cli::set_json_errors(dsh::sandbox::cli::wants_json(args));
  if (const auto unknown = dsh::sandbox::cli::unknown_flag(app, args)) {
    return dsh::sandbox::cli::fail(*unknown + "; see dsh-sandbox --help", "USAGE");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);  // --help, --version
    return dsh::sandbox::cli::fail(std::string(error.what()) + "; see dsh-sandbox --help", "USAGE");
  }
  if (const auto status = jobs_and_shell.dispatch()) return *status;
  if (run->parsed()) return dsh::sandbox::cli::run(options);
  if (schema->parsed()) return dsh::sandbox::cli::tool_schema(options, plain_executor, workdir);
  return confine->parsed() ? dsh::sandbox::cli::confine(options)
                           : dsh::sandbox::cli::probe(options);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& error) {
    // Fail closed on anything unexpected: nothing was printed for a caller to run.
    return dsh::sandbox::cli::fail(error.what());
  }
}
