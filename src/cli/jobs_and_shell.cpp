// SPDX-License-Identifier: Apache-2.0
#include "cli/jobs_and_shell.h"

#include <cmath>

#include <fmt/format.h>

#include "cli/policy_flags.h"

namespace dsh::sandbox::cli {

namespace {

// job-wait --timeout: poll(2) takes an int of milliseconds; a day is far below its bound.
constexpr double kMaxWaitSeconds = 24.0 * 60 * 60;

}  // namespace

JobAndShellCommands::JobAndShellCommands(CLI::App& app) {
  start_ = app.add_subcommand(
      "start", "start ARGV (or -c COMMAND) confined in the background; print its handle");
  add_policy_options(*start_, options_);
  start_->add_option("-c", options_.command, "a bash command line: bash -c COMMAND");
  start_->add_option("--session", options_.session_path,
                     "JSONL session log; the job ends when the session does (its log removed, "
                     "or job-kill --session)");
  start_->add_option("--workdir", options_.workdir,
                     "where the command runs (default: the workspace root; relative: against it)");
  add_bound_options(*start_, options_);
  start_->add_option("argv", options_.argv, "-- ARGV...");
  output_ = app.add_subcommand(
      "job-output", "print a background job's output and status; exit with the job's status");
  output_->add_option("handle", handle_, "the handle start printed")->required();
  output_->add_flag("--json", json_, "print one JSON object");
  wait_ = app.add_subcommand("job-wait",
                             "wait until a background job ends; print it as job-output does and "
                             "exit with its status");
  wait_->add_option("handle", handle_, "the handle start printed")->required();
  wait_->add_option("--timeout", wait_timeout_,
                    "seconds to wait at most; the job still running then: exit 75");
  wait_->add_flag("--json", json_, "print one JSON object");
  list_ =
      app.add_subcommand("job-list", "list this user's background jobs: handle, state, command");
  list_->add_flag("--json", json_, "print one JSON object");
  kill_ = app.add_subcommand("job-kill",
                             "end a background job (or every job of a session) and its whole "
                             "command tree");
  kill_->add_option("handle", handle_, "the handle start printed");
  kill_->add_option("--session", kill_session_, "end every job started with this session log");
  shell_ = app.add_subcommand("shell", "an interactive confined bash on this terminal");
  add_policy_options(*shell_, options_);
  shell_->add_option("--session", options_.session_path, "JSONL session log");
  shell_->add_option("--workdir", options_.workdir,
                     "where the shell starts (default: the workspace root; relative: against it)");
  add_bound_options(*shell_, options_);
  shell_->add_option("--timeout", shell_timeout_,
                     "seconds: the shell and everything it started are ended after it (exit 124); "
                     "default: no bound");
}

std::optional<int> JobAndShellCommands::dispatch() const {
  if (start_->parsed()) return start_job(options_);
  if (output_->parsed()) return job_output(handle_, json_);
  if (wait_->parsed()) {
    if (wait_->count("--timeout") > 0 && !(wait_timeout_ > 0 && wait_timeout_ <= kMaxWaitSeconds)) {
      return fail(fmt::format(
          "job-wait: --timeout must be a positive number of seconds, at most {}", kMaxWaitSeconds));
    }
    return job_wait(handle_, wait_timeout_, json_);
  }
  if (list_->parsed()) return job_list(json_);
  if (kill_->parsed()) return job_kill(handle_, kill_session_);
  if (shell_->parsed()) {
    if (shell_->count("--timeout") > 0 && !(shell_timeout_ > 0 && std::isfinite(shell_timeout_))) {
      return fail("shell: --timeout must be a positive number of seconds");
    }
    return shell(options_, shell_timeout_);
  }
  return std::nullopt;
}

}  // namespace dsh::sandbox::cli
