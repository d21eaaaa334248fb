// SPDX-License-Identifier: Apache-2.0
// The subcommands that outlive or take over the terminal: `start` (a background job),
// `job-output`, `job-kill` and `shell` (an interactive confined bash behind a pseudo-terminal of
// ours). docs/jobs-and-shell.md says what each promises.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "cli/commands.h"

namespace dsh::sandbox::cli {

class JobAndShellCommands {
 public:
  // Adds the four subcommands to `app`.
  explicit JobAndShellCommands(CLI::App& app);
  // The exit status of the one that was parsed; nullopt when none of these was.
  std::optional<int> dispatch() const;

 private:
  Options options_;
  std::string handle_;
  std::string kill_session_;
  CLI::App* start_ = nullptr;
  CLI::App* output_ = nullptr;
  CLI::App* kill_ = nullptr;
  CLI::App* shell_ = nullptr;
};

// `dsh-sandbox start`: prints the job's handle. `job-output`: the job's render. `job-kill`: ends
// one job, or every job of a session. `shell`: the confined shell's exit status.
int start_job(const Options& options);
int job_output(const std::string& handle);
int job_kill(const std::string& handle, const std::string& session);
int shell(const Options& options);

}  // namespace dsh::sandbox::cli
