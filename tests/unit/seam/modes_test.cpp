// SPDX-License-Identifier: Apache-2.0
// The seam's vocabulary: exact wire names, strict parsing, clear errors.
#include "dsh/sandbox/modes.h"

#include <gtest/gtest.h>

#include <string>

namespace dsh::sandbox {
namespace {

using namespace std::string_literals;

TEST(SandboxMode, WireNamesAreTheReferencesInSandboxModesOrder) {
  ASSERT_EQ(kSandboxModes.size(), 3u);
  EXPECT_EQ(wire_name(kSandboxModes[0]), "read-only");
  EXPECT_EQ(wire_name(kSandboxModes[1]), "workspace-write");
  EXPECT_EQ(wire_name(kSandboxModes[2]), "danger-full-access");
}

TEST(SandboxMode, EveryWireNameParsesBackToItsMode) {
  for (const SandboxMode mode : kSandboxModes) {
    const Result<SandboxMode> parsed = parse_sandbox_mode(wire_name(mode));
    ASSERT_TRUE(parsed) << parsed.error().message;
    EXPECT_EQ(parsed.value(), mode);
  }
}

TEST(SandboxMode, UnknownNameIsAnErrorListingTheValidNames) {
  const Result<SandboxMode> parsed = parse_sandbox_mode("yolo");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().message,
            "unknown sandbox mode \"yolo\"; expected one of: read-only, workspace-write, "
            "danger-full-access");
}

TEST(SandboxMode, ParsingIsExactNotCaseOrSpaceInsensitive) {
  EXPECT_FALSE(parse_sandbox_mode("Read-Only"));
  EXPECT_FALSE(parse_sandbox_mode(" read-only"));
  EXPECT_FALSE(parse_sandbox_mode("read_only"));
  EXPECT_FALSE(parse_sandbox_mode(""));
}

TEST(SandboxMode, NulByteInANameIsRejectedAndShownEscaped) {
  const Result<SandboxMode> parsed = parse_sandbox_mode("read-only\0x"s);
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().message.find("\"read-only\\x00x\""), std::string::npos)
      << parsed.error().message;
}

TEST(SandboxMode, ValueOfAnErrorThrowsInvalidInputNotUnavailable) {
  const Result<SandboxMode> parsed = parse_sandbox_mode("yolo");
  try {
    (void)parsed.value();
    FAIL() << "value() of an error must throw";
  } catch (const InvalidSandboxInputError& error) {
    EXPECT_EQ(error.code(), "SANDBOX_INVALID_INPUT");
    EXPECT_NE(std::string(error.what()).find("yolo"), std::string::npos);
  }
}

TEST(ConfinedSandboxMode, ParsesOnlyTheTwoConfinedModes) {
  EXPECT_EQ(parse_confined_sandbox_mode("read-only").value(), ConfinedSandboxMode::kReadOnly);
  EXPECT_EQ(parse_confined_sandbox_mode("workspace-write").value(),
            ConfinedSandboxMode::kWorkspaceWrite);
}

TEST(ConfinedSandboxMode, DangerFullAccessIsRefusedWithTheReason) {
  const Result<ConfinedSandboxMode> parsed = parse_confined_sandbox_mode("danger-full-access");
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().message.find("is not a confined mode"), std::string::npos);
}

TEST(ConfinedSandboxMode, UnknownNameListsTheConfinedModes) {
  const Result<ConfinedSandboxMode> parsed = parse_confined_sandbox_mode("yolo");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().message,
            "unknown confined sandbox mode \"yolo\"; expected one of: read-only, workspace-write");
}

TEST(ConfinedSandboxMode, ConvertsToAndFromSandboxMode) {
  EXPECT_EQ(to_sandbox_mode(ConfinedSandboxMode::kReadOnly), SandboxMode::kReadOnly);
  EXPECT_EQ(to_sandbox_mode(ConfinedSandboxMode::kWorkspaceWrite), SandboxMode::kWorkspaceWrite);
  EXPECT_EQ(to_confined_mode(SandboxMode::kReadOnly), ConfinedSandboxMode::kReadOnly);
  EXPECT_EQ(to_confined_mode(SandboxMode::kWorkspaceWrite), ConfinedSandboxMode::kWorkspaceWrite);
  EXPECT_EQ(to_confined_mode(SandboxMode::kDangerFullAccess), std::nullopt);
  EXPECT_EQ(wire_name(ConfinedSandboxMode::kWorkspaceWrite), "workspace-write");
}

TEST(SandboxEnforcement, WireNamesRoundTripAndUnknownIsAnError) {
  EXPECT_EQ(wire_name(SandboxEnforcement::kFull), "full");
  EXPECT_EQ(wire_name(SandboxEnforcement::kPartial), "partial");
  EXPECT_EQ(parse_sandbox_enforcement("full").value(), SandboxEnforcement::kFull);
  EXPECT_EQ(parse_sandbox_enforcement("partial").value(), SandboxEnforcement::kPartial);
  const Result<SandboxEnforcement> parsed = parse_sandbox_enforcement("none");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().message,
            "unknown sandbox enforcement \"none\"; expected one of: full, partial");
}

TEST(NetworkPolicy, WireNamesRoundTripAndUnknownIsAnError) {
  EXPECT_EQ(wire_name(NetworkPolicy::kInherit), "inherit");
  EXPECT_EQ(wire_name(NetworkPolicy::kDeny), "deny");
  EXPECT_EQ(parse_network_policy("inherit").value(), NetworkPolicy::kInherit);
  EXPECT_EQ(parse_network_policy("deny").value(), NetworkPolicy::kDeny);
  EXPECT_FALSE(parse_network_policy("none"));
}

}  // namespace
}  // namespace dsh::sandbox
