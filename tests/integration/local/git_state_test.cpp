// SPDX-License-Identifier: Apache-2.0
// Git, by construction: every repository at or below the workspace (the workspace's own, a
// nested clone, a submodule, a linked worktree) survives each way a confined run can plant
// configuration or a hook, on the natural chain (bwrap+landlock) and on Landlock alone. Each
// attack runs inside through `dsh-sandbox run`; then a real, unconfined git runs outside
// (`git status`, `git commit`) and must not run the planted command: the marker file stays
// absent and the protected files keep their bytes. Ordinary git work inside keeps working.
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>

#include "local_harness.h"
#include "must_run.h"
#include "policy/git_state.h"
#include "wait.h"

namespace dsh::local_it {
namespace {

// The command every attack plants; it runs only if an unconfined git outside obeys the plant.
std::string fsmonitor_config(const std::string& marker) {
  return "[core]\n\tfsmonitor = touch " + marker + "\n";
}

class GitState : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (const std::string missing = missing_host_feature(); !missing.empty()) {
      DSH_SKIP_OR_FAIL(missing);
    }
    home_ = root_.mkdir("home", 0700);
    marker_ = root_ / "pwned";
    workspace_ = root_.mkdir("ws");
    const std::string source = root_.mkdir("subsource");
    git(source, "init -q -b main .");
    git(source, "commit -q --allow-empty -m sub");
    git(workspace_, "init -q -b main .");
    git(workspace_, "commit -q --allow-empty -m init");
    git(workspace_, "-c protocol.file.allow=always submodule add -q " + source + " sub");
    git(workspace_, "commit -q -m submodule");
    git(workspace_, "worktree add -q -b side " + workspace_ + "/wt");
    nested_ = workspace_ + "/nested/clone";
    git(workspace_, "init -q -b main " + nested_);
    git(nested_, "commit -q --allow-empty -m nested");
    if (GetParam() == Backend::kLandlock) {
      config_ = config_dir_ / "config.json";
      llrt::write_file(config_, R"({"bwrapPath": ")" + missing_bwrap_path() + R"("})");
    }
  }

  static std::vector<std::string> git_env() {
    return {"HOME=/nonexistent",      "PATH=/usr/bin:/bin",   "GIT_CONFIG_NOSYSTEM=1",
            "GIT_AUTHOR_NAME=t",      "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t",
            "GIT_COMMITTER_EMAIL=t@e"};
  }

  // A real git outside the sandbox; its output, and a failed assertion when it fails.
  static std::string git(const std::string& repo, const std::string& args) {
    const RunResult result = llrt::execute(
        {"/bin/sh", "-c", "git -C '" + repo + "' " + args + " 2>&1"}, {{}, -1, -1, git_env()});
    EXPECT_TRUE(result.exited_with(0)) << args << ": " << result.describe();
    return result.out;
  }

  RunResult run(const std::string& script) {
    std::vector<std::string> argv = {dsh_sandbox(),     "run",         "--mode",
                                     "workspace-write", "--workspace", workspace_};
    if (!config_.empty()) argv.insert(argv.end(), {"--config", config_});
    argv.insert(argv.end(), {"-c", "cd " + workspace_ + "\n" + script});
    testing::SpawnOptions spawn;
    spawn.env = git_env();
    spawn.env.front() = "HOME=" + home_;
    return llrt::execute(argv, spawn);
  }

  // The attack inside, then the person's git outside in `repo`: nothing planted runs, and each
  // of `kept` has its bytes of before. The run's result, for what the attack saw inside.
  RunResult attack(const std::string& script, const std::string& repo,
                   const std::vector<std::string>& kept) {
    std::vector<std::string> before;
    for (const std::string& path : kept) before.push_back(read_or_absent(path));
    // Each step may be refused (EROFS under bwrap); the run itself must have run them all.
    const RunResult result = run(script + "\ntrue");
    EXPECT_TRUE(result.exited_with(0)) << result.describe();
    // Only the git outside may make the marker: a git inside that obeyed the plant ran confined,
    // and on Landlock alone the host's /tmp is writable to it.
    ::unlink(marker_.c_str());
    for (std::size_t i = 0; i < kept.size(); ++i) {
      EXPECT_EQ(read_or_absent(kept[i]), before[i]) << kept[i] << "\n" << result.describe();
    }
    const RunResult status = llrt::execute(
        {"/bin/sh", "-c",
         "git -C '" + repo + "' status; git -C '" + repo + "' commit -q --allow-empty -m outside"},
        {{}, -1, -1, git_env()});
    EXPECT_FALSE(llrt::exists(marker_)) << "the planted command ran outside:\n"
                                        << result.describe() << "\n"
                                        << status.describe();
    return result;
  }

  // The check after the run takes a path as unchanged, without reading it, when its identity,
  // size and ctime are those of before and that ctime lay well before the run (ChangeJudge): a
  // path made a moment ago is always read again. So the tree an attack starts from is let age
  // past that margin first (a condition on the clock, not on another process), and the attack
  // meets the shortcut it tries to fool.
  static void age(const std::vector<std::string>& paths) {
    const auto aged = [&] {
      struct timespec now {};
      ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
      for (const std::string& path : paths) {
        struct stat info {};
        if (::lstat(path.c_str(), &info) != 0) return false;
        const auto nanos = [](const struct timespec& time) {
          return static_cast<std::int64_t>(time.tv_sec) * 1000000000 + time.tv_nsec;
        };
        if (nanos(now) - nanos(info.st_ctim) < 300000000) return false;
      }
      return true;
    };
    ASSERT_TRUE(testing::wait_until(aged, std::chrono::seconds(5)));
  }

  // A run that makes a repository and tries to hide where (`made`, its git directory), then
  // plants a hook and an fsmonitor in it: the supervisor finds it by layout at the call, so
  // neither lands, and no check after the run is needed to find it.
  void expect_ruled(const std::string& script, const std::string& made) {
    const RunResult result = run(script + "\nprintf '#!/bin/sh\\ntouch " + marker_ + "\\n' > '" +
                                 made + "/hooks/pre-commit'\ngit --git-dir='" + made +
                                 "' config core.fsmonitor 'touch " + marker_ + "'\necho ok");
    ASSERT_TRUE(result.exited_with(0)) << result.describe();
    EXPECT_FALSE(llrt::exists(made + "/hooks/pre-commit")) << result.describe();
    EXPECT_EQ(read_or_absent(made + "/config").find("fsmonitor"), std::string::npos);
    EXPECT_EQ(result.err.find("git state:"), std::string::npos) << result.err;
  }

  static std::string read_or_absent(const std::string& path) {
    return llrt::exists(path) ? llrt::read_file(path) : std::string("<absent>");
  }

  TempDir root_;
  TempDir config_dir_;
  std::string home_, marker_, workspace_, nested_, config_;
};

TEST_P(GitState, APlantedCommondirIsNotFollowed) {
  const std::string evil = workspace_ + "/evil";
  attack(
      "mkdir -p evil && cp -r .git/objects .git/refs .git/HEAD evil/\n"
      "printf '" +
          fsmonitor_config(marker_) +
          "' > evil/config\n"
          "echo ../evil > .git/commondir",
      workspace_, {workspace_ + "/.git/commondir"});
}

// The run swaps a git directory for a symlink to a directory outside every writable root:
// nothing cleans anything through it afterwards. Checked from outside: the victim's files, which
// no ordinary git name matches, are all still there.
TEST_P(GitState, AGitDirectorySwappedForASymlinkSteersNoRemoval) {
  const std::string victim = root_.mkdir("victim");
  for (const char* name : {"passwd", "hosts", "keep"}) {
    llrt::write_file(victim + "/" + name, name);
  }
  const RunResult result = run("mv nested/clone/.git nested/clone/.git-moved; ln -s " + victim +
                               " nested/clone/.git; true");
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  for (const char* name : {"passwd", "hosts", "keep"}) {
    EXPECT_TRUE(llrt::exists(victim + "/" + name)) << name << "\n" << result.describe();
  }
}

TEST_P(GitState, AConfigWorktreeIsNotPlantedWhereGitReadsOne) {
  git(workspace_, "config core.repositoryformatversion 1");
  git(workspace_, "config extensions.worktreeConfig true");
  attack("printf '" + fsmonitor_config(marker_) + "' > .git/config.worktree", workspace_,
         {workspace_ + "/.git/config"});
  // Made empty before the run, as git reads one here, and empty after it.
  EXPECT_EQ(read_or_absent(workspace_ + "/.git/config.worktree"), "");
}

TEST_P(GitState, TheConfigAndTheHooksStayAsTheyWere) {
  attack("git config core.fsmonitor 'touch " + marker_ +
             "'\n"
             "printf '#!/bin/sh\\ntouch " +
             marker_ +
             "\\n' > .git/hooks/pre-commit\n"
             "chmod +x .git/hooks/pre-commit",
         workspace_, {workspace_ + "/.git/config", workspace_ + "/.git/hooks/pre-commit"});
}

TEST_P(GitState, AHooksPathNotMadeYetCannotBeFilled) {
  git(workspace_, "config core.hooksPath .husky");
  attack("mkdir -p .husky && printf '#!/bin/sh\\ntouch " + marker_ +
             "\\n' > .husky/pre-commit && chmod +x .husky/pre-commit",
         workspace_, {workspace_ + "/.husky/pre-commit"});
}

TEST_P(GitState, AnIncludeTargetInsideTheWorktreeCannotBeWritten) {
  git(workspace_, "config include.path ../.gitconfig.local");
  attack("printf '" + fsmonitor_config(marker_) + "' > .gitconfig.local", workspace_,
         {workspace_ + "/.git/config"});
  EXPECT_EQ(read_or_absent(workspace_ + "/.gitconfig.local"), "");
}

TEST_P(GitState, ANestedRepositoryIsProtectedLikeTheWorkspaces) {
  attack(
      "git -C nested/clone config core.fsmonitor 'touch " + marker_ +
          "'\nprintf '#!/bin/sh\\ntouch " + marker_ +
          "\\n' > nested/clone/.git/hooks/pre-commit; chmod +x nested/clone/.git/hooks/pre-commit",
      nested_, {nested_ + "/.git/config", nested_ + "/.git/hooks/pre-commit"});
}

// Past the bind budget (under bwrap only the shallowest git directories are bound, and none on
// Landlock alone) the launcher's supervisor refuses the plant at the call: it never lands, so no
// check after the run, which a SIGKILL of the CLI would skip, is what stops it.
TEST_P(GitState, ARepositoryPastTheBindBudgetIsRefusedAtTheCall) {
  for (std::size_t i = 0; i < sandbox::policy::kMaxBoundGitDirs; ++i) {
    git(workspace_, "init -q -b main shallow" + std::to_string(i));
  }
  const std::string deep = workspace_ + "/deep/er/repo";
  git(workspace_, "init -q -b main " + deep);
  git(deep, "commit -q --allow-empty -m deep");
  const RunResult inside = attack(
      "git -C deep/er/repo config core.fsmonitor 'touch " + marker_ +
          "'\nprintf '#!/bin/sh\\ntouch " + marker_ +
          "\\n' > deep/er/repo/.git/hooks/pre-commit; chmod +x deep/er/repo/.git/hooks/pre-commit"
          "\ngit -C deep/er/repo config core.fsmonitor; ls deep/er/repo/.git/hooks/pre-commit",
      deep, {deep + "/.git/config", deep + "/.git/hooks/pre-commit"});
  EXPECT_EQ(inside.out.find("touch " + marker_), std::string::npos) << inside.describe();
  EXPECT_NE(inside.err.find("could not write config file"), std::string::npos) << inside.describe();
  EXPECT_NE(inside.err.find("No such file"), std::string::npos) << inside.describe();
}

TEST_P(GitState, ASubmodulesGitDirectoryIsProtected) {
  const std::string modules = workspace_ + "/.git/modules/sub";
  attack(
      "git -C sub config core.fsmonitor 'touch " + marker_ + "'\necho 'gitdir: ../evil' > sub/.git",
      workspace_ + "/sub", {modules + "/config", workspace_ + "/sub/.git"});
}

TEST_P(GitState, ALinkedWorktreesPointersStayAsTheyWere) {
  const std::string admin = workspace_ + "/.git/worktrees/wt";
  attack(
      "mkdir -p evil && cp -r .git/objects .git/refs .git/HEAD evil/\n"
      "printf '" +
          fsmonitor_config(marker_) +
          "' > evil/config\n"
          "echo \"gitdir: $PWD/evil\" > wt/.git\n"
          "echo ../evil > .git/worktrees/wt/commondir\n"
          "echo /tmp/elsewhere > .git/worktrees/wt/gitdir",
      workspace_ + "/wt", {workspace_ + "/wt/.git", admin + "/commondir", admin + "/gitdir"});
}

TEST_P(GitState, OrdinaryGitWorkInsideWorksAndIsKept) {
  const std::string remote = root_.mkdir("remote");
  git(remote, "init -q -b main .");
  git(remote, "commit -q --allow-empty -m from-remote");
  const RunResult result =
      run("set -e\n"
          "for r in . nested/clone; do (\n"
          "  cd $r\n"
          "  echo one > file && git add file && git commit -q -m one\n"
          "  git branch topic && git checkout -q topic && echo two > two && git add two\n"
          "  git commit -q -m two && git checkout -q main && git merge -q --no-ff --no-edit topic\n"
          "  git checkout -q -b rebased HEAD~1 && echo three > three && git add three\n"
          "  git commit -q -m three && git rebase -q main && git checkout -q main\n"
          "  echo dirty >> file && git stash -q && git stash pop -q && git checkout -q -- file\n"
          "  git gc -q\n"
          "); done\n"
          "git fetch -q " +
          remote + " main\necho ok");
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.out, "ok\n");
  // Nothing the work made was taken for a plant.
  EXPECT_EQ(result.err.find("git state:"), std::string::npos) << result.err;
  for (const std::string& repo : {workspace_, nested_}) {
    EXPECT_EQ(git(repo, "log -1 --format=%s main"), "Merge branch 'topic'\n");
    EXPECT_EQ(git(repo, "log -1 --format=%s rebased"), "three\n");
    EXPECT_EQ(git(repo, "fsck --no-progress --no-dangling"), "");
  }
}

TEST_P(GitState, ARepositoryTheRunCreatesIsRuled) {
  expect_ruled("git init -q made", workspace_ + "/made/.git");
}

// Times set back hide nothing: the rule looks at the layout when the call is made.
TEST_P(GitState, ARepositoryMadeWhereTheTimesAreSetBackIsRuled) {
  const std::string quiet = root_.mkdir("ws/old") + "/inner";
  ASSERT_EQ(::mkdir(quiet.c_str(), 0755), 0);
  age({quiet, workspace_ + "/old"});
  expect_ruled(
      "touch -r old/inner ref\n"
      "git init -q old/inner/made\n"
      "touch -r ref old/inner/made old/inner; touch -m -d @1000000000 old/inner/made/.git",
      quiet + "/made/.git");
}

TEST_P(GitState, AGitDirectoryRenamedIntoAnOldDirectoryIsRuled) {
  const std::string quiet = root_.mkdir("ws/quiet");
  age({quiet});
  expect_ruled(
      "touch -r quiet ref\n"
      "git init -q staging/x && git init -q --bare staging/bare\n"
      "mv staging/x/.git quiet/.git && mv staging/bare quiet/bare\n"
      "touch -r ref quiet quiet/.git quiet/bare",
      quiet + "/.git");
  expect_ruled(
      "git init -q --bare staging/bare2 && mv staging/bare2 quiet/bare2 && touch -r ref "
      "quiet quiet/bare2",
      quiet + "/bare2");
}

TEST_P(GitState, ARepositoryMadeDeepInNewDirectoriesIsRuled) {
  age({workspace_ + "/nested"});
  expect_ruled(
      "mkdir -p nested/a/b/c/d/e/f/g && git init -q nested/a/b/c/d/e/f/g\n"
      "touch -d @1000000000 nested/a/b/c/d/e/f/g nested/a/b/c/d/e/f nested/a/b/c nested/a "
      "nested",
      workspace_ + "/nested/a/b/c/d/e/f/g/.git");
}

// A nested repository's config rewritten in place to its old size (through a hard link made
// for it, which Landlock's evidence supervisor does not know), a hook moved in, and every time
// set back: only the ctime says so, and the check reads the config again and removes the hook.
TEST_P(GitState, AConfigRewrittenToItsSizeWithItsTimesSetBackIsPutBack) {
  const std::string dotgit = nested_ + "/.git";
  age({dotgit, dotgit + "/config", dotgit + "/hooks"});
  const std::string plant = "[core]\\n\\tfsmonitor = touch " + marker_ + "\\n";
  attack(
      "c=nested/clone/.git\n"
      "for f in config hooks .; do touch -r $c/$f ref-$(basename $f); done\n"
      "size=$(stat -c %s $c/config); printf '" +
          plant +
          "' > plant; body=$(stat -c %s plant)\n"
          "{ cat plant; head -c $((size - body - 1)) /dev/zero | tr '\\0' '#'; echo; } > new\n"
          "ln $c/config link && cat new > link; rm -f link\n"
          "printf '#!/bin/sh\\ntouch " +
          marker_ +
          "\\n' > hook && chmod +x hook && mv hook $c/hooks/pre-commit\n"
          "touch -r ref-config $c/config; touch -r ref-hooks $c/hooks; touch -r ref-. $c",
      nested_, {dotgit + "/config", dotgit + "/hooks/pre-commit"});
}

INSTANTIATE_TEST_SUITE_P(Backends, GitState,
                         ::testing::Values(Backend::kNatural, Backend::kLandlock), param_label);

}  // namespace
}  // namespace dsh::local_it
