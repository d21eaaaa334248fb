// SPDX-License-Identifier: Apache-2.0
// The command line of confine and run, parsed exactly as the CLI parses it (the same builder,
// parse_command_line): nothing after the first `--` is ever one of our options, whichever option
// precedes it, and every repeatable option takes one value per flag.
#include <gtest/gtest.h>
#include <CLI/CLI.hpp>

#include <map>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/habits.h"

namespace dsh::sandbox::cli {
namespace {

using Words = std::vector<std::string>;

// The command whose words must arrive unchanged: its own -c, and words that spell our options.
const Words kCommand = {"bash", "-c", "echo $0", "x", "--mode", "danger-full-access", "-c", "y"};

// The very command line main() builds (every subcommand, from man/cli.json).
struct Cli {
  CommandLine line;
  CLI::App& app = line.app();
  const Options& options = line.options();
  CLI::App* confine = app.get_subcommand("confine");
  CLI::App* run = app.get_subcommand("run");

  void parse(const Words& args) { parse_command_line(app, args); }
};

Words concat(const Words& head, const Words& tail) {
  Words all = head;
  all.insert(all.end(), tail.begin(), tail.end());
  return all;
}

// A value each option accepts (its checks and its type), spelled so it could not be a flag.
std::string value_for(const std::string& name) {
  const std::map<std::string, std::string> values = {
      {"--escalate", "never"}, {"--stdin", "close"}, {"--timeout", "5"}};
  const auto found = values.find(name);
  return found != values.end() ? found->second : "v1";
}

// Every option of `command` that takes a value, by its long name (or short name, -c).
Words value_options(const CLI::App& command) {
  Words names;
  for (const CLI::Option* option : command.get_options()) {
    if (option->get_positional() || option->get_items_expected_max() == 0) continue;
    const auto& longs = option->get_lnames();
    names.push_back(longs.empty() ? "-" + option->get_snames().front() : "--" + longs.front());
  }
  return names;
}

TEST(CommandLine, EveryValueOptionBeforeTheSeparatorLeavesTheCommandIntact) {
  for (const std::string sub : {"run", "confine"}) {
    const Words names = value_options(sub == "run" ? *Cli().run : *Cli().confine);
    ASSERT_GT(names.size(), 10U) << sub;
    for (const std::string& name : names) {
      if (name == "-c") continue;  // the command itself; -c with -- is refused by run_invocation
      for (const Words& given :
           {Words{name, value_for(name)}, Words{name + "=" + value_for(name)}}) {
        SCOPED_TRACE(sub + " " + given.front());
        Cli cli;
        cli.parse(concat(concat({sub}, given), concat({"--"}, kCommand)));
        EXPECT_EQ(cli.options.argv, kCommand);
        EXPECT_EQ(cli.options.command, "");
        EXPECT_EQ(cli.options.mode, name == "--mode" ? value_for(name) : "");
      }
    }
  }
}

TEST(CommandLine, EveryRepeatableOptionTakesOneValuePerFlag) {
  const Words repeatable = {"--allow-write",     "--deny-write", "--deny-read", "--allow-cache",
                            "--network-resolve", "--env",        "--unset-env"};
  const auto values_of = [](const Options& options, const std::string& name) {
    const std::map<std::string, const Words*> fields = {
        {"--allow-write", &options.allow_write},
        {"--deny-write", &options.deny_write},
        {"--deny-read", &options.deny_read},
        {"--allow-cache", &options.allow_cache},
        {"--network-resolve", &options.network_resolve},
        {"--env", &options.env_pass},
        {"--unset-env", &options.env_unset}};
    return *fields.at(name);
  };
  for (const std::string& name : repeatable) {
    SCOPED_TRACE(name);
    Cli cli;
    // Twice, the second right before the separator (where CLI11 used to end a list option and
    // then read the command's own -c as ours).
    cli.parse(concat({"run", name, "a", name, "b", "--"}, kCommand));
    EXPECT_EQ(values_of(cli.options, name), (Words{"a", "b"}));
    EXPECT_EQ(cli.options.argv, kCommand);
    EXPECT_EQ(cli.options.command, "");
    // One value per flag: a second word is the command, not a second value.
    Cli words;
    words.parse({"run", name, "a", "ls", "--", "-l"});
    EXPECT_EQ(values_of(words.options, name), Words{"a"});
    EXPECT_EQ(words.options.argv, (Words{"ls", "-l"}));
  }
}

TEST(CommandLine, AnOptionWithoutItsValueNeverTakesTheSeparator) {
  for (const std::string& name : value_options(*Cli().run)) {
    SCOPED_TRACE(name);
    Cli cli;
    EXPECT_THROW(cli.parse(concat({"run", name, "--"}, kCommand)), CLI::ParseError);
    EXPECT_EQ(cli.options.command, "");
    // unknown_flag leaves the missing value to the parser, and never reads the command.
    EXPECT_EQ(unknown_flag(cli.app, concat({"run", name, "--"}, {"ls", "--netwrok"})),
              std::nullopt);
  }
}

TEST(CommandLine, FlagsAndSeparatorWordsStayApart) {
  Cli cli;
  cli.parse(concat({"run", "--json", "--no-evidence", "--"}, concat(kCommand, {"--", "--json"})));
  EXPECT_TRUE(cli.options.json);
  EXPECT_TRUE(cli.options.no_evidence);
  EXPECT_EQ(cli.options.argv, concat(kCommand, {"--", "--json"}));
  // A word before the separator is the command's first word, as before.
  Cli before;
  before.parse({"run", "ls", "--", "-l", "--mode"});
  EXPECT_EQ(before.options.argv, (Words{"ls", "-l", "--mode"}));
  EXPECT_EQ(before.options.mode, "");
  // Nothing after it: no command (run_invocation then asks for one).
  Cli empty;
  empty.parse({"run", "--mode", "read-only", "--"});
  EXPECT_TRUE(empty.options.argv.empty());
}

TEST(CommandLine, ASubcommandWithoutACommandRefusesWordsAfterTheSeparator) {
  Cli cli;
  EXPECT_THROW(cli.parse({"probe", "--", "ls"}), CLI::ExtrasError);
}

}  // namespace
}  // namespace dsh::sandbox::cli
