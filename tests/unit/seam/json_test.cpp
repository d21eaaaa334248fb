// SPDX-License-Identifier: Apache-2.0
// JSON round trip with the reference's field names, so our JSON is interchangeable with the
// reference's TypeScript ConfinedArgv and SandboxPolicy.
#include "dsh/sandbox/json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace dsh::sandbox {
namespace {

using nlohmann::json;
using namespace std::string_literals;

const std::string kNotice = "landlock-run: partial enforcement (older Landlock ABI)";

// The contract's enforcement is full (the launcher's verdict), the strict reading partial.
ConfinedArgv landlock_wrap() {
  ConfinedArgv confined{
      {"/opt/dsh/landlock-run", "--ro", "/", "--rw", "/dev/null", "--", "bash", "-c", "ls"},
      SandboxEnforcement::kFull,
      {"permission denied"},
      {RunnerFailureRule{std::vector<int>{125}, {"landlock-run: "}, std::vector{kNotice}}},
      "landlock",
      {"file metadata (chmod, chown, utimes, extended attributes)"},
      NetworkPolicy::kDeny};
  confined.strict_enforcement = SandboxEnforcement::kPartial;
  return confined;
}

TEST(ConfinedArgvJson, UsesTheReferencesFieldNames) {
  const json value = json::parse(to_json(landlock_wrap()).value());
  const json expected = {
      {"argv",
       {"/opt/dsh/landlock-run", "--ro", "/", "--rw", "/dev/null", "--", "bash", "-c", "ls"}},
      {"enforcement", "full"},
      {"denialSignatures", {"permission denied"}},
      {"runnerFailureRules",
       {{{"allowedExitCodes", {125}},
         {"fatalSignatures", {"landlock-run: "}},
         {"informationalLines", {kNotice}}}}},
      {"backend", "landlock"},
      {"ungoverned", {"file metadata (chmod, chown, utimes, extended attributes)"}},
      {"strictEnforcement", "partial"},
      {"network", "deny"},
      {"providedFds", json::array()},
      {"refused", json::array()},
      {"layers", json::array()},
      {"statusChannels", json::array()}};
  EXPECT_EQ(value, expected);
}

// The layers and status channels: typed in C++, named on the wire, read back exactly.
TEST(ConfinedArgvJson, LayersAndStatusChannelsAreNamedAndRoundTrip) {
  ConfinedArgv confined{{"/usr/bin/bwrap", "--json-status-fd", "3", "--", "/opt/landlock-run",
                         "--status-fd", "4", "--", "ls"},
                        SandboxEnforcement::kFull,
                        {"read-only file system", "permission denied"},
                        {}};
  confined.layers = {RunnerLayer::kBwrap, RunnerLayer::kLandlockRun};
  confined.backend = backend_label(confined.layers);
  confined.status_channels = {{3, RunnerLayer::kBwrap, StatusFormat::kBwrapJson},
                              {4, RunnerLayer::kLandlockRun, StatusFormat::kLauncherLines}};
  const json value = json::parse(to_json(confined).value());
  EXPECT_EQ(value["backend"], "bwrap+landlock");
  EXPECT_EQ(value["layers"], json::array({"bwrap", "landlock-run"}));
  EXPECT_EQ(value["statusChannels"],
            json::array({{{"fd", 3}, {"layer", "bwrap"}, {"format", "bwrap-json"}},
                         {{"fd", 4}, {"layer", "landlock-run"}, {"format", "launcher-lines"}}}));
  const Result<ConfinedArgv> parsed = confined_argv_from_json(value.dump());
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed.value(), confined);
  for (const RunnerLayer layer :
       {RunnerLayer::kRunnerCommand, RunnerLayer::kSeatbelt, RunnerLayer::kWindowsAcl}) {
    ConfinedArgv one = confined;
    one.layers = {layer};
    one.status_channels.clear();
    EXPECT_EQ(confined_argv_from_json(to_json(one).value()).value(), one);
  }
  EXPECT_EQ(backend_label(std::vector<RunnerLayer>{RunnerLayer::kLandlockRun}), "landlock");
}

TEST(ConfinedArgvJson, MalformedLayersAndStatusChannelsAreRefused) {
  const std::string head =
      R"({"argv":["x"],"enforcement":"full","denialSignatures":[],"runnerFailureRules":[],)";
  for (const auto& [field, text] : std::vector<std::pair<std::string, std::string>>{
           {"layers", R"("layers":"bwrap")"},
           {"layers", R"("layers":["bwrap","landlock"])"},
           {"layers", R"("layers":[3])"},
           {"statusChannels", R"("statusChannels":{})"},
           {"statusChannels", R"("statusChannels":[{"layer":"bwrap","format":"bwrap-json"}])"},
           {"statusChannels",
            R"("statusChannels":[{"fd":-3,"layer":"bwrap","format":"bwrap-json"}])"},
           {"statusChannels", R"("statusChannels":[{"fd":3,"format":"bwrap-json"}])"},
           {"statusChannels", R"("statusChannels":[{"fd":3,"layer":"bwrap","format":"json"}])"},
           {"statusChannels", R"("statusChannels":[3])"}}) {
    const Result<ConfinedArgv> parsed = confined_argv_from_json(head + text + "}");
    EXPECT_FALSE(parsed) << text;
    if (!parsed) {
      EXPECT_NE(parsed.error().message.find(field), std::string::npos) << text;
    }
  }
}

ConfinedArgv bwrap_wrap_with_fd(std::string content) {
  ConfinedArgv confined{{"/usr/bin/bwrap", "--seccomp", "5", "--", "ls"},
                        SandboxEnforcement::kFull,
                        {"read-only file system"},
                        {RunnerFailureRule{std::nullopt, {"bwrap: "}, std::nullopt}},
                        "bwrap"};
  confined.provided_fds = {{5, std::move(content), "bwrap --seccomp"}};
  confined.refused = {"kernel keyrings: add_key, keyctl and request_key fail with EPERM"};
  return confined;
}

TEST(ConfinedArgvJson, ProvidedDescriptorsCarryRawBytesAsBase64) {
  // Every length modulo 3, NUL and high bytes included.
  for (const std::string& content :
       {""s, "\x00"s, "\x00\xff"s, "\x20\x00\x00\x00\x04\x00\x00\x00"s, "abc"s, "abcd"s}) {
    const ConfinedArgv confined = bwrap_wrap_with_fd(content);
    const Result<std::string> text = to_json(confined);
    ASSERT_TRUE(text) << text.error().message;
    const json value = json::parse(text.value());
    EXPECT_EQ(value["providedFds"][0]["fd"], 5);
    EXPECT_EQ(value["providedFds"][0]["purpose"], "bwrap --seccomp");
    EXPECT_EQ(value["refused"], json::array({confined.refused[0]}));
    const Result<ConfinedArgv> parsed = confined_argv_from_json(text.value());
    ASSERT_TRUE(parsed) << parsed.error().message;
    EXPECT_EQ(parsed.value(), confined);
  }
  EXPECT_EQ(
      json::parse(
          to_json(bwrap_wrap_with_fd("\x00\xff\x10"s)).value())["providedFds"][0]["contentBase64"],
      "AP8Q");
  EXPECT_EQ(
      json::parse(to_json(bwrap_wrap_with_fd("ab")).value())["providedFds"][0]["contentBase64"],
      "YWI=");
}

TEST(ConfinedArgvJson, MalformedProvidedDescriptorsAreRefused) {
  const std::string head =
      R"({"argv":["x"],"enforcement":"full","denialSignatures":[],"runnerFailureRules":[],)";
  for (const std::string& fds :
       {R"("providedFds":{})"s, R"("providedFds":[{"purpose":"p","contentBase64":""}])"s,
        R"("providedFds":[{"fd":-1,"purpose":"p","contentBase64":""}])"s,
        R"("providedFds":[{"fd":5,"contentBase64":""}])"s,
        R"("providedFds":[{"fd":5,"purpose":"p","contentBase64":"YWI"}])"s,
        R"("providedFds":[{"fd":5,"purpose":"p","contentBase64":"Y=Jj"}])"s,
        R"("providedFds":[{"fd":5,"purpose":"p","contentBase64":"YW!j"}])"s,
        R"("providedFds":[{"fd":5,"purpose":"p","contentBase64":"YW=="}, 3])"s}) {
    const Result<ConfinedArgv> parsed = confined_argv_from_json(head + fds + "}");
    EXPECT_FALSE(parsed) << fds;
    if (!parsed) {
      EXPECT_NE(parsed.error().message.find("providedFds"), std::string::npos) << fds;
    }
  }
}

TEST(ConfinedArgvJson, AbsentOptionalRuleFieldsAreOmittedNotNull) {
  const ConfinedArgv bwrap{{"/usr/bin/bwrap", "--", "true"},
                           SandboxEnforcement::kFull,
                           {"read-only file system"},
                           {RunnerFailureRule{std::nullopt, {"bwrap: "}, std::nullopt}}};
  const json rule = json::parse(to_json(bwrap).value())["runnerFailureRules"][0];
  EXPECT_EQ(rule, (json{{"fatalSignatures", {"bwrap: "}}}));
}

TEST(ConfinedArgvJson, RoundTripsExactly) {
  const Result<ConfinedArgv> parsed = confined_argv_from_json(to_json(landlock_wrap()).value());
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed.value(), landlock_wrap());
}

TEST(ConfinedArgvJson, ReadsJsonWrittenByTheReferenceIgnoringUnknownFields) {
  const std::string reference = R"({
    "argv": ["bwrap", "--ro-bind", "/", "/", "--", "bash", "-c", "echo hi"],
    "enforcement": "full",
    "denialSignatures": ["read-only file system"],
    "runnerFailureRules": [{"fatalSignatures": ["bwrap: "]}],
    "futureField": {"x": 1}
  })";
  const Result<ConfinedArgv> parsed = confined_argv_from_json(reference);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed.value().argv.back(), "echo hi");
  EXPECT_EQ(parsed.value().enforcement, SandboxEnforcement::kFull);
  EXPECT_EQ(parsed.value().runner_failure_rules.at(0).allowed_exit_codes, std::nullopt);
  EXPECT_EQ(parsed.value().backend, "");
  EXPECT_TRUE(parsed.value().ungoverned.empty());
  EXPECT_EQ(parsed.value().strict_enforcement, SandboxEnforcement::kFull);
  EXPECT_EQ(parsed.value().network, NetworkPolicy::kInherit);
}

void expect_error(const std::string& text, const std::string& message_part) {
  const Result<ConfinedArgv> parsed = confined_argv_from_json(text);
  ASSERT_FALSE(parsed) << text;
  EXPECT_NE(parsed.error().message.find(message_part), std::string::npos) << parsed.error().message;
}

TEST(ConfinedArgvJson, MalformedOrMistypedInputNamesTheProblem) {
  expect_error("{", "ConfinedArgv JSON is malformed");
  expect_error("[]", "ConfinedArgv JSON must be an object");
  expect_error(R"({"enforcement":"full","denialSignatures":[],"runnerFailureRules":[]})",
               "field \"argv\" is missing");
  expect_error(R"({"argv":[1],"enforcement":"full","denialSignatures":[],"runnerFailureRules":[]})",
               "field \"argv\" must be an array of strings");
  expect_error(
      R"({"argv":["x"],"enforcement":"total","denialSignatures":[],"runnerFailureRules":[]})",
      "unknown sandbox enforcement \"total\"");
  expect_error(
      R"({"argv":["x"],"enforcement":"full","denialSignatures":[],"runnerFailureRules":{}})",
      "field \"runnerFailureRules\" must be an array of rules");
  expect_error(
      R"({"argv":["x"],"enforcement":"full","denialSignatures":[],"runnerFailureRules":[{"fatalSignatures":["a"],"allowedExitCodes":["125"]}]})",
      "field \"allowedExitCodes\" must be an array of integer exit codes");
}

// Both readings on the wire: the contract's `enforcement`, and `strictEnforcement`, partial
// exactly when `ungoverned` names a gap (or enforcement is partial). Absent, it is derived; a
// document whose strict reading contradicts its own facts is refused.
TEST(ConfinedArgvJson, StrictEnforcementIsDerivedFromTheFactsAndMustAgreeWithThem) {
  const std::string head =
      R"({"argv":["/r","--","ls"],"denialSignatures":[],"runnerFailureRules":[],)";
  struct Case {
    std::string facts;
    SandboxEnforcement strict;
  };
  for (const Case& c :
       {Case{R"("enforcement":"full","ungoverned":[])", SandboxEnforcement::kFull},
        Case{R"("enforcement":"full","ungoverned":["x"])", SandboxEnforcement::kPartial},
        Case{R"("enforcement":"partial")", SandboxEnforcement::kPartial}}) {
    const Result<ConfinedArgv> parsed = confined_argv_from_json(head + c.facts + "}");
    ASSERT_TRUE(parsed) << c.facts << ": " << parsed.error().message;
    EXPECT_EQ(parsed.value().strict_enforcement, c.strict) << c.facts;
    const json written = json::parse(to_json(parsed.value()).value());
    EXPECT_EQ(written["strictEnforcement"], wire_name(c.strict)) << c.facts;
  }
  expect_error(head + R"("enforcement":"full","ungoverned":["x"],"strictEnforcement":"full"})",
               "strictEnforcement");
  expect_error(head + R"("enforcement":"full","strictEnforcement":"partial"})",
               "strictEnforcement");
}

TEST(ConfinedArgvJson, InvalidUtf8IsRefusedRatherThanAltered) {
  ConfinedArgv confined = landlock_wrap();
  confined.argv.push_back("caf\xE9");
  const Result<std::string> text = to_json(confined);
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message.find("not valid UTF-8"), std::string::npos);
}

TEST(SandboxPolicyJson, UsesTheReferencesFieldNamesAndOmitsAbsentSession) {
  const SandboxPolicy agentless{ConfinedSandboxMode::kWorkspaceWrite, "/ws", std::nullopt};
  EXPECT_EQ(json::parse(to_json(agentless).value()),
            (json{{"mode", "workspace-write"}, {"workspaceRoot", "/ws"}, {"network", "deny"}}));
  const SandboxPolicy session{ConfinedSandboxMode::kReadOnly, "/ws", "sess-1"};
  EXPECT_EQ(json::parse(to_json(session).value()), (json{{"mode", "read-only"},
                                                         {"workspaceRoot", "/ws"},
                                                         {"sessionId", "sess-1"},
                                                         {"network", "deny"}}));
  // The reference's policy, without "network", reads as no network (docs/contract.md).
  EXPECT_EQ(
      sandbox_policy_from_json(R"({"mode":"read-only","workspaceRoot":"/ws"})").value().network,
      NetworkPolicy::kDeny);
}

TEST(SandboxPolicyJson, NetworkIsWrittenOnlyWhenDenied) {
  const SandboxPolicy deny{ConfinedSandboxMode::kReadOnly, "/ws", std::nullopt,
                           NetworkPolicy::kDeny};
  EXPECT_EQ(json::parse(to_json(deny).value()),
            (json{{"mode", "read-only"}, {"workspaceRoot", "/ws"}, {"network", "deny"}}));
  EXPECT_EQ(sandbox_policy_from_json(to_json(deny).value()).value(), deny);
  const Result<SandboxPolicy> bad =
      sandbox_policy_from_json(R"({"mode":"read-only","workspaceRoot":"/ws","network":"off"})");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "unknown network policy \"off\"; expected one of: inherit, deny, allow-list (on the "
            "command line: allow:NAME,*.SUFFIX,ADDRESS,...)");
}

TEST(SandboxPolicyJson, RoundTripsExactly) {
  for (const SandboxPolicy& policy :
       {SandboxPolicy{ConfinedSandboxMode::kReadOnly, "/home/u/project", std::nullopt},
        SandboxPolicy{ConfinedSandboxMode::kWorkspaceWrite, "/ws", "session-42"}}) {
    const Result<SandboxPolicy> parsed = sandbox_policy_from_json(to_json(policy).value());
    ASSERT_TRUE(parsed) << parsed.error().message;
    EXPECT_EQ(parsed.value(), policy);
  }
}

TEST(SandboxPolicyJson, PathRulesRoundTripUnderTheirJsonNames) {
  SandboxPolicy policy{ConfinedSandboxMode::kWorkspaceWrite, "/ws", std::nullopt};
  policy.allow_write = {"/cache"};
  policy.deny_write = {"/ws/conf", "!/ws/.git/hooks"};
  policy.deny_read = {"/ws/.env"};
  policy.allow_cache = {"npm", "pip"};
  const std::string text = to_json(policy).value();
  for (const char* name : {"\"allowWrite\"", "\"denyWrite\"", "\"denyRead\"", "\"allowCache\""}) {
    EXPECT_NE(text.find(name), std::string::npos) << text;
  }
  const Result<SandboxPolicy> parsed = sandbox_policy_from_json(text);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed.value(), policy);
  // Without rules the object is the reference's, plus the network (always written: absent now
  // reads as deny).
  EXPECT_EQ(to_json(SandboxPolicy{ConfinedSandboxMode::kReadOnly, "/ws", std::nullopt}).value(),
            R"({"mode":"read-only","network":"deny","workspaceRoot":"/ws"})");
  EXPECT_FALSE(
      sandbox_policy_from_json(R"({"mode":"read-only","workspaceRoot":"/ws","allowWrite":"/x"})"));
  EXPECT_FALSE(sandbox_policy_from_json(
      R"({"mode":"read-only","workspaceRoot":"/ws","allowCache":["nope"]})"));
}

TEST(SandboxPolicyJson, BadPoliciesAreRefused) {
  const auto error_of = [](const std::string& text) {
    const Result<SandboxPolicy> parsed = sandbox_policy_from_json(text);
    return parsed ? std::string("accepted") : parsed.error().message;
  };
  EXPECT_NE(error_of(R"({"mode":"yolo","workspaceRoot":"/ws"})").find("unknown confined"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"mode":"danger-full-access","workspaceRoot":"/ws"})")
                .find("is not a confined mode"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"mode":"read-only","workspaceRoot":"ws"})").find("not an absolute"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"mode":"read-only","workspaceRoot":"/ws\u0000x"})").find("NUL byte"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"mode":"read-only"})").find("\"workspaceRoot\" is missing"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"mode":"read-only","workspaceRoot":"/ws","sessionId":7})")
                .find("\"sessionId\" must be a string"),
            std::string::npos);
}

}  // namespace
}  // namespace dsh::sandbox
