// SPDX-License-Identifier: Apache-2.0
// The proxy's refusals on the evidence surfaces: the agent render's lines and learn's proposal,
// which adds the refused names to the allow-list in force as one --network allow: flag.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "consumer/denials.h"

namespace dsh::sandbox::consumer {
namespace {

Denial refused(const std::string& path, const std::string& rule = "network-not-allowed") {
  Denial denial;
  denial.op = "connect";
  denial.rule = rule;
  denial.path = path;
  return denial;
}

SandboxFacts facts(std::vector<Denial> records, std::vector<std::string> allow) {
  SandboxFacts sandbox{SandboxMode::kWorkspaceWrite};
  sandbox.denials.records = std::move(records);
  sandbox.denials.total = sandbox.denials.records.size();
  sandbox.network_allow = std::move(allow);
  return sandbox;
}

TEST(NetworkLearn, ProposesTheRefusedNamesWithTheAllowedOnes) {
  const SandboxFacts sandbox = facts(
      {refused("registry.yarnpkg.com:443"), refused("objects.githubusercontent.com:443"),
       refused("registry.yarnpkg.com:80"), refused("[fd00::1]:8080"), refused("10.0.0.7:5432")},
      {"registry.npmjs.org"});
  EXPECT_EQ(narrowest_changes(sandbox, "/ws"),
            std::vector<std::string>{"--network allow:registry.npmjs.org,registry.yarnpkg.com,"
                                     "objects.githubusercontent.com,fd00::1,10.0.0.7"});
}

TEST(NetworkLearn, AMalformedRequestProposesNothingAndTheKernelsRefusalStaysInherit) {
  // A request line that named no destination is recorded as written; no entry can admit it, and
  // learn says so instead of claiming there is nothing to change.
  const std::vector<std::string> malformed =
      narrowest_changes(facts({refused("allowed.test%00.evil.test")}, {}), "/ws");
  ASSERT_EQ(malformed.size(), 1U);
  EXPECT_TRUE(
      malformed.front().starts_with("none for allowed.test%00.evil.test: learn never "
                                    "proposes"))
      << malformed.front();
  EXPECT_EQ(narrowest_changes(facts({refused("af-inet", "network-denied")}, {}), "/ws"),
            std::vector<std::string>{
                "--network inherit, or --network allow:NAME,... naming what the command needs "
                "(the socket was refused before any name or address was known; a wider file mode "
                "does not help a network refusal)"});
}

TEST(NetworkLearn, TheRenderNamesEachRefusedDestination) {
  const std::vector<std::string> lines =
      denial_lines(facts({refused("other.test:8080"), refused("other.test:8080")}, {}));
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "[sandbox refused: connect other.test:8080 (network-not-allowed)]",
                       "[sandbox refused 2 operations in all]"}));
}

}  // namespace
}  // namespace dsh::sandbox::consumer
