// SPDX-License-Identifier: Apache-2.0
#include "cli/option_table.h"

#include <array>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace dsh::sandbox::cli {

namespace {

#include "cli/option_table.inc"

using Field = std::variant<std::string Options::*, std::vector<std::string> Options::*,
                           bool Options::*, double Options::*>;

// A row's field: by its name, for every command, or for the one command named.
struct Binding {
  std::string_view name;
  std::string_view command;  // empty: every command that takes the option
  Field field;
};

constexpr auto kBindings = std::to_array<Binding>({
    {"--mode", "", &Options::mode},
    {"--workspace", "", &Options::workspace},
    {"--network", "", &Options::network},
    {"--network-deny", "", &Options::network_deny},
    {"--network-resolve", "", &Options::network_resolve},
    {"--allow-unix-socket", "", &Options::allow_unix_socket},
    {"--config", "", &Options::config_path},
    {"--allow-write", "", &Options::allow_write},
    {"--deny-write", "", &Options::deny_write},
    {"--deny-read", "", &Options::deny_read},
    {"--allow-cache", "", &Options::allow_cache},
    {"--cwd", "", &Options::cwd},
    {"--status-channels", "", &Options::status_channels},
    {"-c", "", &Options::command},
    {"--timeout", "run", &Options::timeout},
    {"--timeout", "start", &Options::timeout},
    {"--timeout", "shell", &Options::shell_timeout_seconds},
    {"--timeout", "job-wait", &Options::wait_timeout_seconds},
    {"--json", "", &Options::json},
    {"--json-lines", "", &Options::json_lines},
    {"--format", "", &Options::format},
    {"--escalate", "", &Options::escalate},
    {"--session", "", &Options::session_path},
    {"--workdir", "", &Options::workdir},
    {"--no-sandbox", "", &Options::no_sandbox},
    {"--stdin", "", &Options::stdin_mode},
    {"--max-processes", "", &Options::max_processes},
    {"--max-memory", "", &Options::max_memory},
    {"--env", "", &Options::env_pass},
    {"--unset-env", "", &Options::env_unset},
    {"--verbose", "", &Options::verbose},
    {"--learn", "", &Options::learn},
    {"--no-evidence", "", &Options::no_evidence},
    {"--die-with-parent", "", &Options::die_with_parent},
    {"argv", "", &Options::argv},
    {"handle", "", &Options::handle},
});

// The options whose values CLI11 itself holds to the table's list; the others' values are
// checked by invocation.cpp, whose messages name the valid ones in the project's words.
constexpr std::array<std::string_view, 2> kCheckedValues = {"--escalate", "--stdin"};

Field field_of(std::string_view name, std::string_view command) {
  for (const Binding& binding : kBindings) {
    if (binding.name == name && (binding.command.empty() || binding.command == command)) {
      return binding.field;
    }
  }
  throw std::logic_error("man/cli.json names " + std::string(command) + " " + std::string(name) +
                         ", which src/cli/option_table.cpp binds to no field");
}

std::vector<std::string> split_values(std::string_view values) {
  std::vector<std::string> out;
  while (!values.empty()) {
    const std::size_t end = values.find(' ');
    out.emplace_back(values.substr(0, end));
    values = end == std::string_view::npos ? std::string_view() : values.substr(end + 1);
  }
  return out;
}

CLI::Option* add_row(CLI::App& app, const TableOption& row, std::string_view command,
                     Options& options) {
  const std::string name(row.name);
  const std::string help(row.help);
  const Field field = field_of(row.name, command);
  if (row.arg.empty()) return app.add_flag(name, options.*std::get<bool Options::*>(field), help);
  if (const auto* number = std::get_if<double Options::*>(&field)) {
    return app.add_option(name, options.**number, help);
  }
  if (row.repeatable) {
    // One value per flag: a list option would swallow the words that follow it.
    return app
        .add_option(name, options.*std::get<std::vector<std::string> Options::*>(field), help)
        ->allow_extra_args(false);
  }
  CLI::Option* option =
      app.add_option(name, options.*std::get<std::string Options::*>(field), help);
  for (const std::string_view checked : kCheckedValues) {
    if (checked == row.name) option->check(CLI::IsMember(split_values(row.values)));
  }
  return option;
}

}  // namespace

std::span<const TableCommand> table_commands() { return kTableCommands; }
std::span<const TableOption> table_options() { return kTableOptions; }

void add_table_options(CLI::App& command, std::size_t index, Options& options) {
  const TableCommand& table = kTableCommands[index];
  for (const TableOption& row : kTableOptions) {
    if ((row.commands & (1U << index)) != 0) add_row(command, row, table.name, options);
  }
  if (table.positional.empty()) return;
  const std::string name(table.positional);
  const Field field = field_of(table.positional, table.name);
  CLI::Option* positional =
      name == "argv"
          ? command.add_option(name, options.*std::get<std::vector<std::string> Options::*>(field),
                               std::string(table.positional_help))
          : command.add_option(name, options.*std::get<std::string Options::*>(field),
                               std::string(table.positional_help));
  if (table.positional_required) positional->required();
}

}  // namespace dsh::sandbox::cli
