// SPDX-License-Identifier: Apache-2.0
// Provider config: the reference's errors in its order, and the JSON config file.
#include <gtest/gtest.h>

#include <limits>

#include "dsh/sandbox/local_provider.h"
#include "local/config.h"

namespace dsh::sandbox {
namespace {

std::string error_of(const LocalSandboxConfig& config) {
  const Result<void> result = validate_config(config);
  return result ? std::string("valid") : result.error().message;
}

TEST(LocalSandboxConfig, DefaultsAreValid) {
  const LocalSandboxConfig config;
  EXPECT_EQ(error_of(config), "valid");
  EXPECT_EQ(config.probe_timeout_ms, 5000);
  EXPECT_TRUE(config.runner_command.empty());
}

TEST(LocalSandboxConfig, SignaturesWithoutRunnerAreRefused) {
  EXPECT_EQ(error_of({{}, {"x: "}}),
            "sandbox-local: runnerFailureSignatures requires runnerCommand");
}

TEST(LocalSandboxConfig, RunnerWithoutSignaturesIsRefused) {
  EXPECT_EQ(error_of({{"/opt/runner"}, {}}),
            "sandbox-local: runnerCommand requires at least one runnerFailureSignatures entry");
}

TEST(LocalSandboxConfig, RunnerProgramMustBeAnAbsolutePath) {
  for (const char* bare : {"runner", "./runner", "bin/runner"}) {
    EXPECT_EQ(error_of({{bare}, {"x: "}}),
              "sandbox-local: runnerCommand must start with the runner program's absolute path")
        << bare;
  }
}

TEST(LocalSandboxConfig, BlankOrMultiLineSignaturesAreRefused) {
  for (const char* bad : {"  ", "fatal\ncontinued", "fatal\rcontinued", ""}) {
    EXPECT_EQ(error_of({{"/opt/runner"}, {"ok: ", bad}}),
              "sandbox-local: runnerFailureSignatures entries must be non-empty single-line "
              "strings")
        << bad;
  }
}

TEST(LocalSandboxConfig, ProbeTimeoutMustBePositiveAndFinite) {
  for (const double bad : {0.0, -1.0, std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_EQ(error_of({{}, {}, bad}),
              "sandbox-local: probeTimeoutMs must be a positive finite number");
  }
}

TEST(LocalSandboxConfig, ChecksRunInTheReferencesOrder) {
  EXPECT_EQ(error_of({{}, {"  "}, 0}),
            "sandbox-local: runnerFailureSignatures requires runnerCommand");
  EXPECT_EQ(error_of({{"/r"}, {"  "}, 0}),
            "sandbox-local: runnerFailureSignatures entries must be non-empty single-line "
            "strings");
}

TEST(LocalSandboxConfig, RelativeBwrapPathIsRefused) {
  LocalSandboxConfig config;
  config.bwrap_path = "bin/bwrap";
  EXPECT_EQ(error_of(config), "sandbox-local: bwrapPath must be an absolute path");
}

TEST(LocalSandboxConfig, ProviderConstructionRefusesAnInvalidConfig) {
  EXPECT_THROW(LocalSandboxProvider(LocalSandboxConfig{{}, {}, 0}), InvalidSandboxInputError);
}

TEST(ConfigFromJson, ReadsTheReferencesKeys) {
  const Result<LocalSandboxConfig> config = config_from_json(
      R"({"mode":"workspace-write","runnerCommand":["/opt/r","--x"],)"
      R"("runnerFailureSignatures":["r: "],"probeTimeoutMs":250,"bwrapPath":"/opt/bwrap"})");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config.value().runner_command, (std::vector<std::string>{"/opt/r", "--x"}));
  EXPECT_EQ(config.value().runner_failure_signatures, std::vector<std::string>{"r: "});
  EXPECT_EQ(config.value().probe_timeout_ms, 250);
  EXPECT_EQ(config.value().bwrap_path, "/opt/bwrap");
}

TEST(ConfigFromJson, RunnerAcceptsHardeningIsABooleanOfTheOperatorsRunner) {
  const Result<LocalSandboxConfig> off =
      config_from_json(R"({"runnerCommand":["/opt/r"],"runnerFailureSignatures":["r: "]})");
  ASSERT_TRUE(off) << off.error().message;
  EXPECT_FALSE(off.value().runner_accepts_hardening);
  const Result<LocalSandboxConfig> on =
      config_from_json(R"({"runnerCommand":["/opt/r"],"runnerFailureSignatures":["r: "],)"
                       R"("runnerAcceptsHardening":true})");
  ASSERT_TRUE(on) << on.error().message;
  EXPECT_TRUE(on.value().runner_accepts_hardening);
  EXPECT_FALSE(config_from_json(R"({"runnerCommand":["/opt/r"],"runnerFailureSignatures":["r: "],)"
                                R"("runnerAcceptsHardening":"yes"})"));
  const Result<LocalSandboxConfig> alone = config_from_json(R"({"runnerAcceptsHardening":true})");
  ASSERT_FALSE(alone);
  EXPECT_EQ(alone.error().message, "sandbox-local: runnerAcceptsHardening requires runnerCommand");
}

TEST(ConfigFromJson, UnknownKeyIsAnErrorNotASilentDefault) {
  const Result<LocalSandboxConfig> config = config_from_json(R"({"probeTimeOutMs": 10})");
  ASSERT_FALSE(config);
  EXPECT_EQ(config.error().message.rfind("config: unknown key \"probeTimeOutMs\"", 0), 0u);
}

TEST(ConfigFromJson, MalformedAndMistypedDocumentsAreRefused) {
  EXPECT_FALSE(config_from_json("{"));
  EXPECT_FALSE(config_from_json("[]"));
  EXPECT_FALSE(config_from_json(R"({"probeTimeoutMs":"5"})"));
  EXPECT_FALSE(config_from_json(R"({"runnerCommand":"/opt/r"})"));
  EXPECT_FALSE(config_from_json(R"({"probeTimeoutMs":0})"));
}

TEST(ConfigPathRules, TheFourKeysAreReadAndTypeChecked) {
  const auto document = nlohmann::json::parse(
      R"({"mode":"workspace-write","allowWrite":["~/.cache/x"],"denyWrite":["/ws/c"],)"
      R"("denyRead":["!~/.aws"],"allowCache":["npm","pip"]})");
  EXPECT_TRUE(config_from_json(document.dump()));
  auto rules = local::path_rules_from_document(document);
  ASSERT_TRUE(rules);
  EXPECT_EQ(rules.value().allow_write, std::vector<std::string>{"~/.cache/x"});
  EXPECT_EQ(rules.value().deny_read, std::vector<std::string>{"!~/.aws"});
  EXPECT_EQ(rules.value().allow_cache, (std::vector<std::string>{"npm", "pip"}));
  EXPECT_FALSE(local::path_rules_from_document(nlohmann::json::parse(R"({"allowWrite":"/x"})")));
  auto unknown = config_from_json(R"({"allowWrites":[]})");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("allowWrite, denyWrite, denyRead, allowCache"),
            std::string::npos);
}

TEST(ConfigNetworkRules, EntriesAreCanonicalisedOnce) {
  const auto document = nlohmann::json::parse(
      R"({"networkAllow":["Registry.NPMJS.org.","*.GitHub.com:443","10.0.0.5"],)"
      R"("networkDeny":["gist.github.com"]})");
  EXPECT_TRUE(config_from_json(document.dump()));
  auto rules = local::network_rules_from_document(document);
  ASSERT_TRUE(rules) << rules.error().message;
  EXPECT_EQ(rules.value().allow,
            (std::vector<std::string>{"registry.npmjs.org", "*.github.com:443", "10.0.0.5"}));
  EXPECT_EQ(rules.value().deny, std::vector<std::string>{"gist.github.com"});
  EXPECT_EQ(local::network_rules_from_document(nlohmann::json::object()).value(),
            local::ConfigNetworkRules{});
}

TEST(ConfigNetworkRules, AllowUnixSocketsTakesAbsolutePathsOnly) {
  const auto document = nlohmann::json::parse(R"({"allowUnixSockets":["/run/user/1000/bus"]})");
  EXPECT_TRUE(config_from_json(document.dump()));
  auto rules = local::network_rules_from_document(document);
  ASSERT_TRUE(rules) << rules.error().message;
  EXPECT_EQ(rules.value().unix_sockets, std::vector<std::string>{"/run/user/1000/bus"});
  auto relative =
      local::network_rules_from_document(nlohmann::json::parse(R"({"allowUnixSockets":["bus"]})"));
  ASSERT_FALSE(relative);
  EXPECT_NE(relative.error().message.find("allowUnixSockets"), std::string::npos);
}

TEST(ConfigNetworkRules, BadInputNamesTheKeyAndTheEntry) {
  const auto error = [](const std::string& text) {
    auto rules = local::network_rules_from_document(nlohmann::json::parse(text));
    EXPECT_FALSE(rules) << text;
    return rules ? std::string() : rules.error().message;
  };
  // Not an array of strings.
  EXPECT_NE(error(R"({"networkAllow":"registry.npmjs.org"})").find("networkAllow"),
            std::string::npos);
  EXPECT_NE(error(R"({"networkDeny":[1]})").find("networkDeny"), std::string::npos);
  // Entries the grammar refuses: each message names the key and the entry.
  for (const std::string entry : {"allowed.test\\u0000.evil.test", "host:0", "host:65536",
                                  "ex ample.com", "*.", "a*.b.com", "\u0430llowed.test", "127.1"}) {
    const std::string message = error(R"({"networkAllow":[")" + entry + R"("]})");
    EXPECT_NE(message.find("config: networkAllow entry"), std::string::npos) << message;
  }
  const std::string deny = error(R"({"networkDeny":["bad name"]})");
  EXPECT_NE(deny.find("config: networkDeny entry \"bad name\""), std::string::npos) << deny;
  // A misspelt key is refused with the known keys, the network ones among them.
  auto unknown = config_from_json(R"({"networkAllowed":[]})");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("networkAllow, networkDeny"), std::string::npos);
}

}  // namespace
}  // namespace dsh::sandbox
