// SPDX-License-Identifier: Apache-2.0
// A workspace spelled through a symlink or with `..` confines exactly the real directory, the
// one the command's chdir would reach: a write there lands, a write beside the
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
    if (const std::string missing = missing_host_feature(); !missing.empty()) {
      DSH_SKIP_OR_FAIL(missing);
    }
    provider_ = make_provider(GetParam());
    // The CLI follows a symlinked workspace only when it can read the per-user record of the
    // directories confined runs could write: a private one for this test (root's is always
    // /run/dsh-sandbox).
    if (::geteuid() != 0) xdg_.emplace("XDG_RUNTIME_DIR", base_.mkdir("xdg", 0700).c_str());
    // Through a symlink: links/ws -> real/ws, with links/other beside the spelling.
    base_.mkdir("real");
    real_ = base_.mkdir("real/ws");
    base_.mkdir("links");
    linked_ = base_ / "links/ws";
    ASSERT_EQ(::symlink(real_.c_str(), linked_.c_str()), 0);
    beside_link_ = base_.mkdir("links/other");
    // With `..` after a symlink: a -> x/y, so a/../b is x/b (what chdir reaches), not b.
    base_.mkdir("x");
    base_.mkdir("x/y");
    dotdot_real_ = base_.mkdir("x/b");
    lexical_ = base_.mkdir("b");
    ASSERT_EQ(::symlink((base_ / "x/y").c_str(), (base_ / "a").c_str()), 0);
    dotdot_ = base_ / "a/../b";
  }

  // Runs `script` confined to `spelled` (library, or the CLI when `cli`), workspace-write.
  RunResult run_in(const std::string& spelled, const std::string& real, const std::string& script,
                   bool cli) {
    std::vector<std::string> argv;
    if (cli) {
      std::vector<std::string> args = {"confine", "--mode", "workspace-write", "--workspace",
                                       spelled};
      if (GetParam() == Backend::kLandlock) {
        const std::string config = base_ / (unique("config") + ".json");
        llrt::write_file(config, R"({"bwrapPath": ")" + missing_bwrap_path() + R"("})");
        args.insert(args.end(), {"--config", config});
      }
      args.insert(args.end(), {"--", "/bin/bash", "-c", script});
      const RunResult confine = run_cli(args);
      EXPECT_TRUE(confine.exited_with(0)) << confine.describe();
      const nlohmann::json confined = parse_json(confine.out);
      EXPECT_EQ(confined["backend"], expected_backend_name(GetParam()));
      for (const nlohmann::json& word : confined["argv"]) argv.push_back(word.get<std::string>());
    } else {
      const ConfinedArgv confined =
          confine(*provider_, bash(script), ConfinedSandboxMode::kWorkspaceWrite, spelled);
      EXPECT_EQ(confined.backend, expected_backend_name(GetParam()));
      argv = confined.argv;
    }
    // The grant names the real directory, never the spelling.
    EXPECT_NE(std::find(argv.begin(), argv.end(), real), argv.end());
    EXPECT_EQ(std::find(argv.begin(), argv.end(), spelled), argv.end());
    return llrt::execute(argv);
  }

  void expect_confined_to_real_directory(bool cli) {
    {
      const std::string landed = real_ + "/" + unique("in");
      const std::string through_link = linked_ + "/" + unique("via-link");
      const std::string denied = beside_link_ + "/" + unique("beside");
      const RunResult result =
          run_in(linked_, real_,
                 "printf a > " + landed + "; echo real=$?; printf b > " + through_link +
                     "; echo link=$?; printf c > " + denied + "; echo beside=$?",
                 cli);
      EXPECT_NE(result.out.find("real=0\nlink=0\nbeside="), std::string::npos) << result.describe();
      EXPECT_EQ(result.out.find("beside=0"), std::string::npos) << result.describe();
      EXPECT_EQ(llrt::read_file(landed), "a");
      EXPECT_EQ(llrt::read_file(through_link), "b");
      EXPECT_FALSE(llrt::exists(denied)) << result.describe();
    }
    {
      const std::string landed = dotdot_real_ + "/" + unique("in");
      const std::string denied = lexical_ + "/" + unique("lexical");
      const RunResult result = run_in(
          dotdot_, dotdot_real_,
          "printf a > " + landed + "; echo real=$?; printf c > " + denied + "; echo lexical=$?",
          cli);
      EXPECT_NE(result.out.find("real=0\nlexical="), std::string::npos) << result.describe();
      EXPECT_EQ(result.out.find("lexical=0"), std::string::npos) << result.describe();
      EXPECT_EQ(llrt::read_file(landed), "a");
      EXPECT_FALSE(llrt::exists(denied)) << result.describe();
    }
  }

  std::unique_ptr<sandbox::LocalSandboxProvider> provider_;
  TempDir base_;
  std::string real_, linked_, beside_link_, dotdot_real_, lexical_, dotdot_;
  std::optional<dsh::testing::ScopedEnv> xdg_;
};

TEST_P(SpelledWorkspace, LibraryConfinesExactlyTheRealDirectory) {
  expect_confined_to_real_directory(false);
}

TEST_P(SpelledWorkspace, CliConfinesExactlyTheRealDirectory) {
  expect_confined_to_real_directory(true);
}

INSTANTIATE_TEST_SUITE_P(Backends, SpelledWorkspace,
                         ::testing::Values(Backend::kNatural, Backend::kLandlock), param_label);

}  // namespace
}  // namespace dsh::local_it
