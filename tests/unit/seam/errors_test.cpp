// SPDX-License-Identifier: Apache-2.0
// SandboxUnavailableError and the invalid-input error.
#include "dsh/sandbox/errors.h"

#include <gtest/gtest.h>

#include <string>

#include "dsh/sandbox/modes.h"

namespace dsh::sandbox {
namespace {

constexpr const char* kWorkspaceWriteMessage =
    "sandbox mode \"workspace-write\" is requested but no sandbox backend is usable on this host; "
    "refusing to run the command unconfined. Install bubblewrap or run a Landlock-enforcing "
    "kernel (Linux), ensure sandbox-exec is usable (macOS), or ensure the ACL restricted-token "
    "runner can start (Windows) \xE2\x80\x94 otherwise switch the consumer to danger-full-access.";

TEST(SandboxUnavailableError, NameAndCodeAreTheReferences) {
  const SandboxUnavailableError error(ConfinedSandboxMode::kReadOnly);
  EXPECT_EQ(error.name(), "SandboxUnavailableError");
  EXPECT_EQ(error.code(), "SANDBOX_UNAVAILABLE");
  EXPECT_EQ(SANDBOX_UNAVAILABLE, "SANDBOX_UNAVAILABLE");
}

TEST(SandboxUnavailableError, MessageIsExactWithoutDetail) {
  const SandboxUnavailableError error(ConfinedSandboxMode::kWorkspaceWrite);
  EXPECT_EQ(std::string(error.what()), kWorkspaceWriteMessage);
  EXPECT_NE(std::string(error.what()).find("\"workspace-write\""), std::string::npos);
  EXPECT_NE(std::string(error.what()).find("danger-full-access"), std::string::npos);
  EXPECT_EQ(std::string(error.what()).find("Runner failure"), std::string::npos);
  EXPECT_EQ(error.mode(), ConfinedSandboxMode::kWorkspaceWrite);
  EXPECT_EQ(error.detail(), std::nullopt);
}

TEST(SandboxUnavailableError, DetailIsAppendedAfterOneSpace) {
  const std::string detail = "landlock-run: landlock is not enforced by this kernel";
  const SandboxUnavailableError error(ConfinedSandboxMode::kWorkspaceWrite, detail);
  EXPECT_EQ(std::string(error.what()),
            std::string(kWorkspaceWriteMessage) + " Runner failure: " + detail);
  EXPECT_EQ(error.detail(), detail);
}

TEST(SandboxUnavailableError, ReadOnlyModeIsNamedInTheMessage) {
  const SandboxUnavailableError error(ConfinedSandboxMode::kReadOnly);
  EXPECT_EQ(std::string(error.what()).rfind("sandbox mode \"read-only\" is requested", 0), 0u);
}

TEST(SandboxUnavailableError, ARefusalBeforeAnythingRanIsNoRunnerFailure) {
  const SandboxUnavailableError error = SandboxUnavailableError::refused(
      ConfinedSandboxMode::kReadOnly, "the runnerCommand cannot deny network access");
  EXPECT_EQ(error.code(), "SANDBOX_UNAVAILABLE");
  EXPECT_EQ(error.name(), "SandboxUnavailableError");
  EXPECT_EQ(error.detail(), std::nullopt);
  EXPECT_EQ(error.refusal(), "the runnerCommand cannot deny network access");
  EXPECT_EQ(std::string(error.what()),
            "sandbox mode \"read-only\" is requested but this call cannot be confined: the "
            "runnerCommand cannot deny network access; the command was not run, confined or "
            "unconfined");
  EXPECT_EQ(std::string(error.what()).find("Runner failure"), std::string::npos);
  EXPECT_EQ(std::string(error.what()).find("no sandbox backend"), std::string::npos);
  // The reference's runner failure keeps its exact form and no refusal.
  EXPECT_EQ(SandboxUnavailableError(ConfinedSandboxMode::kReadOnly, "x").refusal(), std::nullopt);
}

TEST(InvalidSandboxInputError, IsADistinctErrorWithItsOwnCode) {
  const InvalidSandboxInputError error("argv is empty");
  EXPECT_EQ(error.name(), "InvalidSandboxInputError");
  EXPECT_EQ(error.code(), "SANDBOX_INVALID_INPUT");
  EXPECT_NE(error.code(), SANDBOX_UNAVAILABLE);
  EXPECT_EQ(std::string(error.what()), "argv is empty");
  const SandboxError* base = &error;
  EXPECT_EQ(dynamic_cast<const SandboxUnavailableError*>(base), nullptr);
}

}  // namespace
}  // namespace dsh::sandbox
