// SPDX-License-Identifier: Apache-2.0
#include "cli/habits.h"

#include <gtest/gtest.h>
#include <CLI/CLI.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/invocation.h"
#include "cli/output.h"

namespace dsh::sandbox::cli {
namespace {

struct Parser {
  CLI::App app{"test"};
  std::string mode, network, command;
  bool json = false;
  std::vector<std::string> argv;
  Parser() {
    CLI::App* run = app.add_subcommand("run");
    run->add_option("--mode", mode);
    run->add_option("--network", network);
    run->add_option("-c", command);
    run->add_flag("--json", json);
    run->add_option("argv", argv);
  }
};

TEST(Habits, NamesTheUnknownFlagAndTheClosestOne) {
  Parser parser;
  EXPECT_EQ(unknown_flag(parser.app, {"run", "--netwrok", "deny", "--", "echo", "hi"}),
            "unknown option --netwrok for run; did you mean --network?");
  EXPECT_EQ(unknown_flag(parser.app, {"run", "--json", "--netwrok", "deny"}),
            "unknown option --netwrok for run; did you mean --network?");
  EXPECT_EQ(unknown_flag(parser.app, {"run", "--frobnicate", "--", "x"}),
            "unknown option --frobnicate for run");
}

TEST(Habits, KnownFlagsValuesAndWordsAfterTheSeparatorPass) {
  Parser parser;
  EXPECT_EQ(unknown_flag(parser.app, {"run", "--mode", "read-only", "--", "ls", "--netwrok"}),
            std::nullopt);
  EXPECT_EQ(unknown_flag(parser.app, {"run", "-c", "--not-a-flag"}), std::nullopt);
  EXPECT_EQ(unknown_flag(parser.app, {"run", "--network=deny", "--", "true"}), std::nullopt);
}

TEST(Habits, ClosestNameOnlyForTypos) {
  EXPECT_EQ(closest_name("--modee", {"--mode", "--workspace"}), "--mode");
  EXPECT_EQ(closest_name("--zzzzzz", {"--mode", "--json"}), std::nullopt);
}

// A policy error names the flag when its entry is a value of that flag, made absolute; an entry
// the flags did not give (the config's) keeps the library's field name.
TEST(Habits, PolicyErrorsNameTheFlagTheValueCameFrom) {
  Options options;
  options.deny_read = {"/srv/a/../b"};
  options.allow_write = {"out"};
  const std::string cwd = std::filesystem::current_path().string();
  EXPECT_EQ(flag_named("deny_read entry \"/srv/b\" contains the workspace", options),
            "--deny-read \"/srv/b\" contains the workspace");
  EXPECT_EQ(
      flag_named("allow_write entry \"" + cwd + "/out\" is not an existing directory", options),
      "--allow-write \"" + cwd + "/out\" is not an existing directory");
  EXPECT_EQ(flag_named("deny_read entry \"/etc\" contains the workspace", options),
            "deny_read entry \"/etc\" contains the workspace");
  EXPECT_EQ(flag_named("something else", options), "something else");
}

TEST(Habits, JsonErrorsOnlyWhenAskedBeforeTheSeparator) {
  EXPECT_TRUE(wants_json({"run", "--json", "--", "x"}));
  EXPECT_TRUE(wants_json({"run", "--json-lines", "--", "x"}));
  EXPECT_FALSE(wants_json({"run", "--", "echo", "--json"}));
  const auto object = nlohmann::json::parse(error_json("USAGE", "bad"));
  EXPECT_EQ(object["schemaVersion"], 1);
  EXPECT_EQ(object["error"]["code"], "USAGE");
  EXPECT_EQ(object["error"]["message"], "bad");
}

TEST(Invocation, TimeoutTakesAnyDurationUpToAYearOrNone) {
  Options options;
  options.argv = {"true"};
  EXPECT_EQ(run_invocation(options).value().timeout_ms, 120'000);  // run's default
  for (const auto& [given, ms] :
       std::vector<std::pair<std::string, double>>{{"601", 601'000},
                                                   {"1.5", 1'500},
                                                   {"90s", 90'000},
                                                   {"30m", 1'800'000},
                                                   {"2h", 7'200'000},
                                                   {"365d", 365.0 * 86'400'000}}) {
    options.timeout = given;
    const auto run = run_invocation(options);
    ASSERT_TRUE(run.has_value()) << given;
    EXPECT_EQ(run.value().timeout_ms, ms) << given;
  }
  options.timeout = "none";
  EXPECT_EQ(run_invocation(options).value().timeout_ms, std::nullopt);
  // Above the maximum is an error naming the bound, never a silent cap; so is what no person
  // writes for a duration.
  for (const std::string bad :
       {"366d", "0", "-1", "inf", "nan", "0x10", " 5", "5 ", "1e3", "2w", ".", "1.2.3", "m", ""}) {
    options.timeout = bad;
    if (bad.empty()) continue;  // empty is "not given"
    const auto run = run_invocation(options);
    ASSERT_FALSE(run.has_value()) << bad;
    EXPECT_NE(run.error().message.find("--timeout"), std::string::npos) << bad;
    EXPECT_NE(run.error().message.find("at most 365d"), std::string::npos) << bad;
  }
}

TEST(Invocation, EnvNamesAreChecked) {
  Options options;
  options.argv = {"true"};
  options.env_pass = {"A=B"};
  EXPECT_FALSE(run_invocation(options).has_value());
  options.env_pass = {"DATABASE_URL"};
  options.env_unset = {"HOME"};
  EXPECT_TRUE(run_invocation(options).has_value());
}

TEST(Invocation, NoEvidenceTurnsTheRecordsOffAndRefusesWhatNeedsThem) {
  Options options;
  options.argv = {"true"};
  options.no_evidence = true;
  const auto run = run_invocation(options);
  ASSERT_TRUE(run.has_value());
  EXPECT_FALSE(run.value().evidence);
  options.learn = true;
  const auto learn = run_invocation(options);
  ASSERT_FALSE(learn.has_value());
  EXPECT_NE(learn.error().message.find("--learn needs the records --no-evidence turns off"),
            std::string::npos);
  options.learn = false;
  options.escalate = "ask";
  const auto ask = run_invocation(options);
  ASSERT_FALSE(ask.has_value());
  EXPECT_NE(ask.error().message.find("--escalate ask asks only on recorded refusals"),
            std::string::npos);
  options.no_evidence = false;
  const auto with_evidence = run_invocation(options);
  ASSERT_TRUE(with_evidence.has_value());
  EXPECT_TRUE(with_evidence.value().evidence);
}

}  // namespace
}  // namespace dsh::sandbox::cli
