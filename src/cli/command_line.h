// SPDX-License-Identifier: Apache-2.0
// The whole command line of dsh-sandbox: every subcommand with every option, bound to what
// dispatch() runs. One builder for main and for the test that holds the parser and the table in
// man/cli.json (the man page, the completions and the bindings' options) to each other.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/jobs_and_shell.h"

namespace dsh::sandbox::cli {

class CommandLine {
 public:
  CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  CLI::App& app() { return app_; }
  // After a successful parse: runs the subcommand that was parsed, returns its exit status.
  int dispatch() const;

 private:
  Options options_;
  CLI::App app_{"dsh-sandbox: run commands you did not write, confined", "dsh-sandbox"};
  CLI::App* confine_ = nullptr;
  CLI::App* run_ = nullptr;
  CLI::App* schema_ = nullptr;
  std::optional<JobAndShellCommands> jobs_and_shell_;
  bool plain_executor_ = false;  // tool-schema --no-sandbox
  std::string schema_workdir_;   // tool-schema --workdir
};

}  // namespace dsh::sandbox::cli
