// SPDX-License-Identifier: Apache-2.0
#include "cli/jobs_and_shell.h"

namespace dsh::sandbox::cli {

namespace {

void add_policy_options(CLI::App& command, Options& options) {
  command.add_option("--mode", options.mode, "read-only | workspace-write | danger-full-access");
  command.add_option("--workspace", options.workspace, "absolute workspace root (default: cwd)");
  command.add_option("--network", options.network, "inherit | deny");
  command.add_option("--config", options.config_path, "JSON config file");
}

}  // namespace

JobAndShellCommands::JobAndShellCommands(CLI::App& app) {
  start_ = app.add_subcommand(
      "start", "start ARGV (or -c COMMAND) confined in the background; print its handle");
  add_policy_options(*start_, options_);
  start_->add_option("-c", options_.command, "a bash command line: bash -c COMMAND");
  start_->add_option("--session", options_.session_path,
                     "JSONL session log; the job ends when the session does (its log removed, "
                     "or job-kill --session)");
  start_->add_option("--max-processes", options_.max_processes,
                     "tasks of the command's tree (default 4096) | unlimited");
  start_->add_option("--max-memory", options_.max_memory,
                     "memory of the tree, e.g. 2G (default: half of RAM) | unlimited");
  start_->add_option("argv", options_.argv, "-- ARGV...");
  output_ = app.add_subcommand("job-output", "print a background job's output and status");
  output_->add_option("handle", handle_, "the handle start printed")->required();
  kill_ = app.add_subcommand("job-kill",
                             "end a background job (or every job of a session) and its whole "
                             "command tree");
  kill_->add_option("handle", handle_, "the handle start printed");
  kill_->add_option("--session", kill_session_, "end every job started with this session log");
  shell_ = app.add_subcommand("shell", "an interactive confined bash on this terminal");
  add_policy_options(*shell_, options_);
  shell_->add_option("--session", options_.session_path, "JSONL session log");
}

std::optional<int> JobAndShellCommands::dispatch() const {
  if (start_->parsed()) return start_job(options_);
  if (output_->parsed()) return job_output(handle_);
  if (kill_->parsed()) return job_kill(handle_, kill_session_);
  if (shell_->parsed()) return shell(options_);
  return std::nullopt;
}

}  // namespace dsh::sandbox::cli
