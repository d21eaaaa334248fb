// SPDX-License-Identifier: Apache-2.0
// Decided at the call: through `dsh-sandbox run` on bwrap+landlock and on Landlock alone, a plant
// in a git directory or a home's dot-entry is refused by the launcher's supervisor when the call
// is made, so nothing depends on the CLI living to the end of the run. Each case attacks inside
// and judges outside with the real tool: git status / git commit (a hook or an fsmonitor would
// make the marker), gdb -batch (a ~/.gdbinit would). The person's own concurrent git work is
// never undone.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <thread>

#include "local_harness.h"
#include "must_run.h"
#include "wait.h"

namespace dsh::local_it {
namespace {

class WriteRules : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (const std::string missing = missing_host_feature(); !missing.empty()) {
      DSH_SKIP_OR_FAIL(missing);
    }
    workspace_ = root_.mkdir("ws");
    home_ = workspace_ + "/home";
    marker_ = root_ / "pwned";
    llrt::write_file(root_ / "plant", "#!/bin/sh\ntouch " + marker_ + "\n", 0755);
    git("init -q -b main .");
    git("commit -q --allow-empty -m init");
    if (GetParam() == Backend::kLandlock) {
      config_ = config_dir_ / "config.json";
      llrt::write_file(config_, R"({"bwrapPath": ")" + missing_bwrap_path() + R"("})");
    }
  }

  std::vector<std::string> env() const {
    return {"HOME=" + home_,           "PATH=/usr/bin:/bin",      "GIT_CONFIG_NOSYSTEM=1",
            "GIT_AUTHOR_NAME=t",       "GIT_AUTHOR_EMAIL=t@e",    "GIT_COMMITTER_NAME=t",
            "GIT_COMMITTER_EMAIL=t@e", "PLANT=" + root_ / "plant"};
  }

  // A real git outside the sandbox, in the workspace.
  RunResult git(const std::string& args) const {
    return llrt::execute({"/bin/sh", "-c", "git -C '" + workspace_ + "' " + args + " 2>&1"},
                         {{}, -1, -1, env()});
  }

  std::vector<std::string> run_argv(const std::string& script) const {
    std::vector<std::string> argv = {dsh_sandbox(),     "run",         "--mode",
                                     "workspace-write", "--workspace", workspace_};
    if (!config_.empty()) argv.insert(argv.end(), {"--config", config_});
    argv.insert(argv.end(), {"-c", "cd " + workspace_ + "\n" + script});
    return argv;
  }

  RunResult run(const std::string& script) const {
    return llrt::execute(run_argv(script), {{}, -1, -1, env()});
  }

  // The person's next git commands: a planted hook or fsmonitor makes the marker.
  void expect_git_runs_nothing() const {
    ::unlink(marker_.c_str());
    const RunResult status =
        git("status; git -C '" + workspace_ + "' commit -q --allow-empty -m outside; git -C '" +
            workspace_ + "' checkout -q -b outside-" + std::to_string(++checks_));
    EXPECT_FALSE(llrt::exists(marker_)) << "a plant ran outside:\n" << status.describe();
    EXPECT_FALSE(llrt::exists(workspace_ + "/.git/hooks/pre-commit"));
    EXPECT_FALSE(llrt::exists(workspace_ + "/.git/hooks/post-checkout"));
  }

  // Plants again and again until killed: a hook, an fsmonitor, a hooksPath.
  static constexpr const char* kPlantLoop =
      "touch started; while :; do cp \"$PLANT\" .git/hooks/pre-commit; "
      "cp \"$PLANT\" .git/hooks/post-checkout; git config core.fsmonitor \"$PLANT\"; "
      "printf '[core]\\n\\tfsmonitor = %s\\n' \"$PLANT\" >> .git/config; "
      "sleep 0.05; done 2>/dev/null";

  TempDir root_;
  TempDir config_dir_;
  std::string workspace_, home_, marker_, config_;
  mutable int checks_ = 0;
};

// While a run lasts nothing is live: the person's git during the run runs no plant, and a
// SIGKILL of the CLI (what an OOM kill or a closed terminal does) leaves none behind.
TEST_P(WriteRules, ASigkilledCliLeavesNothingPlanted) {
  testing::Started started(run_argv(kPlantLoop), {{}, -1, -1, env()});
  ASSERT_TRUE(testing::wait_until([&] { return llrt::exists(workspace_ + "/started"); },
                                  std::chrono::seconds(20)));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  expect_git_runs_nothing();
  ::kill(started.pid(), SIGKILL);
  started.wait(std::chrono::seconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  expect_git_runs_nothing();
  EXPECT_EQ(llrt::read_file(workspace_ + "/.git/config").find("fsmonitor"), std::string::npos);
}

// Two confined calls at once in one workspace: neither saves the other's plant for later.
TEST_P(WriteRules, TwoConcurrentCallsPlantNothing) {
  const std::string bounded =
      "for i in $(seq 15); do cp \"$PLANT\" .git/hooks/pre-commit; "
      "git config core.fsmonitor \"$PLANT\"; sleep 0.03; done 2>/dev/null; true";
  testing::Started first(run_argv(bounded), {{}, -1, -1, env()});
  testing::Started second(run_argv(bounded), {{}, -1, -1, env()});
  EXPECT_TRUE(first.wait(std::chrono::seconds(60)).exited_with(0));
  EXPECT_TRUE(second.wait(std::chrono::seconds(60)).exited_with(0));
  expect_git_runs_nothing();
}

// The person's git work outside during a run (a remote, a config value, git-annex's data
// directory) is kept: nothing after the run reverts or deletes it.
TEST_P(WriteRules, ThePersonsConcurrentGitWorkSurvivesARun) {
  testing::Started started(run_argv("touch started; sleep 1; echo a > a; git add a; "
                                    "git commit -q -m inside; echo done"),
                           {{}, -1, -1, env()});
  ASSERT_TRUE(testing::wait_until([&] { return llrt::exists(workspace_ + "/started"); },
                                  std::chrono::seconds(20)));
  EXPECT_TRUE(git("remote add origin https://example.invalid/r.git").exited_with(0));
  EXPECT_TRUE(git("config user.name person").exited_with(0));
  ASSERT_EQ(::mkdir((workspace_ + "/.git/annex").c_str(), 0755), 0);
  llrt::write_file(workspace_ + "/.git/annex/data", "kept", 0644);
  const RunResult result = started.wait(std::chrono::seconds(60));
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.out, "done\n");
  EXPECT_EQ(git("config remote.origin.url").out, "https://example.invalid/r.git\n");
  EXPECT_EQ(git("config user.name").out, "person\n");
  EXPECT_EQ(llrt::read_file(workspace_ + "/.git/annex/data"), "kept");
  EXPECT_EQ(git("log -1 --format=%s").out, "inside\n");
}

// A directory swapped for a link to .git/hooks while a second loop writes through it: the
// supervisor judges the directory it pinned, so no hook lands.
TEST_P(WriteRules, ASymlinkSwapRaceAgainstTheSupervisorLandsNothing) {
  const RunResult result =
      run("( for i in $(seq 300); do rm -rf d; mkdir d; rm -rf d; ln -s .git/hooks d; done ) &\n"
          "for i in $(seq 300); do cp \"$PLANT\" d/pre-commit 2>/dev/null; done; wait; true");
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  expect_git_runs_nothing();
}

// A home under the workspace: its dot-entries (a debugger's, an editor's plugins, a version
// manager's shims) are read-only; its data list and its plain files are not.
TEST_P(WriteRules, AHomesDotEntriesUnderAWritableRootAreReadOnly) {
  ASSERT_EQ(::mkdir(home_.c_str(), 0755), 0);
  const RunResult result =
      run("cd home; echo \"shell touch $PWD/../../pwned\" > .gdbinit; echo gdbinit=$?\n"
          "mkdir -p .vim/plugin && echo '!touch x' > .vim/plugin/x.vim; echo vim=$?\n"
          "mkdir -p .pyenv/shims && cp \"$PLANT\" .pyenv/shims/python; echo shim=$?\n"
          "mkdir -p .cache/pip/http && echo d > .cache/pip/http/e; echo cache=$?\n"
          "echo n > notes; echo plain=$?");
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.out, "gdbinit=1\nvim=1\nshim=1\ncache=0\nplain=0\n") << result.describe();
  EXPECT_FALSE(llrt::exists(home_ + "/.gdbinit"));
  EXPECT_FALSE(llrt::exists(home_ + "/.vim"));
  EXPECT_FALSE(llrt::exists(home_ + "/.pyenv"));
  if (::access("/usr/bin/gdb", X_OK) == 0) {
    llrt::execute({"/usr/bin/gdb", "-batch", "-ex", "quit"}, {{}, -1, -1, env()});
    EXPECT_FALSE(llrt::exists(marker_));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, WriteRules,
                         ::testing::Values(Backend::kNatural, Backend::kLandlock), param_label);

}  // namespace
}  // namespace dsh::local_it
