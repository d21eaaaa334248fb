// SPDX-License-Identifier: Apache-2.0
#include "cli/command_line.h"

#include "cli/habits.h"
#include "cli/policy_flags.h"

namespace dsh::sandbox::cli {

namespace {

void add_probe_command(CLI::App& app, Options& options) {
  CLI::App* probe = app.add_subcommand("probe", "report each backend of this host's chain");
  probe->add_option("--config", options.config_path, "JSON config file");
  probe->add_flag("--json", options.json, "print one JSON object");
}

}  // namespace

CommandLine::CommandLine() {
  app_.footer(help_footer());
  app_.set_version_flag("--version", version_text());
  app_.require_subcommand(1);
  confine_ = add_confine_command(app_, options_);
  run_ = add_run_command(app_, options_);
  add_probe_command(app_, options_);
  jobs_and_shell_.emplace(app_);
  schema_ =
      app_.add_subcommand("tool-schema", "print the bash tool definition a harness hands a model");
  schema_->add_option("--mode", options_.mode, "the session's mode (default: the config's)");
  schema_->add_option("--workspace", options_.workspace, "the policy's workspace root");
  schema_->add_option("--config", options_.config_path, "JSON config file");
  schema_->add_option("--network", options_.network,
                      "the session's network: inherit | deny | allow:LIST (default: deny, or the "
                      "config's networkAllow)");
  schema_->add_flag("--no-sandbox", plain_executor_,
                    "the composition mounts no sandboxing executor");
  schema_->add_option("--workdir", schema_workdir_,
                      "a model workdir to resolve (relative: against the root)");
}

int CommandLine::dispatch() const {
  if (const auto status = jobs_and_shell_->dispatch()) return *status;
  if (run_->parsed()) return run(options_);
  if (schema_->parsed()) return tool_schema(options_, plain_executor_, schema_workdir_);
  return confine_->parsed() ? confine(options_) : probe(options_);
}

}  // namespace dsh::sandbox::cli
