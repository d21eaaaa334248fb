// SPDX-License-Identifier: Apache-2.0
// The natural selection, bwrap with landlock-run inside, run for real with real bash: read-only
// denials, a usable /dev, a private PID namespace that closes the /proc/<pid>/root escape,
// descendants the command can manage, and a workspace-write /tmp that leaves nothing on the host.
// Every effect is judged from outside.
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>

#include "local_harness.h"
#include "must_run.h"

namespace dsh::local_it {
namespace {

constexpr ConfinedSandboxMode kModes[] = {ConfinedSandboxMode::kReadOnly,
                                          ConfinedSandboxMode::kWorkspaceWrite};

bool mentions(const RunResult& result, const std::vector<std::string>& signatures) {
  for (const std::string& signature : signatures) {
    if (lower(result.err).find(signature) != std::string::npos) return true;
  }
  return false;
}

class Bwrap : public ProviderTest {
 protected:
  Bwrap() : ProviderTest(Backend::kNatural) {}
  ConfinedArgv wrap(ConfinedSandboxMode mode, const std::string& script) {
    ConfinedArgv confined = confine(*provider_, bash(script), mode, workspace_);
    EXPECT_EQ(confined.backend, "bwrap+landlock");
    EXPECT_EQ(confined.argv.front(), "/usr/bin/bwrap");
    return confined;
  }
};

TEST_F(Bwrap, ReadOnlyWriteFailsWithReadOnlyFileSystem) {
  const std::string target = workspace_ + "/" + unique("file");
  const ConfinedArgv confined = wrap(ConfinedSandboxMode::kReadOnly, "printf x > " + target);
  const RunResult result = spawn(confined);
  EXPECT_FALSE(result.exited_with(0)) << result.describe();
  EXPECT_NE(lower(result.err).find("read-only file system"), std::string::npos)
      << result.describe();
  EXPECT_TRUE(mentions(result, confined.denial_signatures)) << result.describe();
  EXPECT_FALSE(llrt::exists(target));
}

TEST_F(Bwrap, ReadOnlyListsRootIntoDevNull) {
  const RunResult result =
      spawn(wrap(ConfinedSandboxMode::kReadOnly, "ls / > /dev/null && echo dev-ok"));
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.out, "dev-ok\n") << result.describe();
}

TEST_F(Bwrap, PidNamespaceDiffersFromTheHostsInBothModes) {
  const std::string host = host_pid_namespace();
  ASSERT_EQ(host.rfind("pid:[", 0), 0U) << host;
  for (const ConfinedSandboxMode mode : kModes) {
    const RunResult result = spawn(wrap(mode, "readlink /proc/self/ns/pid"));
    ASSERT_TRUE(result.exited_with(0)) << result.describe();
    EXPECT_EQ(result.out.rfind("pid:[", 0), 0U) << result.describe();
    EXPECT_NE(result.out, host + "\n") << result.describe();
  }
}

// With host PIDs visible, /proc/<pid>/root leads into the host's mount view, where the
// read-only binds do not apply. Every PID the command can see is tried.
TEST_F(Bwrap, ProcRootEscapeIsClosedInBothModes) {
  for (const ConfinedSandboxMode mode : kModes) {
    // Writable on the host, not inside: the workspace under read-only, a sibling otherwise.
    const std::string dir = mode == ConfinedSandboxMode::kReadOnly ? workspace_ : sibling_;
    const std::string target = dir + "/" + unique("escape");
    const RunResult result =
        spawn(wrap(mode, "printf x > /proc/1/root" + target + "; one=$?; " +
                             "for p in /proc/[0-9]*; do printf x > $p/root" + target +
                             " 2>/dev/null && echo escaped-via-$p; done; exit $one"));
    EXPECT_FALSE(result.exited_with(0)) << result.describe();
    EXPECT_EQ(result.out.find("escaped"), std::string::npos) << result.describe();
    EXPECT_FALSE(llrt::exists(target)) << result.describe();
  }
}

TEST_F(Bwrap, SleepDescendantCanBeSignalledAndWaitedFor) {
  for (const ConfinedSandboxMode mode : kModes) {
    const RunResult result = spawn(wrap(mode,
                                        "sleep 300 & p=$!; kill -0 $p && echo alive; "
                                        "kill -TERM $p; wait $p; echo status=$?"));
    EXPECT_TRUE(result.exited_with(0)) << result.describe();
    EXPECT_EQ(result.out, "alive\nstatus=143\n") << result.describe();
  }
}

TEST_F(Bwrap, WorkspaceWriteLandsInsideOnlyAndTmpLeavesNothingOnTheHost) {
  const std::string inside = workspace_ + "/" + unique("inside");
  const std::string beside = sibling_ + "/" + unique("beside");
  const std::string tmp = "/tmp/" + unique("dsh-local-tmp");
  ASSERT_FALSE(llrt::exists(tmp));

  const RunResult in = spawn(wrap(ConfinedSandboxMode::kWorkspaceWrite, "printf in > " + inside));
  EXPECT_TRUE(in.exited_with(0)) << in.describe();
  EXPECT_EQ(llrt::read_file(inside), "in");

  const ConfinedArgv denied = wrap(ConfinedSandboxMode::kWorkspaceWrite, "printf x > " + beside);
  const RunResult out = spawn(denied);
  EXPECT_FALSE(out.exited_with(0)) << out.describe();
  EXPECT_TRUE(mentions(out, denied.denial_signatures)) << out.describe();
  EXPECT_FALSE(llrt::exists(beside));

  const RunResult temp =
      spawn(wrap(ConfinedSandboxMode::kWorkspaceWrite, "printf tmp > " + tmp + " && cat " + tmp));
  EXPECT_TRUE(temp.exited_with(0)) << temp.describe();
  EXPECT_EQ(temp.out, "tmp") << temp.describe();
  EXPECT_FALSE(llrt::exists(tmp)) << "the tmpfs /tmp leaked onto the host";
  std::remove(tmp.c_str());
}

// A workspace under /tmp: the private tmpfs is mounted before the workspace is bound, so the
// workspace stays the host's directory on top of it, and a write inside lands on the host.
TEST_F(Bwrap, AWorkspaceUnderTmpStaysBoundOverThePrivateTmpfs) {
  TempDir under_tmp("/tmp");
  const std::string inside = under_tmp / unique("inside");
  const ConfinedArgv confined = confine(*provider_, bash("printf in > " + inside),
                                        ConfinedSandboxMode::kWorkspaceWrite, under_tmp.path());
  EXPECT_EQ(confined.backend, "bwrap+landlock");
  const RunResult result = spawn(confined);
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(llrt::read_file(inside), "in");
}

// An install under /tmp (a CI checkout, an unpacked release): every confined mode can write
// /tmp (Landlock grants the host's), so a command could replace the launcher or the CLI and the
// next call would run the impostor unconfined. Library and CLI refuse, and nothing runs.
TEST_F(Bwrap, LauncherInstalledUnderTmpIsRefusedAndNothingRuns) {
  TempDir install("/tmp");
  ASSERT_EQ(::chmod(install.path().c_str(), 0755), 0);
  const std::string launcher = install / "landlock-run";
  copy_program(llrt::launcher(), launcher);
  copy_program(dsh_sandbox(), install / "dsh-sandbox");

  sandbox::LocalSandboxHooks hooks;
  hooks.launcher_path = launcher;
  sandbox::LocalSandboxProvider provider({}, hooks);
  for (const ConfinedSandboxMode mode :
       {ConfinedSandboxMode::kReadOnly, ConfinedSandboxMode::kWorkspaceWrite}) {
    try {
      (void)confine(provider, bash("true"), mode, workspace_);
      ADD_FAILURE() << "a launcher under /tmp must not be trusted";
    } catch (const sandbox::SandboxUnavailableError& error) {
      EXPECT_NE(std::string(error.what()).find("cannot be trusted"), std::string::npos)
          << error.what();
      EXPECT_NE(std::string(error.what()).find(launcher), std::string::npos) << error.what();
    }
  }
  EXPECT_EQ(provider.probes_run(), 0);  // not even probed: a probe would run it unconfined

  const std::string inside = workspace_ + "/" + unique("inside");
  for (const char* command : {"confine", "run"}) {
    const RunResult cli = run_cli({command, "--mode", "workspace-write", "--workspace", workspace_,
                                   "--", "/bin/bash", "-c", "printf cli > " + inside},
                                  install / "dsh-sandbox");
    EXPECT_TRUE(cli.exited_with(125)) << cli.describe();
    expect_one_cli_error_line(cli);
    EXPECT_NE(cli.err.find("cannot be trusted"), std::string::npos) << cli.describe();
    EXPECT_NE(cli.err.find(install.path()), std::string::npos) << cli.describe();
  }
  EXPECT_FALSE(llrt::exists(inside));
}

}  // namespace
}  // namespace dsh::local_it
