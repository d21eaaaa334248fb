// SPDX-License-Identifier: Apache-2.0
// timeouts and the request checks made before anything is spawned; argv[0] lookup.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "dsh/sandbox/errors.h"
#include "exec/exec.h"

namespace dsh::sandbox::exec {
namespace {

using std::chrono::milliseconds;

// Byte-exact: the reference's text.
constexpr const char* kTimeoutText =
    "bash-local: request.timeoutMs must be a positive finite number";

TEST(ResolveTimeout, DefaultsTo120SecondsAndCapsAt600) {
  EXPECT_EQ(resolve_timeout(std::nullopt).value(), milliseconds(120'000));
  EXPECT_EQ(resolve_timeout(1'000'000).value(), milliseconds(600'000));
  EXPECT_EQ(resolve_timeout(1'000'000, 5'000).value(), milliseconds(5'000));
  EXPECT_EQ(resolve_timeout(1.2).value(), milliseconds(2));
  EXPECT_EQ(resolve_timeout(250).value(), milliseconds(250));
}

// The reference's retention and kill defaults: a 64,000-byte tail per stream, a spill capped at
// 64 MiB, SIGKILL 3000 ms after SIGTERM.
TEST(RequestDefaults, AreTheReferencesCapsAndGrace) {
  const Request request;
  EXPECT_EQ(request.stdout_max_bytes, 64'000U);
  EXPECT_EQ(request.stderr_max_bytes, 64'000U);
  EXPECT_EQ(request.max_spill_bytes, std::uint64_t{64} * 1024 * 1024);
  EXPECT_EQ(request.grace_ms, 3'000);
  EXPECT_EQ(request.max_timeout_ms, 600'000);
  EXPECT_FALSE(request.timeout_ms.has_value());  // resolve_timeout's 120 s applies
}

TEST(ResolveTimeout, NonPositiveOrNonFiniteIsAnErrorWithTheSpecText) {
  for (const double bad : {0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity()}) {
    const auto timeout = resolve_timeout(bad);
    ASSERT_FALSE(timeout) << bad;
    EXPECT_EQ(timeout.error().message, kTimeoutText);
  }
}

TEST(Validate, ForegroundChecksTheTimeoutBackgroundHasNone) {
  Request request;
  request.argv = {"/bin/true"};
  request.timeout_ms = -5;
  const auto foreground = validate(request, true);
  ASSERT_FALSE(foreground);
  EXPECT_EQ(foreground.error().message, kTimeoutText);
  EXPECT_TRUE(validate(request, false));
}

TEST(Validate, RejectsEmptyArgvBadGraceZeroCapsAndLowFdTargets) {
  Request request;
  EXPECT_FALSE(validate(request, true));
  request.argv = {"/bin/true"};
  EXPECT_TRUE(validate(request, true));
  request.grace_ms = std::nan("");
  EXPECT_FALSE(validate(request, true));
  request.grace_ms = 0;
  EXPECT_TRUE(validate(request, true));
  request.stdout_max_bytes = 0;
  EXPECT_FALSE(validate(request, true));
  request.stdout_max_bytes = 10;
  request.fds = {{5, 2}};
  EXPECT_FALSE(validate(request, true));
  request.fds = {{-1, 3}};
  EXPECT_FALSE(validate(request, true));
  request.fds = {{5, 3}};
  EXPECT_TRUE(validate(request, true));
}

TEST(Validate, BoundsAreOnByDefaultAndAZeroOrTinyBoundIsRefused) {
  Request request;
  request.argv = {"/bin/true"};
  EXPECT_EQ(request.bounds.max_processes, kDefaultMaxProcesses);
  ASSERT_TRUE(request.bounds.max_memory_bytes.has_value());
  EXPECT_GE(*request.bounds.max_memory_bytes, kMinMemoryBytes);
  EXPECT_TRUE(validate(request, true));
  request.bounds.max_processes = 0;
  EXPECT_FALSE(validate(request, true));
  request.bounds.max_processes = std::nullopt;  // no bound: allowed, and said so in the facts
  EXPECT_TRUE(validate(request, true));
  request.bounds.max_memory_bytes = kMinMemoryBytes - 1;
  EXPECT_FALSE(validate(request, true));
  request.bounds.max_memory_bytes = std::nullopt;
  EXPECT_TRUE(validate(request, true));
}

TEST(Run, InvalidRequestThrowsInvalidInputAndRunsNothing) {
  Request request;
  request.argv = {"/bin/true"};
  request.timeout_ms = 0;
  try {
    (void)run(request);
    FAIL() << "run accepted a zero timeout";
  } catch (const InvalidSandboxInputError& error) {
    EXPECT_STREQ(error.what(), kTimeoutText);
  }
  EXPECT_THROW((void)run(Request{}), InvalidSandboxInputError);
}

TEST(ExecCandidates, SearchesAbsolutePathEntriesInOrder) {
  EXPECT_EQ(exec_candidates("ls", "/usr/local/bin:/usr/bin/"),
            (std::vector<std::string>{"/usr/local/bin/ls", "/usr/bin/ls"}));
}

TEST(ExecCandidates, NeverTheCurrentDirectory) {
  EXPECT_EQ(exec_candidates("ls", ":/bin::bin:./x:/usr/bin:"),
            (std::vector<std::string>{"/bin/ls", "/usr/bin/ls"}));
  EXPECT_EQ(exec_candidates("ls", std::nullopt),
            (std::vector<std::string>{"/bin/ls", "/usr/bin/ls"}));
  EXPECT_EQ(exec_candidates("ls", ""), (std::vector<std::string>{"/bin/ls", "/usr/bin/ls"}));
}

TEST(ExecCandidates, NamesWithASlashAreUsedAsGiven) {
  EXPECT_TRUE(exec_candidates("./tool", "/bin").empty());
  EXPECT_TRUE(exec_candidates("/bin/ls", "/bin").empty());
  EXPECT_TRUE(exec_candidates("", "/bin").empty());
}

TEST(SpawnError, MessageNamesTheStepThePathAndTheCode) {
  EXPECT_EQ((SpawnError{SpawnStage::kProgram, ENOENT, "/opt/runner"}).message(),
            "spawn /opt/runner ENOENT (No such file or directory)");
  EXPECT_EQ((SpawnError{SpawnStage::kWorkdir, ENOTDIR, "/etc/passwd"}).message(),
            "chdir /etc/passwd ENOTDIR (Not a directory)");
}

}  // namespace
}  // namespace dsh::sandbox::exec
