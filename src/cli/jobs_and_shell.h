// SPDX-License-Identifier: Apache-2.0
// The subcommands that outlive or take over the terminal: `start` (a background job),
// `job-output`, `job-wait`, `job-list`, `job-kill` and `shell` (an interactive confined bash behind
// a pseudo-terminal of ours). docs/contract.md says what each promises.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "cli/commands.h"

namespace dsh::sandbox::cli {

class JobAndShellCommands {
 public:
  // Adds the six subcommands to `app`.
  explicit JobAndShellCommands(CLI::App& app);
  // The exit status of the one that was parsed; nullopt when none of these was.
  std::optional<int> dispatch() const;

 private:
  Options options_;
  std::string handle_;
  std::string kill_session_;
  double shell_timeout_ = 0;  // shell --timeout SECONDS; 0: not given
  double wait_timeout_ = 0;   // job-wait --timeout SECONDS; 0: no limit
  bool json_ = false;         // job-output, job-wait, job-list --json
  CLI::App* start_ = nullptr;
  CLI::App* output_ = nullptr;
  CLI::App* kill_ = nullptr;
  CLI::App* wait_ = nullptr;
  CLI::App* list_ = nullptr;
  CLI::App* shell_ = nullptr;
};

// `dsh-sandbox start`: prints the job's handle. `job-output`: the job's render (or its JSON
// object), exit status the job's (jobs::job_exit_status). `job-wait`: the same once the job has
// ended or `timeout_seconds` passed (0: no limit). `job-list`: every job of this user, exit 0.
// `job-kill`: ends one job, or every job of a session. `shell`: the confined shell's exit status.
int start_job(const Options& options);
int job_output(const std::string& handle, bool json);
int job_wait(const std::string& handle, double timeout_seconds, bool json);
int job_list(bool json);
int job_kill(const std::string& handle, const std::string& session);
// `timeout_seconds`: 0 for none, else positive and finite (the shell and its tree end after it).
int shell(const Options& options, double timeout_seconds = 0);

}  // namespace dsh::sandbox::cli
