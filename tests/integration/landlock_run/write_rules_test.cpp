// SPDX-License-Identifier: Apache-2.0
// --rule-writes: write-class calls beneath the writable roots are decided by rule and performed by
// the supervisor. Every attack runs inside with real bash and git; the verdict is a real git run
// outside afterwards (a hook, an fsmonitor or an alternates entry would leave a marker) and the
// files themselves. Ordinary git work inside must keep passing.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "must_run.h"

namespace llrt {
namespace {

class LandlockRunWriteRules : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kernel_abi() < 1) DSH_SKIP_OR_FAIL("this kernel does not enforce Landlock (lsm=landlock)");
    ASSERT_TRUE(outside({"init", "-q", repo_}).exited_with(0));
    ASSERT_TRUE(
        outside({"-C", repo_, "commit", "-q", "--allow-empty", "-m", "first"}).exited_with(0));
  }

  // A git command outside the sandbox, as the person would run it later.
  RunResult outside(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {"/usr/bin/git", "-c", "user.name=t", "-c", "user.email=t@e"};
    argv.insert(argv.end(), args.begin(), args.end());
    return execute(argv, {{}, -1, -1, environment()});
  }

  std::vector<std::string> environment() const {
    return {"PATH=/usr/bin:/bin",      "HOME=" + home_,        "GIT_CONFIG_NOSYSTEM=1",
            "GIT_AUTHOR_NAME=t",       "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t",
            "GIT_COMMITTER_EMAIL=t@e", "MARKER=" + marker_};
  }

  // `bash -c script` in the workspace under the launcher with the rules on; the supervisor's
  // records (its status descriptor) are appended to the result's err.
  RunResult confined(const std::string& script, const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> args = {"--ro",        "/",         "--rw",       dir_.path(),
                                     "--rw",        "/dev/null", "--evidence", "--rule-writes",
                                     "--status-fd", "3"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--chdir", dir_.path(), "--", "/bin/bash", "-c", script});
    int status[2];
    EXPECT_EQ(pipe2(status, O_CLOEXEC | O_NONBLOCK), 0);
    RunResult run = execute(l(args), {{{status[1], 3}}, -1, -1, environment()});
    close(status[1]);
    char buffer[4096];
    for (ssize_t n; (n = read(status[0], buffer, sizeof(buffer))) > 0;)
      run.err.append(buffer, static_cast<size_t>(n));
    close(status[0]);
    return run;
  }

  // The person's next git commands outside: a planted hook or fsmonitor writes the marker.
  void expect_nothing_runs_outside(const std::string& repo) const {
    outside({"-C", repo, "status"});
    outside({"-C", repo, "commit", "-q", "--allow-empty", "-m", "after"});
    outside({"-C", repo, "checkout", "-q", "-b", "after-run"});
    EXPECT_FALSE(exists(marker_)) << "a plant ran outside: " << read_file(marker_);
  }

  TempDir dir_;
  TempDir outer_;
  std::string repo_ = dir_ / "repo";
  std::string home_ = dir_ / "home";
  std::string marker_ = outer_ / "marker";
};

TEST_F(LandlockRunWriteRules, OrdinaryGitWorkKeepsWorking) {
  const RunResult run = confined(R"(set -e
    cd repo
    echo a > a && git add a && git commit -qm a
    git checkout -qb topic && echo b > b && git add b && git commit -qm b
    git checkout -q master && echo c > c && git add c && git commit -qm c
    git merge -q --no-edit topic
    git checkout -q topic && git rebase -q master
    echo d >> a && git stash -q && git stash pop -q && git commit -qam d
    git gc -q
    git config user.name confined
    git worktree add -q ../linked && (cd ../linked && echo w > w && git add w && git commit -qm w)
    cd .. && git init -q fresh && (cd fresh && echo f > f && git add f && git commit -qm f)
    git init -q --bare bare.git && git clone -q repo clone
    echo done)");
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(run.out, "done\n");
  EXPECT_TRUE(outside({"-C", repo_, "log", "--oneline", "topic"}).out.find(" d\n") !=
              std::string::npos);
  EXPECT_TRUE(outside({"-C", dir_ / "fresh", "log", "--oneline"}).exited_with(0));
  EXPECT_TRUE(outside({"-C", dir_ / "linked", "status", "--short"}).exited_with(0));
  EXPECT_NE(read_file(repo_ + "/.git/config").find("name = confined"), std::string::npos);
}

// Each plant from the attack review: a hook, a config naming a program, a commondir, alternates,
// info/, a hook dir moved in, the .git moved aside and back.
TEST_F(LandlockRunWriteRules, NothingGitRunsOrReadsAsConfigurationCanBePlanted) {
  const std::string hook = "#!/bin/sh\necho hook >> \"$MARKER\"\n";
  write_file(outer_ / "hook", hook, 0755);
  const std::string script = "cd repo; H=" + outer_ / "hook" + R"(
    cp "$H" .git/hooks/pre-commit; cp "$H" .git/hooks/post-checkout
    git config core.fsmonitor "$H"; git config core.hooksPath "$PWD/../hooks"
    printf '[core]\n\tfsmonitor = %s\n' "$H" >> .git/config
    echo ../../elsewhere > .git/commondir
    mkdir -p ../alt/objects && echo "$PWD/../alt/objects" > .git/objects/info/alternates
    mkdir ../info && echo "$PWD/../alt/objects" > ../info/alternates
    rm -rf .git/objects/info; ln -s ../../../info .git/objects/info; mv ../info .git/objects/info
    echo '* diff=evil' > .git/info/attributes
    mkdir ../hooks && cp "$H" ../hooks/pre-commit && rm -rf .git/hooks && mv ../hooks .git/hooks
    mv .git .git.real && cp "$H" .git.real/hooks/pre-commit; mv .git.real .git
    ln .git/config ../config-alias && echo "[core] fsmonitor = $H" >> ../config-alias
    true)";
  const RunResult run = confined(script);
  EXPECT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_NE(run.err.find("rule=deny-write"), std::string::npos) << run.err;
  EXPECT_FALSE(exists(repo_ + "/.git/hooks/pre-commit"));
  EXPECT_FALSE(exists(repo_ + "/.git/commondir"));
  EXPECT_FALSE(exists(repo_ + "/.git/objects/info/alternates"));
  EXPECT_FALSE(exists(repo_ + "/.git/info/attributes"));
  const std::string config = read_file(repo_ + "/.git/config");
  EXPECT_EQ(config.find("fsmonitor"), std::string::npos) << config;
  EXPECT_EQ(config.find("hooksPath"), std::string::npos) << config;
  expect_nothing_runs_outside(repo_);
}

// The same plant without the rules lands and runs outside: the attack above is a real one.
TEST_F(LandlockRunWriteRules, WithoutTheRulesAHookLandsAndRuns) {
  write_file(outer_ / "hook", "#!/bin/sh\necho hook >> \"$MARKER\"\n", 0755);
  const RunResult run = execute(l({"--ro", "/", "--rw", dir_.path(), "--", "/bin/cp",
                                   outer_ / "hook", repo_ + "/.git/hooks/pre-commit"}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  outside({"-C", repo_, "commit", "-q", "--allow-empty", "-m", "after"});
  EXPECT_TRUE(exists(marker_));
}

// A directory that becomes a git directory must arrive clean: made with a hook first, then given
// objects/ and refs/ (or renamed to .git), it is refused.
TEST_F(LandlockRunWriteRules, ADirectoryBecomingAGitDirectoryMustBeClean) {
  write_file(outer_ / "hook", "#!/bin/sh\necho hook >> \"$MARKER\"\n", 0755);
  const std::string script = "H=" + outer_ / "hook" + R"(
    mkdir -p fake/hooks && cp "$H" fake/hooks/pre-commit && echo 'ref: refs/heads/master' > fake/HEAD
    mkdir fake/refs; mkdir fake/objects; echo "objects: $?"
    mkdir -p work && mv fake work/.git; echo "renamed: $?")";
  const RunResult run = confined(script);
  EXPECT_NE(run.out.find("objects: 1"), std::string::npos) << run.describe();
  EXPECT_NE(run.out.find("renamed: 1"), std::string::npos) << run.describe();
  EXPECT_FALSE(exists(dir_ / "fake/objects"));
  EXPECT_FALSE(exists(dir_ / "work/.git"));
}

// git writes config as config.lock renamed into place: the supervisor puts a copy of the checked
// text there, so a descriptor kept on the lock file writes nothing git reads.
TEST_F(LandlockRunWriteRules, AKeptLockDescriptorCannotRewriteConfig) {
  const RunResult run = confined(R"(cd repo
    exec 5> .git/config.lock
    printf '[core]\n\tbare = false\n' >&5
    mv .git/config.lock .git/config && echo renamed
    printf '\tfsmonitor = /bin/false\n' >&5)");
  EXPECT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(run.out, "renamed\n");
  EXPECT_EQ(read_file(repo_ + "/.git/config"), "[core]\n\tbare = false\n");
}

// The parent is pinned before the rule looks at it: a directory swapped for a link to .git/hooks
// while a second loop writes through it never lands a hook.
TEST_F(LandlockRunWriteRules, ASymlinkSwapRaceLandsNothing) {
  const RunResult run = confined(R"(cd repo; mkdir real
    ( for i in $(seq 400); do rm -rf d; mkdir d; rm -rf d; ln -s .git/hooks d; done ) &
    for i in $(seq 400); do echo x 2>/dev/null > d/pre-commit; done; wait
    ls .git/hooks | grep -v sample; true)");
  EXPECT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_FALSE(exists(repo_ + "/.git/hooks/pre-commit"));
  EXPECT_EQ(run.out, "");
}

// Homes: every dot-entry is read-only but the data list; an ordinary file in the home is not.
TEST_F(LandlockRunWriteRules, AHomesDotEntriesAreReadOnlyButItsDataList) {
  ASSERT_EQ(mkdir(home_.c_str(), 0755), 0);
  const RunResult run = confined(R"(cd home
    echo 'shell echo gdb >> $MARKER' > .gdbinit; echo "gdbinit: $?"
    mkdir -p .vim/plugin; echo "vim: $?"
    mkdir -p .pyenv/shims; echo "pyenv: $?"
    echo x >> .bashrc; echo "bashrc: $?"
    mkdir -p .cache/pip/http && echo data > .cache/pip/http/entry; echo "cache: $?"
    echo notes > notes.txt; echo "plain: $?")",
                                 {"--rule-home", home_});
  EXPECT_EQ(run.out, "gdbinit: 1\nvim: 1\npyenv: 1\nbashrc: 1\ncache: 0\nplain: 0\n")
      << run.describe();
  EXPECT_FALSE(exists(home_ + "/.gdbinit"));
  EXPECT_FALSE(exists(home_ + "/.vim"));
  EXPECT_FALSE(exists(home_ + "/.pyenv"));
  EXPECT_TRUE(exists(home_ + "/.cache/pip/http/entry"));
}

// Fail closed: the rules need the supervisor; asked for without it the launcher refuses to run.
TEST_F(LandlockRunWriteRules, RulesWithoutTheSupervisorAreRefused) {
  const RunResult run = execute(l({"--ro", "/", "--rule-writes", "--", "/bin/true"}));
  EXPECT_TRUE(run.exited_with(125)) << run.describe();
  EXPECT_NE(run.err.find("need --evidence"), std::string::npos) << run.err;
  const RunResult home =
      execute(l({"--ro", "/", "--evidence", "--rule-home", "/", "--", "/bin/true"}));
  EXPECT_TRUE(home.exited_with(125)) << home.describe();
}

}  // namespace
}  // namespace llrt
