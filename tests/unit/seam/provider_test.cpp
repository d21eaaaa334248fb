// SPDX-License-Identifier: Apache-2.0
// SandboxProvider::confine: validation before the backend is asked, backend errors unchanged,
// and no backend bug can hand back an argv that does not wrap the command.
#include "dsh/sandbox/provider.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "dsh/sandbox/errors.h"
#include "temp_dir.h"

namespace dsh::sandbox {
namespace {

using namespace std::string_literals;
using Argv = std::vector<std::string>;

class FakeProvider final : public SandboxProvider {
 public:
  using Wrap = std::function<ConfinedArgv(std::span<const std::string>, const SandboxPolicy&)>;
  explicit FakeProvider(Wrap wrap) : wrap_(std::move(wrap)) {}
  int calls = 0;

 private:
  ConfinedArgv confine_validated(const ConfineRequest& request) override {
    ++calls;
    return wrap_(request.argv, request.policy);
  }
  Wrap wrap_;
};

ConfinedArgv runner_wrap(std::span<const std::string> argv, const SandboxPolicy&) {
  ConfinedArgv confined{{"/usr/bin/runner", "--ro", "/"},
                        SandboxEnforcement::kPartial,
                        {"permission denied"},
                        {RunnerFailureRule{std::vector<int>{125}, {"runner: "}, std::nullopt}}};
  confined.argv.push_back("--");
  confined.argv.insert(confined.argv.end(), argv.begin(), argv.end());
  return confined;
}

const SandboxPolicy kReadOnly{ConfinedSandboxMode::kReadOnly, "/", std::nullopt};

TEST(SandboxProviderConfine, ReturnsTheBackendsWrapWithItsFacts) {
  FakeProvider provider(runner_wrap);
  const Argv argv = {"bash", "-c", "echo hi"};
  const ConfinedArgv confined = provider.confine(argv, kReadOnly);
  EXPECT_EQ(confined.argv, (Argv{"/usr/bin/runner", "--ro", "/", "--", "bash", "-c", "echo hi"}));
  EXPECT_EQ(confined.enforcement, SandboxEnforcement::kPartial);
  EXPECT_EQ(confined.denial_signatures, Argv{"permission denied"});
  EXPECT_EQ(provider.calls, 1);
}

TEST(SandboxProviderConfine, AnArgvWrittenInPlaceIsConfinedAsAVectorIs) {
  FakeProvider provider(runner_wrap);
  const ConfinedArgv confined = provider.confine({"ls", "-l"}, kReadOnly);
  EXPECT_EQ(confined.argv, (Argv{"/usr/bin/runner", "--ro", "/", "--", "ls", "-l"}));
}

TEST(SandboxProviderConfine, BackendReceivesTheExactArgvAndPolicy) {
  dsh::testing::TempDir workspace;
  const SandboxPolicy policy{ConfinedSandboxMode::kWorkspaceWrite, workspace.path(), "s-1"};
  const Argv argv = {"printf", "%s", "two words"};
  FakeProvider provider([&](std::span<const std::string> seen, const SandboxPolicy& got) {
    EXPECT_EQ(Argv(seen.begin(), seen.end()), argv);
    EXPECT_EQ(got, policy);
    return runner_wrap(seen, got);
  });
  (void)provider.confine(argv, policy);
  EXPECT_EQ(provider.calls, 1);
}

void expect_invalid_and_backend_untouched(const Argv& argv, const SandboxPolicy& policy,
                                          const std::string& message_part) {
  FakeProvider provider(runner_wrap);
  try {
    (void)provider.confine(argv, policy);
    ADD_FAILURE() << "confine accepted bad input";
  } catch (const InvalidSandboxInputError& error) {
    EXPECT_NE(std::string(error.what()).find(message_part), std::string::npos) << error.what();
  }
  EXPECT_EQ(provider.calls, 0);
}

TEST(SandboxProviderConfine, EmptyArgvIsInvalidInput) {
  expect_invalid_and_backend_untouched({}, kReadOnly, "argv is empty");
}

TEST(SandboxProviderConfine, NulInArgvIsInvalidInput) {
  expect_invalid_and_backend_untouched({"echo", "a\0b"s}, kReadOnly, "contains a NUL byte");
}

TEST(SandboxProviderConfine, RelativeWorkspaceRootIsInvalidInput) {
  expect_invalid_and_backend_untouched(
      {"true"}, {ConfinedSandboxMode::kWorkspaceWrite, "ws", std::nullopt}, "not an absolute");
}

TEST(SandboxProviderConfine, NulInWorkspaceRootIsInvalidInput) {
  expect_invalid_and_backend_untouched(
      {"true"}, {ConfinedSandboxMode::kReadOnly, "/tmp\0x"s, std::nullopt}, "NUL byte");
}

TEST(SandboxProviderConfine, MissingWorkspaceUnderWorkspaceWriteIsInvalidInputNotUnavailable) {
  expect_invalid_and_backend_untouched(
      {"true"}, {ConfinedSandboxMode::kWorkspaceWrite, "/no/such/dsh/ws", std::nullopt},
      "workspace root \"/no/such/dsh/ws\" cannot be used: No such file or directory");
}

TEST(SandboxProviderConfine, FileAsWorkspaceUnderWorkspaceWriteIsInvalidInput) {
  expect_invalid_and_backend_untouched(
      {"true"}, {ConfinedSandboxMode::kWorkspaceWrite, "/dev/null", std::nullopt},
      "is not a directory");
}

TEST(SandboxProviderConfine, ReadOnlyDoesNotRequireTheRootToExist) {
  FakeProvider provider(runner_wrap);
  (void)provider.confine(Argv{"true"}, {ConfinedSandboxMode::kReadOnly, "/no/such", std::nullopt});
  EXPECT_EQ(provider.calls, 1);
}

TEST(SandboxProviderConfine, BackendUnavailabilityPropagatesUnchanged) {
  FakeProvider provider([](std::span<const std::string>, const SandboxPolicy&) -> ConfinedArgv {
    throw SandboxUnavailableError(ConfinedSandboxMode::kReadOnly, "probe: bwrap missing");
  });
  try {
    (void)provider.confine(Argv{"true"}, kReadOnly);
    FAIL() << "expected SandboxUnavailableError";
  } catch (const SandboxUnavailableError& error) {
    EXPECT_EQ(error.detail(), "probe: bwrap missing");
  }
}

void expect_refused_as_unavailable(FakeProvider::Wrap wrap) {
  FakeProvider provider(std::move(wrap));
  EXPECT_THROW((void)provider.confine(Argv{"bash", "-c", "rm -rf ~"}, kReadOnly),
               SandboxUnavailableError);
}

TEST(SandboxProviderConfine, PassthroughArgvFromABuggyBackendIsRefused) {
  expect_refused_as_unavailable([](std::span<const std::string> argv, const SandboxPolicy&) {
    return ConfinedArgv{Argv(argv.begin(), argv.end()), SandboxEnforcement::kFull, {}, {}};
  });
}

TEST(SandboxProviderConfine, WrapWithoutSeparatorOrRunnerIsRefused) {
  expect_refused_as_unavailable([](std::span<const std::string> argv, const SandboxPolicy&) {
    Argv wrapped = {"--"};
    wrapped.insert(wrapped.end(), argv.begin(), argv.end());
    return ConfinedArgv{wrapped, SandboxEnforcement::kFull, {}, {}};
  });
  expect_refused_as_unavailable([](std::span<const std::string> argv, const SandboxPolicy&) {
    Argv wrapped = {"/usr/bin/runner"};
    wrapped.insert(wrapped.end(), argv.begin(), argv.end());
    return ConfinedArgv{wrapped, SandboxEnforcement::kFull, {}, {}};
  });
}

TEST(SandboxProviderConfine, WrapOfADifferentCommandIsRefused) {
  expect_refused_as_unavailable([](std::span<const std::string>, const SandboxPolicy&) {
    return ConfinedArgv{
        {"/usr/bin/runner", "--", "bash", "-c", "true"}, SandboxEnforcement::kFull, {}, {}};
  });
}

TEST(SandboxProviderConfine, ProvidedDescriptorsMustBeDistinctNamedAndAboveStdio) {
  const Argv argv = {"ls"};
  const auto with_fds = [](std::vector<ProvidedFd> fds, Argv profile) {
    return [fds, profile](std::span<const std::string> seen, const SandboxPolicy&) {
      ConfinedArgv confined;
      confined.argv = {"/usr/bin/bwrap"};
      confined.argv.insert(confined.argv.end(), profile.begin(), profile.end());
      confined.argv.emplace_back("--");
      confined.argv.insert(confined.argv.end(), seen.begin(), seen.end());
      confined.provided_fds = fds;
      return confined;
    };
  };
  FakeProvider good(with_fds({{5, "x", "p"}}, {"--seccomp", "5"}));
  EXPECT_EQ(good.confine(argv, kReadOnly).provided_fds.size(), 1U);
  for (const auto& [fds, profile] : std::vector<std::pair<std::vector<ProvidedFd>, Argv>>{
           {{{2, "x", "p"}}, {"--seccomp", "2"}},
           {{{5, "x", "p"}, {5, "y", "p"}}, {"--seccomp", "5"}},
           {{{5, "x", "p"}}, {"--seccomp", "6"}}}) {
    FakeProvider provider(with_fds(fds, profile));
    EXPECT_THROW((void)provider.confine(argv, kReadOnly), SandboxUnavailableError);
  }
  // Named only in the command's own arguments: the runner would not read it.
  FakeProvider in_command(with_fds({{5, "x", "p"}}, {}));
  EXPECT_THROW((void)in_command.confine(Argv{"echo", "5"}, kReadOnly), SandboxUnavailableError);
}

// Status channels are descriptors too: distinct from each other and from the provided ones,
// named by a runner, and only where the caller asked for them (it opens nothing otherwise, so a
// runner would write its status into whatever the caller left at that number).
TEST(SandboxProviderConfine, StatusChannelsMustBeAskedForDistinctAndNamed) {
  const Argv argv = {"ls"};
  const auto with_channels = [](std::vector<StatusChannel> channels, Argv profile,
                                std::vector<ProvidedFd> fds = {}) {
    return [channels, profile, fds](std::span<const std::string> seen, const SandboxPolicy&) {
      ConfinedArgv confined;
      confined.argv = {"/usr/bin/bwrap"};
      confined.argv.insert(confined.argv.end(), profile.begin(), profile.end());
      confined.argv.emplace_back("--");
      confined.argv.insert(confined.argv.end(), seen.begin(), seen.end());
      confined.status_channels = channels;
      confined.provided_fds = fds;
      return confined;
    };
  };
  const StatusChannel bwrap{3, RunnerLayer::kBwrap, StatusFormat::kBwrapJson};
  const StatusChannel launcher{4, RunnerLayer::kLandlockRun, StatusFormat::kLauncherLines};
  const ConfineRequest wanted{argv, kReadOnly, "/", true};
  FakeProvider good(
      with_channels({bwrap, launcher}, {"--json-status-fd", "3", "--status-fd", "4"}));
  EXPECT_EQ(good.confine(wanted).status_channels, (std::vector<StatusChannel>{bwrap, launcher}));
  // Not asked for: the plain overload never gets a channel.
  EXPECT_THROW((void)good.confine(argv, kReadOnly), SandboxUnavailableError);
  FakeProvider unnamed(with_channels({bwrap}, {"--json-status-fd", "7"}));
  EXPECT_THROW((void)unnamed.confine(wanted), SandboxUnavailableError);
  FakeProvider stdio(with_channels({{2, RunnerLayer::kBwrap, StatusFormat::kBwrapJson}},
                                   {"--json-status-fd", "2"}));
  EXPECT_THROW((void)stdio.confine(wanted), SandboxUnavailableError);
  FakeProvider shared(
      with_channels({bwrap}, {"--json-status-fd", "3", "--seccomp", "3"}, {{3, "x", "p"}}));
  EXPECT_THROW((void)shared.confine(wanted), SandboxUnavailableError);
}

TEST(SandboxProviderConfine, TheWorkdirReachesTheBackendAndMustBeAbsolute) {
  const Argv argv = {"ls"};
  std::string seen_workdir;
  bool seen_channels = false;
  class Recording final : public SandboxProvider {
   public:
    Recording(std::string& workdir, bool& channels) : workdir_(workdir), channels_(channels) {}

   private:
    ConfinedArgv confine_validated(const ConfineRequest& request) override {
      workdir_ = request.workdir;
      channels_ = request.status_channels;
      return runner_wrap(request.argv, request.policy);
    }
    std::string& workdir_;
    bool& channels_;
  } provider(seen_workdir, seen_channels);
  (void)provider.confine(ConfineRequest{argv, kReadOnly, "/srv/work", true});
  EXPECT_EQ(seen_workdir, "/srv/work");
  EXPECT_TRUE(seen_channels);
  (void)provider.confine(argv, kReadOnly);
  EXPECT_EQ(seen_workdir, "");
  EXPECT_FALSE(seen_channels);
  seen_workdir = "untouched";
  for (const std::string& bad : {"relative/dir"s, "/a\0b"s}) {
    EXPECT_THROW((void)provider.confine(ConfineRequest{argv, kReadOnly, bad, false}),
                 InvalidSandboxInputError);
  }
  EXPECT_EQ(seen_workdir, "untouched");
}

// A runner found through PATH (or the working directory) could be one a confined run planted
// there: a wrap whose first word is not absolute is refused, as a backend with no runner
// configured whose argv starts with its own arguments.
TEST(SandboxProviderConfine, WrapWhoseRunnerIsNotAnAbsolutePathIsRefused) {
  for (const std::string& runner : {"bwrap"s, "./landlock-run"s, "--workspace"s}) {
    SCOPED_TRACE(runner);
    FakeProvider provider([&](std::span<const std::string> argv, const SandboxPolicy&) {
      Argv wrapped = {runner, "/ws", "--"};
      wrapped.insert(wrapped.end(), argv.begin(), argv.end());
      return ConfinedArgv{wrapped, SandboxEnforcement::kFull, {}, {}};
    });
    try {
      (void)provider.confine(Argv{"true"}, kReadOnly);
      FAIL() << "a relative runner must be refused";
    } catch (const SandboxUnavailableError& error) {
      // Refused before anything ran: a refusal, not a runner failure.
      EXPECT_NE(error.refusal().value_or("").find("not an absolute path"), std::string::npos)
          << error.what();
      EXPECT_EQ(error.detail(), std::nullopt);
    }
  }
}

}  // namespace
}  // namespace dsh::sandbox
