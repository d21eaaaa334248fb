// SPDX-License-Identifier: Apache-2.0
// dsh-sandbox: the CLI of the sandbox (docs/contract.md says what each command promises).
#include <CLI/CLI.hpp>

#include <exception>

#include "cli/commands.h"
#include "cli/habits.h"
#include "cli/jobs_and_shell.h"
#include "cli/policy_flags.h"

namespace {

using dsh::sandbox::cli::Options;

int run(int argc, char** argv) {
  Options options;
  CLI::App app{"dsh-sandbox: run commands you did not write, confined", "dsh-sandbox"};
  app.footer(dsh::sandbox::cli::help_footer());
  app.set_version_flag("--version", dsh::sandbox::cli::version_text());
  app.require_subcommand(1);
  CLI::App* confine = dsh::sandbox::cli::add_confine_command(app, options);
  CLI::App* run = dsh::sandbox::cli::add_run_command(app, options);
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
    dsh::sandbox::cli::parse_command_line(app, args);
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
