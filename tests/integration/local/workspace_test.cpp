// SPDX-License-Identifier: Apache-2.0
// A workspace spelled through a symlink or with `..` confines exactly the real directory, the
// one the command's chdir would reach (issue 4 point 8): a write there lands, a write beside the
// spelling (or at the lexical reading of `..`) is denied and absent. Library and CLI, both
// backends.
#include <unistd.h>

#include <algorithm>
#include <optional>

#include "local_harness.h"
#include "must_run.h"
#include "temp_dir.h"

namespace dsh::local_it {
namespace {

class SpelledWorkspace : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (const std::string missing = MissingHostFeature(); !missing.empty()) {
      DSH_SKIP_OR_FAIL(missing);
    }
    provider_ = MakeProvider(GetParam());
    // The CLI follows a symlinked workspace only when it can read the per-user record of the
    // directories confined runs could write: a private one for this test (root's is always
    // /run/dsh-sandbox).
    if (::geteuid() != 0) xdg_.emplace("XDG_RUNTIME_DIR", base_.Mkdir("xdg", 0700).c_str());
    // Through a symlink: links/ws -> real/ws, with links/other beside the spelling.
    base_.Mkdir("real");
    real_ = base_.Mkdir("real/ws");
    base_.Mkdir("links");
    linked_ = base_ / "links/ws";
    ASSERT_EQ(::symlink(real_.c_str(), linked_.c_str()), 0);
    beside_link_ = base_.Mkdir("links/other");
    // With `..` after a symlink: a -> x/y, so a/../b is x/b (what chdir reaches), not b.
    base_.Mkdir("x");
    base_.Mkdir("x/y");
    dotdot_real_ = base_.Mkdir("x/b");
    lexical_ = base_.Mkdir("b");
    ASSERT_EQ(::symlink((base_ / "x/y").c_str(), (base_ / "a").c_str()), 0);
    dotdot_ = base_ / "a/../b";
  }

  // Runs `script` confined to `spelled` (library, or the CLI when `cli`), workspace-write.
  RunResult RunIn(const std::string& spelled, const std::string& real, const std::string& script,
                  bool cli) {
    std::vector<std::string> argv;
    if (cli) {
      std::vector<std::string> args = {"confine", "--mode", "workspace-write", "--workspace",
                                       spelled};
      if (GetParam() == Backend::kLandlock) {
        const std::string config = base_ / (Unique("config") + ".json");
        llrt::WriteFile(config, R"({"bwrapPath": ")" + MissingBwrapPath() + R"("})");
        args.insert(args.end(), {"--config", config});
      }
      args.insert(args.end(), {"--", "/bin/bash", "-c", script});
      const RunResult confine = Cli(args);
      EXPECT_TRUE(confine.ExitedWith(0)) << confine.Describe();
      const nlohmann::json confined = ParseJson(confine.out);
      EXPECT_EQ(confined["backend"], ExpectedBackendName(GetParam()));
      for (const nlohmann::json& word : confined["argv"]) argv.push_back(word.get<std::string>());
    } else {
      const ConfinedArgv confined =
          Confine(*provider_, Bash(script), ConfinedSandboxMode::kWorkspaceWrite, spelled);
      EXPECT_EQ(confined.backend, ExpectedBackendName(GetParam()));
      argv = confined.argv;
    }
    // The grant names the real directory, never the spelling.
    EXPECT_NE(std::find(argv.begin(), argv.end(), real), argv.end());
    EXPECT_EQ(std::find(argv.begin(), argv.end(), spelled), argv.end());
    return llrt::Execute(argv);
  }

  void ExpectConfinedToRealDirectory(bool cli) {
    {
      const std::string landed = real_ + "/" + Unique("in");
      const std::string through_link = linked_ + "/" + Unique("via-link");
      const std::string denied = beside_link_ + "/" + Unique("beside");
      const RunResult result =
          RunIn(linked_, real_,
                "printf a > " + landed + "; echo real=$?; printf b > " + through_link +
                    "; echo link=$?; printf c > " + denied + "; echo beside=$?",
                cli);
      EXPECT_NE(result.out.find("real=0\nlink=0\nbeside="), std::string::npos) << result.Describe();
      EXPECT_EQ(result.out.find("beside=0"), std::string::npos) << result.Describe();
      EXPECT_EQ(llrt::ReadFile(landed), "a");
      EXPECT_EQ(llrt::ReadFile(through_link), "b");
      EXPECT_FALSE(llrt::Exists(denied)) << result.Describe();
    }
    {
      const std::string landed = dotdot_real_ + "/" + Unique("in");
      const std::string denied = lexical_ + "/" + Unique("lexical");
      const RunResult result = RunIn(
          dotdot_, dotdot_real_,
          "printf a > " + landed + "; echo real=$?; printf c > " + denied + "; echo lexical=$?",
          cli);
      EXPECT_NE(result.out.find("real=0\nlexical="), std::string::npos) << result.Describe();
      EXPECT_EQ(result.out.find("lexical=0"), std::string::npos) << result.Describe();
      EXPECT_EQ(llrt::ReadFile(landed), "a");
      EXPECT_FALSE(llrt::Exists(denied)) << result.Describe();
    }
  }

  std::unique_ptr<sandbox::LocalSandboxProvider> provider_;
  WorkDir base_;
  std::string real_, linked_, beside_link_, dotdot_real_, lexical_, dotdot_;
  std::optional<dsh::testing::ScopedEnv> xdg_;
};

TEST_P(SpelledWorkspace, LibraryConfinesExactlyTheRealDirectory) {
  ExpectConfinedToRealDirectory(false);
}

TEST_P(SpelledWorkspace, CliConfinesExactlyTheRealDirectory) {
  ExpectConfinedToRealDirectory(true);
}

INSTANTIATE_TEST_SUITE_P(Backends, SpelledWorkspace,
                         ::testing::Values(Backend::kNatural, Backend::kLandlock), ParamLabel);

}  // namespace
}  // namespace dsh::local_it
