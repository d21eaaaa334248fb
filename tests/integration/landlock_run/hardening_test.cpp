// SPDX-License-Identifier: Apache-2.0
// What the launcher adds beyond Landlock's file rules: no_new_privs, the capability drop, the
// terminal-ioctl block and the architecture check, each verified from outside the sandbox.
#include <fcntl.h>
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

namespace llrt {
namespace {

constexpr char kNoCaps[] = "0000000000000000";

class LandlockRunHardening : public ::testing::Test {
 protected:
  void SetUp() override {
    if (KernelAbi() < 1) DSH_SKIP_OR_FAIL("this kernel does not enforce Landlock (lsm=landlock)");
  }
  static void ExpectNoCapabilities(const Held& held, bool bounding_too) {
    for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapAmb"}) {
      EXPECT_EQ(held.StatusField(set), kNoCaps) << set;
    }
    if (bounding_too) {
      EXPECT_EQ(held.StatusField("CapBnd"), kNoCaps);
    }
  }
  TempDir dir_;
};

TEST_F(LandlockRunHardening, StatusShowsNoNewPrivsSeccompAndNoCapabilities) {
  Held held(L({"--ro", "/", "--", Probe(), "hold"}));
  ASSERT_TRUE(held.ready());
  EXPECT_EQ(held.StatusField("NoNewPrivs"), "1");
  EXPECT_EQ(held.StatusField("Seccomp"), "2");
  EXPECT_EQ(held.StatusField("Seccomp_filters"), "1");
  ExpectNoCapabilities(held, getuid() == 0);
  // An unprivileged caller cannot shrink its bounding set (that needs CAP_SETPCAP); it stays as
  // the caller had it, inert because no_new_privs forbids gaining from it on exec.
  if (getuid() != 0) {
    EXPECT_EQ(held.StatusField("CapBnd"), OwnStatusField("CapBnd"));
  }
  EXPECT_TRUE(held.Finish().ExitedWith(0));
}

// Root of a fresh user namespace holds every capability (in that namespace): the same drop a
// real root caller gets, exercised in both legs.
TEST_F(LandlockRunHardening, CapabilityHoldingCallerLosesAllFiveSets) {
  if (!UsernsAvailable()) DSH_SKIP_OR_FAIL("user namespaces unavailable to this uid");
  SpawnOptions userns;
  userns.in_new_userns = true;
  Held control({Probe(), "hold"}, userns);
  ASSERT_TRUE(control.ready());
  EXPECT_NE(control.StatusField("CapEff"), kNoCaps) << "the control caller holds no capability";
  control.Finish();
  Held held(L({"--ro", "/", "--", Probe(), "hold"}), userns);
  ASSERT_TRUE(held.ready());
  ExpectNoCapabilities(held, true);
  EXPECT_EQ(held.StatusField("NoNewPrivs"), "1");
  EXPECT_TRUE(held.Finish().ExitedWith(0));
}

// CAP_DAC_OVERRIDE would let a root caller's command write a mode-0000 file inside its grant.
TEST_F(LandlockRunHardening, ConfinedCommandCannotUseTheCallersCapabilities) {
  SpawnOptions options;
  if (getuid() != 0) {
    if (!UsernsAvailable()) DSH_SKIP_OR_FAIL("user namespaces unavailable to this uid");
    options.in_new_userns = true;  // uid 0 with capabilities over the caller's files
  }
  const std::string locked = dir_ / "locked";
  WriteFile(locked, "original", 0);
  // Mode 0000 locks the test out too (as nobody it has no capability): unlock to look.
  const auto content = [&locked] {
    chmod(locked.c_str(), 0600);
    const std::string text = ReadFile(locked);
    chmod(locked.c_str(), 0);
    return text;
  };
  ASSERT_TRUE(Execute({Probe(), "write", locked}, options).ExitedWith(0)) << "control lacks caps";
  ASSERT_EQ(content(), "pwned");
  chmod(locked.c_str(), 0600);
  WriteFile(locked, "original", 0);
  const RunResult result =
      Execute(L({"--ro", "/", "--rw", dir_.path(), "--", Probe(), "write", locked}), options);
  EXPECT_FALSE(result.ExitedWith(0)) << result.Describe();
  EXPECT_EQ(content(), "original");
  // Mounting needs CAP_SYS_ADMIN (and a Landlock domain forbids it anyway).
  const std::string mount_point = dir_ / "mnt";
  ASSERT_EQ(mkdir(mount_point.c_str(), 0755), 0);
  Execute(L({"--ro", "/", "--rw", dir_.path(), "--", Probe(), "mount", mount_point}), options);
  EXPECT_EQ(ReadFile("/proc/self/mountinfo").find(mount_point), std::string::npos);
}

// The setuid binary: as root, a copy owned by uid 4242; as nobody, the setuid-root probe the
// CTest fixture installed while still root. Either way the control run proves the bit works.
TEST_F(LandlockRunHardening, SetuidBinaryDoesNotRaiseTheEffectiveUid) {
  std::string setuid_probe = LL_SETUID_ROOT_PROBE;
  std::string owner = "0";
  if (getuid() == 0) {
    setuid_probe = dir_ / "setuid-probe";
    owner = "4242";
    WriteFile(setuid_probe, ReadFile(Probe()), 0755);
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
  const std::string me = Uid();
  Held control({setuid_probe, "hold"});
  ASSERT_TRUE(control.ready());
  EXPECT_EQ(control.StatusField("Uid"), me + "\t" + owner + "\t" + owner + "\t" + owner);
  control.Finish();
  Held held(L({"--ro", "/", "--", setuid_probe, "hold"}));
  ASSERT_TRUE(held.ready());
  EXPECT_EQ(held.StatusField("Uid"), me + "\t" + me + "\t" + me + "\t" + me);
  EXPECT_TRUE(held.Finish().ExitedWith(0));
}

// A pty whose slave is the controlling terminal of each attempt, as a caller's terminal is.
class Pty {
 public:
  Pty() {
    master_ = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master_ < 0 || grantpt(master_) != 0 || unlockpt(master_) != 0) return;
    name_ = ptsname(master_);
    reader_ = open(name_.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
    termios raw{};
    tcgetattr(reader_, &raw);
    cfmakeraw(&raw);
    tcsetattr(reader_, TCSANOW, &raw);
  }
  ~Pty() {
    close(reader_);
    close(master_);
  }
  bool ok() const { return reader_ >= 0; }
  // Runs argv in a new session whose controlling terminal (and stdin) is the pty.
  int RunOnTerminal(const std::vector<std::string>& argv) const {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      setsid();
      const int tty = open(name_.c_str(), O_RDWR);
      ioctl(tty, TIOCSCTTY, 0);
      dup2(tty, STDIN_FILENO);
      const int null = open("/dev/null", O_WRONLY);
      dup2(null, STDOUT_FILENO);
      execv(args[0], args.data());
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
  }
  // What a reader of the terminal would now receive (the injected "keystrokes").
  std::string Pending() const {
    char buffer[256];
    const ssize_t n = read(reader_, buffer, sizeof(buffer));
    return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "";
  }

 private:
  int master_ = -1;
  int reader_ = -1;
  std::string name_;
};

TEST_F(LandlockRunHardening, TiocstiCannotTypeIntoTheCallersTerminal) {
  if (ReadFile("/proc/sys/dev/tty/legacy_tiocsti") == "0\n" && getuid() != 0) {
    DSH_SKIP_OR_FAIL("legacy_tiocsti=0: the kernel already refuses TIOCSTI");
  }
  Pty pty;
  if (!pty.ok()) DSH_SKIP_OR_FAIL("no pty available (/dev/ptmx)");
  pty.RunOnTerminal({Probe(), "tiocsti", "0", "id\n"});
  ASSERT_EQ(pty.Pending(), "id\n") << "control: TIOCSTI does not inject here, test proves nothing";
  pty.RunOnTerminal({Probe(), "tiocsti", "0", "x", "high"});
  ASSERT_EQ(pty.Pending(), "x") << "control: the kernel should ignore cmd bits 32-63";

  pty.RunOnTerminal(L({"--ro", "/", "--", Probe(), "tiocsti", "0", "id\n"}));
  EXPECT_EQ(pty.Pending(), "");
  pty.RunOnTerminal(L({"--ro", "/", "--", Probe(), "tiocsti", "0", "x", "high"}));
  EXPECT_EQ(pty.Pending(), "");
}

TEST_F(LandlockRunHardening, TioclinuxIsRefusedBySeccomp) {
  const int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);  // any fd: the filter fires first
  SpawnOptions options;
  options.stdin_fd = fd;
  const RunResult control = Execute({Probe(), "tioclinux", "0"}, options);
  EXPECT_EQ(control.out, "errno=25\n");  // ENOTTY: the call reached the driver
  const RunResult result = Execute(L({"--ro", "/", "--", Probe(), "tioclinux", "0"}), options);
  EXPECT_EQ(result.out, "errno=1\n") << result.Describe();  // EPERM: stopped by the filter
  close(fd);
}

TEST_F(LandlockRunHardening, I386SyscallsAreKilled) {
  const RunResult control = Execute({Probe(), "i386"});
  if (!control.ExitedWith(0)) {
    DSH_SKIP_OR_FAIL("no IA-32 emulation in this kernel: " + control.Describe());
  }
  const RunResult result = Execute(L({"--ro", "/", "--", Probe(), "i386"}));
  EXPECT_TRUE(result.KilledBy(SIGSYS)) << result.Describe();
}

TEST_F(LandlockRunHardening, X32SyscallsAreKilled) {
  const RunResult result = Execute(L({"--ro", "/", "--", Probe(), "x32"}));
  EXPECT_TRUE(result.KilledBy(SIGSYS)) << result.Describe();
}

}  // namespace
}  // namespace llrt
