// SPDX-License-Identifier: Apache-2.0
#include "cli/command_line.h"

#include <array>
#include <stdexcept>
#include <string_view>

#include "cli/commands.h"
#include "cli/habits.h"
#include "cli/option_table.h"

namespace dsh::sandbox::cli {

namespace {

struct Handler {
  std::string_view command;
  int (*run)(const Options&);
};

constexpr auto kHandlers = std::to_array<Handler>({
    {"run", run},
    {"confine", confine},
    {"probe", probe},
    {"start", start_job},
    {"job-output", job_output},
    {"job-wait", job_wait},
    {"job-list", job_list},
    {"job-kill", job_kill},
    {"shell", shell},
    {"tool-schema", tool_schema},
    {"config", config},
});

const Handler& handler_of(std::string_view command) {
  for (const Handler& handler : kHandlers) {
    if (handler.command == command) return handler;
  }
  throw std::logic_error("man/cli.json names the subcommand " + std::string(command) +
                         ", which src/cli/command_line.cpp dispatches to nothing");
}

// The subcommand `args` name: the first word before `--` that is no flag (there are no options
// before the subcommand but --help and --version).
std::string_view named_command(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--") break;
    if (!arg.starts_with('-')) return arg;
  }
  return {};
}

}  // namespace

CommandLine::CommandLine() : CommandLine(std::vector<std::string>{}) {}

CommandLine::CommandLine(const std::vector<std::string>& args) {
  app_.footer(help_footer());
  app_.set_version_flag("--version", version_text());
  app_.require_subcommand(1);
  const std::span<const TableCommand> commands = table_commands();
  const std::string_view named = named_command(args);
  for (std::size_t i = 0; i < commands.size(); ++i) {
    if (commands[i].name == named) {
      add_command(i);
      return;
    }
  }
  for (std::size_t i = 0; i < commands.size(); ++i) add_command(i);
}

void CommandLine::add_command(std::size_t index) {
  const TableCommand& command = table_commands()[index];
  (void)handler_of(command.name);
  CLI::App* sub = app_.add_subcommand(std::string(command.name), std::string(command.help));
  add_table_options(*sub, index, options_);
}

int CommandLine::dispatch() {
  for (const CLI::App* sub : app_.get_subcommands()) {
    const CLI::Option* timeout = sub->get_option_no_throw("--timeout");
    options_.timeout_given = timeout != nullptr && timeout->count() > 0;
    return handler_of(sub->get_name()).run(options_);
  }
  throw std::logic_error("dispatch: no subcommand was parsed");
}

}  // namespace dsh::sandbox::cli
