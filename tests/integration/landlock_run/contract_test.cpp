// SPDX-License-Identifier: Apache-2.0
// The reference launcher's contract against the real binary, plus
// the static-ELF, status-fd, --features and ABI-cap extensions.
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <regex>

#include "harness.h"
#include "must_run.h"

namespace llrt {
namespace {

const char kNotice[] = "landlock-run: partial enforcement (older Landlock ABI)\n";

class LandlockRunContract : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kernel_abi() < 1) DSH_SKIP_OR_FAIL("this kernel does not enforce Landlock (lsm=landlock)");
  }
  // A launcher failure: exit 125, stdout empty, stderr exactly `line`.
  static void expect_failure(const std::vector<std::string>& args, const std::string& line) {
    const RunResult result = execute(l(args));
    EXPECT_TRUE(result.exited_with(125)) << result.describe();
    EXPECT_EQ(result.err, "landlock-run: " + line + "\n");
    EXPECT_EQ(result.out, "");
  }
  TempDir dir_;
};

TEST(LandlockRunBinary, IsStaticallyLinkedWithoutInterpreter) {
  const std::string image = read_file(launcher());
  ASSERT_GE(image.size(), sizeof(Elf64_Ehdr));
  Elf64_Ehdr header;
  std::memcpy(&header, image.data(), sizeof(header));
  ASSERT_EQ(std::memcmp(header.e_ident, ELFMAG, SELFMAG), 0);
  ASSERT_LE(header.e_phoff + header.e_phnum * sizeof(Elf64_Phdr), image.size());
  for (int i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr program;
    std::memcpy(&program,
                image.data() + header.e_phoff + static_cast<std::size_t>(i) * sizeof(Elf64_Phdr),
                sizeof(program));
    EXPECT_NE(program.p_type, static_cast<Elf64_Word>(PT_INTERP)) << "program header " << i;
    EXPECT_NE(program.p_type, static_cast<Elf64_Word>(PT_DYNAMIC)) << "program header " << i;
  }
}

TEST_F(LandlockRunContract, UsageErrorsExit125WithOneLine) {
  expect_failure({}, "usage error: missing `-- <argv>...` command");
  expect_failure({"--ro", "/", "--"}, "usage error: missing `-- <argv>...` command");
  expect_failure({"--bogus", "--", "true"}, "usage error: unknown argument: --bogus");
  expect_failure({"--ro"}, "usage error: --ro requires a path");
  expect_failure({"--rw"}, "usage error: --rw requires a path");
  expect_failure({"--probe", "--ro", "/"}, "usage error: --probe takes no other arguments");
  expect_failure({"--probe", "--"}, "usage error: --probe takes no other arguments");
  expect_failure({"--probe", "--probe"}, "usage error: --probe takes no other arguments");
}

TEST_F(LandlockRunContract, ControlCharactersCannotForgeASecondLine) {
  expect_failure({"--x\nlandlock-run: forged", "--", "true"},
                 "usage error: unknown argument: --x?landlock-run: forged");
}

TEST_F(LandlockRunContract, ProbeReportsFullEnforcementOnThisKernel) {
  const RunResult result = execute(l({"--probe"}));
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_TRUE(std::regex_match(
      result.out, std::regex("landlock: (fully enforced|partially enforced \\(older ABI\\))\n")));
  EXPECT_EQ(result.out, kernel_abi() >= 5 ? "landlock: fully enforced\n"
                                          : "landlock: partially enforced (older ABI)\n");
  EXPECT_EQ(result.err, "");
}

TEST_F(LandlockRunContract, FeaturesReportTheKernelAbiUnclamped) {
  const RunResult result = execute(l({"--features"}));
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_NE(result.out.find("landlock-run=1\n"), std::string::npos);
  EXPECT_NE(result.out.find("\nabi=" + std::to_string(kernel_abi()) + "\n"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find(kernel_abi() >= 6 ? "\nscope_ipc=1\n" : "\nscope_ipc=0\n"),
            std::string::npos);
  EXPECT_NE(result.out.find("\nkernel_object_block=1\n"), std::string::npos) << result.out;
  EXPECT_EQ(result.err, "");
}

TEST_F(LandlockRunContract, ConfinedEchoPrintsWithEmptyStderr) {
  const RunResult result = execute(l({"--ro", "/", "--", "/bin/echo", "confined-ok"}));
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.out, "confined-ok\n");
  EXPECT_EQ(result.err, kernel_abi() >= 5 ? "" : kNotice);
}

TEST_F(LandlockRunContract, PartialAbiPrintsExactlyTheNoticeAndStillRuns) {
  for (const char* abi : {"1", "2", "3", "4"}) {
    const RunResult result =
        execute(l({"--max-abi", abi, "--ro", "/", "--", "/bin/echo", "confined-ok"}));
    EXPECT_TRUE(result.exited_with(0)) << abi << ": " << result.describe();
    EXPECT_EQ(result.out, "confined-ok\n");
    EXPECT_EQ(result.err, kNotice) << abi;
  }
}

TEST_F(LandlockRunContract, ChildStatusPassesThroughUnchanged) {
  for (const char* code : {"3", "7", "125"}) {
    const RunResult result =
        execute(l({"--ro", "/", "--", "/bin/sh", "-c", std::string("exit ") + code}));
    EXPECT_TRUE(result.exited_with(std::atoi(code))) << result.describe();
    EXPECT_EQ(result.err, "");
  }
  const RunResult partial =
      execute(l({"--max-abi", "3", "--ro", "/", "--", "/bin/sh", "-c", "exit 125"}));
  EXPECT_TRUE(partial.exited_with(125)) << partial.describe();
  EXPECT_EQ(partial.err, kNotice);  // only the notice: the 125 is the child's
  const RunResult killed = execute(l({"--ro", "/", "--", "/bin/sh", "-c", "kill -KILL $$"}));
  EXPECT_TRUE(killed.killed_by(SIGKILL)) << killed.describe();
}

TEST_F(LandlockRunContract, MissingGrantRootExits125AndTheCommandNeverRan) {
  const std::string marker = dir_ / "marker";
  expect_failure({"--rw", dir_.path(), "--ro", "/no/such/grant/root", "--", "/bin/sh", "-c",
                  "echo ran > " + marker},
                 "cannot open rule path: /no/such/grant/root: No such file or directory");
  EXPECT_FALSE(exists(marker));
}

TEST_F(LandlockRunContract, ExecFailureIs125WithOneLine) {
  expect_failure({"--ro", "/", "--", "/no/such/command"}, "exec failed: No such file or directory");
}

TEST_F(LandlockRunContract, AbiCapZeroMeansNotEnforcedAndNothingRuns) {
  const std::string marker = dir_ / "marker";
  expect_failure({"--max-abi", "0", "--rw", dir_.path(), "--", "/bin/sh", "-c", "echo > " + marker},
                 "landlock is not enforced by this kernel (ABI unsupported or disabled)");
  EXPECT_FALSE(exists(marker));
}

TEST_F(LandlockRunContract, DevNullCanBeGrantedReadWrite) {
  const RunResult result =
      execute(l({"--ro", "/", "--rw", "/dev/null", "--", "/bin/sh", "-c", "echo x > /dev/null"}));
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
}

TEST_F(LandlockRunContract, EnvironmentChangesNothing) {
  const std::string outside = dir_ / "outside";
  SpawnOptions options;
  options.env = {"PATH=/usr/bin:/bin",     "LL_FS_RO=/",     "LL_FS_RW=/",
                 "LANDLOCK_RUN_MAX_ABI=1", "LANDLOCK_ABI=1", "NALR_REQUIRE_LANDLOCK=0"};
  const RunResult result =
      execute(l({"--ro", "/", "--", "/bin/sh", "-c", "echo x > " + outside}), options);
  EXPECT_FALSE(result.exited_with(0)) << result.describe();
  EXPECT_FALSE(exists(outside));
  EXPECT_EQ(result.err.find("partial"), std::string::npos) << result.err;
}

// --status-fd: the failure line goes to the fd as well; just before the exec the launcher writes
// its exec line, and the exec closes the fd (the read end sees EOF while the command is still
// running).
TEST_F(LandlockRunContract, StatusFdCarriesFailuresAndClosesOnSuccessfulExec) {
  int failure[2];
  ASSERT_EQ(pipe2(failure, O_CLOEXEC), 0);
  SpawnOptions options;
  options.fds = {{failure[1], 9}};
  const RunResult failed =
      execute(l({"--status-fd", "9", "--ro", "/no/such", "--", "true"}), options);
  close(failure[1]);
  EXPECT_TRUE(failed.exited_with(125));
  const std::string line =
      "landlock-run: cannot open rule path: /no/such: No such file or directory\n";
  EXPECT_EQ(failed.err, line);
  char buffer[512] = {};
  EXPECT_EQ(read(failure[0], buffer, sizeof(buffer)), static_cast<ssize_t>(line.size()));
  EXPECT_EQ(std::string(buffer), line);
  close(failure[0]);

  int success[2];
  ASSERT_EQ(pipe2(success, O_CLOEXEC), 0);
  options.fds = {{success[1], 9}};
  Held held(l({"--status-fd", "9", "--ro", "/", "--", probe_path(), "hold"}), options);
  close(success[1]);
  ASSERT_TRUE(held.ready());
  EXPECT_EQ(ready_poll(success[0], 2000), 1);
  std::memset(buffer, 0, sizeof(buffer));
  EXPECT_EQ(read(success[0], buffer, sizeof(buffer)), 5);
  EXPECT_EQ(std::string(buffer), "exec\n");
  EXPECT_EQ(read(success[0], buffer, sizeof(buffer)), 0) << "status fd written or left open";
  EXPECT_TRUE(exists("/proc/" + std::to_string(held.pid())));  // still running: exec closed it
  EXPECT_TRUE(held.finish().exited_with(0));
  close(success[0]);
}

// Every failure exit writes its one line on the status fd (and stderr) before it exits 125, and
// the command never ran: each exit forced in turn in the test build (LANDLOCK_RUN_FAULT=STAGE),
// with and without the evidence supervisor. A silent channel is then only a launcher that died.
TEST_F(LandlockRunContract, EveryFailureExitWritesItsStatusLine) {
  struct Stage {
    const char* name;
    bool evidence;
    // --deny-network: the supervisor runs without evidence too, to decide every connect
    bool deny_network = false;
  };
  constexpr Stage kStages[] = {{"storage", false},
                               {"nnp", false},
                               {"caps", false},
                               {"restrict", false},
                               {"filter", false},
                               {"storage", true},
                               {"nnp", true},
                               {"roots", true},
                               {"socketpair", true},
                               {"pdeathsig", true},
                               {"child-killed", true},
                               {"child-caps", true},
                               {"restrict", true},
                               {"filter", true},
                               {"parent-caps", true},
                               {"signalfd", true},
                               {"pidfd", false, true},
                               {"sockets", false, true},
                               {"socketpair", false, true},
                               {"child-caps", false, true},
                               {"filter", false, true},
                               {"parent-caps", false, true}};
  TempDir dir;
  for (const Stage& stage : kStages) {
    const std::string name = std::string(stage.name) + (stage.evidence ? "-evidence" : "") +
                             (stage.deny_network ? "-deny-network" : "");
    const std::string marker = dir / name;
    const std::string channel_path = dir / (name + ".status");
    const int channel = open(channel_path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(channel, 0);
    SpawnOptions options;
    options.fds = {{channel, 9}};
    options.env = {"PATH=/usr/bin:/bin", "LANDLOCK_RUN_FAULT=" + std::string(stage.name)};
    std::vector<std::string> argv = {testing_launcher(), "--status-fd", "9"};
    if (stage.evidence) argv.emplace_back("--evidence");
    if (stage.deny_network) argv.emplace_back("--deny-network");
    argv.insert(argv.end(),
                {"--ro", "/", "--rw", dir.path(), "--", "/bin/sh", "-c", "touch " + marker});
    const RunResult result = execute(argv, options);
    close(channel);
    const std::string status = read_file(channel_path);
    EXPECT_TRUE(result.exited_with(125)) << name << ": " << result.describe();
    EXPECT_EQ(status.rfind("landlock-run: ", 0), 0U) << name << ": " << status;
    EXPECT_EQ(std::count(status.begin(), status.end(), '\n'), 1) << name << ": " << status;
    EXPECT_EQ(result.err, status) << name;
    EXPECT_FALSE(exists(marker)) << name << ": the command ran";
  }
}

TEST_F(LandlockRunContract, StatusFdBelowThreeIsRefused) {
  expect_failure({"--status-fd", "1", "--ro", "/", "--", "true"},
                 "usage error: --status-fd must be 3 or above");
}

}  // namespace
}  // namespace llrt
