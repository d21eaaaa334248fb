// SPDX-License-Identifier: Apache-2.0
// What the launcher adds beyond Landlock's file rules: no_new_privs, the capability drop, the
// terminal-ioctl block and the architecture check, each verified from outside the sandbox.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "harness.h"
#include "must_run.h"
#include "pseudo_terminal.h"

namespace llrt {
namespace {

constexpr char kNoCaps[] = "0000000000000000";

class LandlockRunHardening : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kernel_abi() < 1) DSH_SKIP_OR_FAIL("this kernel does not enforce Landlock (lsm=landlock)");
  }
  static void expect_no_capabilities(const Held& held, bool bounding_too) {
    for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapAmb"}) {
      EXPECT_EQ(held.status_field(set), kNoCaps) << set;
    }
    if (bounding_too) {
      EXPECT_EQ(held.status_field("CapBnd"), kNoCaps);
    }
  }
  TempDir dir_;
};

TEST_F(LandlockRunHardening, StatusShowsNoNewPrivsSeccompAndNoCapabilities) {
  Held held(l({"--ro", "/", "--", probe_path(), "hold"}));
  ASSERT_TRUE(held.ready());
  EXPECT_EQ(held.status_field("NoNewPrivs"), "1");
  EXPECT_EQ(held.status_field("Seccomp"), "2");
  EXPECT_EQ(held.status_field("Seccomp_filters"), "1");
  expect_no_capabilities(held, getuid() == 0);
  // An unprivileged caller cannot shrink its bounding set (that needs CAP_SETPCAP); it stays as
  // the caller had it, inert because no_new_privs forbids gaining from it on exec.
  if (getuid() != 0) {
    EXPECT_EQ(held.status_field("CapBnd"), own_status_field("CapBnd"));
  }
  EXPECT_TRUE(held.finish().exited_with(0));
}

// Root of a fresh user namespace holds every capability (in that namespace): the same drop a
// real root caller gets, exercised in both legs.
TEST_F(LandlockRunHardening, CapabilityHoldingCallerLosesAllFiveSets) {
  if (!userns_available()) DSH_SKIP_OR_FAIL("user namespaces unavailable to this uid");
  SpawnOptions userns;
  userns.in_new_userns = true;
  Held control({probe_path(), "hold"}, userns);
  ASSERT_TRUE(control.ready());
  EXPECT_NE(control.status_field("CapEff"), kNoCaps) << "the control caller holds no capability";
  control.finish();
  Held held(l({"--ro", "/", "--", probe_path(), "hold"}), userns);
  ASSERT_TRUE(held.ready());
  expect_no_capabilities(held, true);
  EXPECT_EQ(held.status_field("NoNewPrivs"), "1");
  EXPECT_TRUE(held.finish().exited_with(0));
}

// CAP_DAC_OVERRIDE would let a root caller's command write a mode-0000 file inside its grant.
TEST_F(LandlockRunHardening, ConfinedCommandCannotUseTheCallersCapabilities) {
  SpawnOptions options;
  if (getuid() != 0) {
    if (!userns_available()) DSH_SKIP_OR_FAIL("user namespaces unavailable to this uid");
    options.in_new_userns = true;  // uid 0 with capabilities over the caller's files
  }
  const std::string locked = dir_ / "locked";
  write_file(locked, "original", 0);
  // Mode 0000 locks the test out too (as nobody it has no capability): unlock to look.
  const auto content = [&locked] {
    chmod(locked.c_str(), 0600);
    const std::string text = read_file(locked);
    chmod(locked.c_str(), 0);
    return text;
  };
  ASSERT_TRUE(execute({probe_path(), "write", locked}, options).exited_with(0))
      << "control lacks caps";
  ASSERT_EQ(content(), "pwned");
  chmod(locked.c_str(), 0600);
  write_file(locked, "original", 0);
  const RunResult result =
      execute(l({"--ro", "/", "--rw", dir_.path(), "--", probe_path(), "write", locked}), options);
  EXPECT_FALSE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(content(), "original");
  // Mounting needs CAP_SYS_ADMIN (and a Landlock domain forbids it anyway).
  const std::string mount_point = dir_ / "mnt";
  ASSERT_EQ(mkdir(mount_point.c_str(), 0755), 0);
  execute(l({"--ro", "/", "--rw", dir_.path(), "--", probe_path(), "mount", mount_point}), options);
  EXPECT_EQ(read_file("/proc/self/mountinfo").find(mount_point), std::string::npos);
}

// The setuid binary: as root, a copy owned by uid 4242; as nobody, the setuid-root probe the
// CTest fixture installed while still root. Either way the control run proves the bit works.
TEST_F(LandlockRunHardening, SetuidBinaryDoesNotRaiseTheEffectiveUid) {
  std::string setuid_probe = LL_SETUID_ROOT_PROBE;
  std::string owner = "0";
  if (getuid() == 0) {
    setuid_probe = dir_ / "setuid-probe";
    owner = "4242";
    write_file(setuid_probe, read_file(probe_path()), 0755);
    ASSERT_EQ(chown(setuid_probe.c_str(), 4242, 4242), 0);
    ASSERT_EQ(chmod(setuid_probe.c_str(), 04755), 0);
    ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
  } else {
    struct stat info {};
    if (stat(setuid_probe.c_str(), &info) != 0 || info.st_uid != 0 || !(info.st_mode & S_ISUID)) {
      DSH_SKIP_OR_FAIL("no setuid-root probe at " + setuid_probe +
                       " (the landlock_run.setuid_probe.install fixture must run as root)");
    }
  }
  const std::string me = uid();
  Held control({setuid_probe, "hold"});
  ASSERT_TRUE(control.ready());
  EXPECT_EQ(control.status_field("Uid"), me + "\t" + owner + "\t" + owner + "\t" + owner);
  control.finish();
  Held held(l({"--ro", "/", "--", setuid_probe, "hold"}));
  ASSERT_TRUE(held.ready());
  EXPECT_EQ(held.status_field("Uid"), me + "\t" + me + "\t" + me + "\t" + me);
  EXPECT_TRUE(held.finish().exited_with(0));
}

// A pty whose slave is the controlling terminal of each attempt, as a caller's terminal is; the
// test reads the slave raw, as the caller's shell would read its keystrokes.
class CallerTerminal {
 public:
  CallerTerminal() {
    if (!pty_.ok()) return;
    termios raw{};
    tcgetattr(pty_.slave(), &raw);
    cfmakeraw(&raw);
    tcsetattr(pty_.slave(), TCSANOW, &raw);
  }
  bool ok() const { return pty_.ok(); }
  // Runs argv in a new session whose controlling terminal (and stdin) is the pty.
  int run_on_terminal(const std::vector<std::string>& argv) const {
    const pid_t pid = pty_.spawn(argv, false);
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
  }
  // What a reader of the terminal would now receive (the injected "keystrokes").
  std::string pending() const {
    pollfd ready{pty_.slave(), POLLIN, 0};
    if (poll(&ready, 1, 0) <= 0) return "";
    char buffer[256];
    const ssize_t n = read(pty_.slave(), buffer, sizeof(buffer));
    return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "";
  }

 private:
  dsh::testing::Pty pty_;
};

TEST_F(LandlockRunHardening, TiocstiCannotTypeIntoTheCallersTerminal) {
  if (read_file("/proc/sys/dev/tty/legacy_tiocsti") == "0\n" && getuid() != 0) {
    DSH_SKIP_OR_FAIL("legacy_tiocsti=0: the kernel already refuses TIOCSTI");
  }
  CallerTerminal pty;
  if (!pty.ok()) DSH_SKIP_OR_FAIL("no pty available (/dev/ptmx)");
  pty.run_on_terminal({probe_path(), "tiocsti", "0", "id\n"});
  ASSERT_EQ(pty.pending(), "id\n") << "control: TIOCSTI does not inject here, test proves nothing";
  pty.run_on_terminal({probe_path(), "tiocsti", "0", "x", "high"});
  ASSERT_EQ(pty.pending(), "x") << "control: the kernel should ignore cmd bits 32-63";

  pty.run_on_terminal(l({"--ro", "/", "--", probe_path(), "tiocsti", "0", "id\n"}));
  EXPECT_EQ(pty.pending(), "");
  pty.run_on_terminal(l({"--ro", "/", "--", probe_path(), "tiocsti", "0", "x", "high"}));
  EXPECT_EQ(pty.pending(), "");
}

TEST_F(LandlockRunHardening, TioclinuxIsRefusedBySeccomp) {
  const int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);  // any fd: the filter fires first
  SpawnOptions options;
  options.stdin_fd = fd;
  const RunResult control = execute({probe_path(), "tioclinux", "0"}, options);
  EXPECT_EQ(control.out, "errno=25\n");  // ENOTTY: the call reached the driver
  const RunResult result = execute(l({"--ro", "/", "--", probe_path(), "tioclinux", "0"}), options);
  EXPECT_EQ(result.out, "errno=1\n") << result.describe();  // EPERM: stopped by the filter
  close(fd);
}

TEST_F(LandlockRunHardening, I386SyscallsAreKilled) {
  const RunResult control = execute({probe_path(), "i386"});
  if (!control.exited_with(0)) {
    DSH_SKIP_OR_FAIL("no IA-32 emulation in this kernel: " + control.describe());
  }
  const RunResult result = execute(l({"--ro", "/", "--", probe_path(), "i386"}));
  EXPECT_TRUE(result.killed_by(SIGSYS)) << result.describe();
}

TEST_F(LandlockRunHardening, X32SyscallsAreKilled) {
  const RunResult result = execute(l({"--ro", "/", "--", probe_path(), "x32"}));
  EXPECT_TRUE(result.killed_by(SIGSYS)) << result.describe();
}

}  // namespace
}  // namespace llrt
