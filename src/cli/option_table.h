// SPDX-License-Identifier: Apache-2.0
// The parser's option list, generated from man/cli.json (man/generate_parser.py writes the rows
// into the build tree), and the one place each row is bound to the field of Options it fills.
// The table also feeds the man page, the completions and the bindings' option modules, so the
// parser cannot drift from any of them.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <span>
#include <string_view>

#include "cli/options.h"

namespace dsh::sandbox::cli {

struct TableCommand {
  std::string_view name;
  std::string_view help;
  std::string_view positional;  // "argv", "handle", or empty: none
  std::string_view positional_help;
  bool positional_required;
};

struct TableOption {
  std::string_view name;    // "--mode", "-c"
  std::string_view arg;     // the argument word ("MODE"); empty: a flag
  std::string_view values;  // the valid values, space-separated; empty: any
  std::string_view help;    // with its default
  unsigned commands;        // bit i: kTableCommands[i] takes it
  bool repeatable;          // one value per flag, the flag given again for more
};

std::span<const TableCommand> table_commands();
std::span<const TableOption> table_options();

// Adds to `command` (kTableCommands[index]) every option the table gives it, and its positional,
// each bound to the field of `options` it fills. std::logic_error for a row no field is bound to.
void add_table_options(CLI::App& command, std::size_t index, Options& options);

}  // namespace dsh::sandbox::cli
