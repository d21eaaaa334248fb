// SPDX-License-Identifier: Apache-2.0
// The command line of dsh-sandbox, built from the table in man/cli.json (option_table.h): the
// subcommands, their options bound to Options, and the subcommand each dispatches to. One
// builder for main and for the test that holds the parser and the table to each other.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "cli/options.h"

namespace dsh::sandbox::cli {

class CommandLine {
 public:
  // Every subcommand with every option (--help, the table test).
  CommandLine();
  // For `args` (the words after the program name): when they name a subcommand, only it gets
  // its options, since building every subcommand's option tree would cost about a fifth of the
  // instructions of a whole `run`; otherwise every one (for --help, and the usage errors).
  explicit CommandLine(const std::vector<std::string>& args);
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  CLI::App& app() { return app_; }
  const Options& options() const { return options_; }
  // After a successful parse: runs the subcommand that was parsed, returns its exit status.
  int dispatch();

 private:
  void add_command(std::size_t index);

  Options options_;
  CLI::App app_{"dsh-sandbox: run commands you did not write, confined", "dsh-sandbox"};
};

}  // namespace dsh::sandbox::cli
