// SPDX-License-Identifier: Apache-2.0
// The parser and man/cli.json, held to each other both ways: every subcommand and every option
// CLI11 registers for it (the very builder main() runs, cli/command_line.h, which registers the
// rows man/generate_parser.py generates from the table) is in the table with that subcommand in
// its `commands`, every option the table gives a subcommand is one the parser takes, with the
// kind of value the table says, and a call builds only the subcommand it names, with the same
// options. The table feeds the man page, the completions and the bindings' option modules
// (man/generate.py, man/generate_bindings.py), so none of them can name a flag the CLI lacks or
// miss one it has.
#include <gtest/gtest.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cli/command_line.h"
#include "cli/habits.h"
#include "dsh/sandbox/policy.h"

namespace dsh::sandbox::cli {
namespace {

using Pairs = std::set<std::pair<std::string, std::string>>;  // {subcommand, flag}

nlohmann::json cli_table() {
  std::ifstream in(DSH_CLI_TABLE);
  return nlohmann::json::parse(in);
}

// "--long" when the option has a long name, else "-s"; the help flag is CLI11's own.
std::string flag_name(const CLI::Option& option) {
  const auto& longs = option.get_lnames();
  return longs.empty() ? "-" + option.get_snames().front() : "--" + longs.front();
}

Pairs parser_options(CommandLine& command_line, std::set<std::string>& commands) {
  Pairs pairs;
  for (const CLI::App* sub : command_line.app().get_subcommands({})) {
    commands.insert(sub->get_name());
    for (const CLI::Option* option : sub->get_options()) {
      if (option->get_positional() || flag_name(*option) == "--help") continue;
      pairs.emplace(sub->get_name(), flag_name(*option));
    }
  }
  return pairs;
}

Pairs table_options(const nlohmann::json& page, std::set<std::string>& commands) {
  for (const auto& command : page.at("commands")) commands.insert(command.at("name"));
  Pairs pairs;
  for (const auto& option : page.at("options")) {
    for (const auto& command : option.at("commands")) {
      pairs.emplace(command.get<std::string>(), option.at("name").get<std::string>());
    }
  }
  return pairs;
}

std::string missing_from(const Pairs& have, const Pairs& other) {
  std::string missing;
  for (const auto& [command, flag] : have) {
    if (!other.contains({command, flag})) missing += " " + command + " " + flag + ";";
  }
  return missing;
}

TEST(CliTable, TheParserAndTheTableNameTheSameSubcommandsAndOptions) {
  CommandLine command_line;
  std::set<std::string> parsed_commands;
  std::set<std::string> table_commands;
  const Pairs parsed = parser_options(command_line, parsed_commands);
  const Pairs table = table_options(cli_table().at("dsh-sandbox"), table_commands);
  EXPECT_EQ(parsed_commands, table_commands);
  // Sanity: the walk saw the policy options of every confining subcommand.
  for (const char* command : {"run", "confine", "start", "shell"}) {
    EXPECT_TRUE(parsed.contains({command, "--deny-read"})) << command;
  }
  EXPECT_EQ(missing_from(parsed, table), "") << "registered by the parser, not in man/cli.json";
  EXPECT_EQ(missing_from(table, parsed), "") << "in man/cli.json, not taken by the parser";
}

TEST(CliTable, EveryBindingOptionIsOneTheParserTakes) {
  CommandLine command_line;
  std::set<std::string> commands;
  const Pairs parsed = parser_options(command_line, commands);
  int bound = 0;
  const nlohmann::json table = cli_table();
  for (const auto& option : table.at("dsh-sandbox").at("options")) {
    if (!option.contains("binding")) continue;
    ++bound;
    const bool repeatable = option.value("repeatable", false);
    for (const auto& command : option.at("commands")) {
      const std::string flag = option.at("name");
      SCOPED_TRACE(command.get<std::string>() + " " + flag);
      ASSERT_TRUE(parsed.contains({command.get<std::string>(), flag}));
      const CLI::Option* registered =
          command_line.app().get_subcommand(command.get<std::string>())->get_option(flag);
      // A repeatable option of the table is a vector in the parser, and only those are.
      EXPECT_EQ(registered->get_items_expected_max() > 1, repeatable);
      // A flag of the table takes no value in the parser; an option with an argument takes one.
      EXPECT_EQ(registered->get_items_expected_max() == 0, !option.contains("arg"));
    }
  }
  EXPECT_GT(bound, 15);
}

// Every flag of `command` with whether it takes a value and how many.
std::set<std::pair<std::string, int>> flags_of(const CLI::App& command) {
  std::set<std::pair<std::string, int>> flags;
  for (const CLI::Option* option : command.get_options()) {
    const std::string name = option->get_positional() ? option->get_name() : flag_name(*option);
    flags.emplace(name, option->get_items_expected_max());
  }
  return flags;
}

TEST(CliTable, ACallBuildsOnlyTheSubcommandItNamesWithTheSameOptions) {
  CommandLine all;
  const std::vector<CLI::App*> every = all.app().get_subcommands({});
  ASSERT_EQ(every.size(), cli_table().at("dsh-sandbox").at("commands").size());
  for (const CLI::App* sub : every) {
    SCOPED_TRACE(sub->get_name());
    CommandLine one(std::vector<std::string>{"--json", sub->get_name(), "--", "run"});
    const std::vector<CLI::App*> built = one.app().get_subcommands({});
    ASSERT_EQ(built.size(), 1U);
    EXPECT_EQ(built.front()->get_name(), sub->get_name());
    EXPECT_EQ(flags_of(*built.front()), flags_of(*sub));
    EXPECT_GT(flags_of(*sub).size(), 1U);  // --help and the table's
  }
  // Without a subcommand it knows (the help, a typo): every one, for the list and the error.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--help"}, std::vector<std::string>{"rnu", "--mode"},
        std::vector<std::string>{"--", "run"}}) {
    EXPECT_EQ(CommandLine(args).app().get_subcommands({}).size(), every.size());
  }
}

TEST(CliTable, TheParsedValueLandsInTheFieldTheSubcommandReads) {
  CommandLine run(std::vector<std::string>{"run"});
  parse_command_line(run.app(), {"run", "--timeout", "7", "--deny-read", "/a", "--deny-read", "/b",
                                 "--json", "--", "true"});
  EXPECT_EQ(run.options().timeout, "7");
  EXPECT_EQ(run.options().deny_read, (std::vector<std::string>{"/a", "/b"}));
  EXPECT_TRUE(run.options().json);
  EXPECT_EQ(run.options().argv, std::vector<std::string>{"true"});
  // One flag, three fields: run's --timeout, shell's and job-wait's are apart.
  CommandLine wait(std::vector<std::string>{"job-wait"});
  parse_command_line(wait.app(), {"job-wait", "--timeout", "3", "0123456789abcdef"});
  EXPECT_EQ(wait.options().wait_timeout_seconds, 3);
  EXPECT_EQ(wait.options().timeout, "");
  CommandLine start(std::vector<std::string>{"start"});
  parse_command_line(start.app(), {"start", "--timeout", "2h", "--", "true"});
  EXPECT_EQ(start.options().timeout, "2h");
  EXPECT_EQ(wait.options().handle, "0123456789abcdef");
  CommandLine shell(std::vector<std::string>{"shell"});
  parse_command_line(shell.app(), {"shell", "--timeout", "5"});
  EXPECT_EQ(shell.options().shell_timeout_seconds, 5);
  // A value the table lists for an option CLI11 checks: anything else is a parse error.
  CommandLine bad(std::vector<std::string>{"run"});
  EXPECT_THROW(parse_command_line(bad.app(), {"run", "--escalate", "sometimes", "--", "true"}),
               CLI::ParseError);
}

// The completions offer --allow-cache the names the policy knows, all of them and no others.
TEST(CliTable, TheCachePresetsTheCompletionsOfferAreThePolicysOwn) {
  std::vector<std::string> known;
  for (const std::string_view name : cache_preset_names()) known.emplace_back(name);
  bool found = false;
  const nlohmann::json table = cli_table();
  for (const auto& option : table["dsh-sandbox"]["options"]) {
    if (option["name"] != "--allow-cache") continue;
    found = true;
    EXPECT_EQ(option.at("suggest").get<std::vector<std::string>>(), known);
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace dsh::sandbox::cli
