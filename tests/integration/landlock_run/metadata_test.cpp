// SPDX-License-Identifier: Apache-2.0
// --deny-metadata: Landlock does not govern chmod, chown, utime or xattrs. Each case first shows
// the gap (without the flag the change lands on a file outside every grant), then that the flag
// closes it; the verdict is always the file's own metadata, read by the test.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <ctime>

#include "harness.h"
#include "must_run.h"

namespace llrt {
namespace {

class LandlockRunMetadata : public ::testing::Test {
 protected:
  void SetUp() override {
    if (KernelAbi() < 1) DSH_SKIP_OR_FAIL("this kernel does not enforce Landlock (lsm=landlock)");
    Reset();
  }
  void Reset() {
    WriteFile(victim_, "original", 0644);
    const timespec times[2] = {{1000000000, 0}, {1000000000, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, victim_.c_str(), times, 0), 0);
    removexattr(victim_.c_str(), "user.pwned");
    ASSERT_EQ(stat(victim_.c_str(), &before_), 0);
    usleep(20000);  // so a ctime update is visible even at coarse clock granularity
  }
  RunResult Confined(bool deny, const std::vector<std::string>& command) {
    std::vector<std::string> args;
    if (deny) args.push_back("--deny-metadata");
    for (const char* a : {"--ro", "/", "--"}) args.push_back(a);
    args.insert(args.end(), command.begin(), command.end());
    return Execute(L(args));
  }
  struct stat Now() const {
    struct stat info {};
    EXPECT_EQ(stat(victim_.c_str(), &info), 0);
    return info;
  }
  bool Unchanged() const {
    const struct stat now = Now();
    return now.st_mode == before_.st_mode && now.st_uid == before_.st_uid &&
           now.st_mtim.tv_sec == before_.st_mtim.tv_sec &&
           now.st_ctim.tv_sec == before_.st_ctim.tv_sec &&
           now.st_ctim.tv_nsec == before_.st_ctim.tv_nsec &&
           getxattr(victim_.c_str(), "user.pwned", nullptr, 0) < 0;
  }
  // The gap without the flag, then the flag's refusal, for one command.
  void ExpectClosed(const std::vector<std::string>& command) {
    const RunResult gap = Confined(false, command);
    EXPECT_FALSE(Unchanged()) << "no gap to close? " << gap.Describe();
    Reset();
    const RunResult denied = Confined(true, command);
    EXPECT_TRUE(Unchanged()) << "metadata changed under --deny-metadata: " << denied.Describe();
    EXPECT_FALSE(denied.ExitedWith(0));
  }
  TempDir dir_;
  std::string victim_ = dir_ / "victim";
  struct stat before_ {};
};

TEST_F(LandlockRunMetadata, ChmodOutsideTheGrantsIsRefused) {
  ExpectClosed({"/bin/chmod", "777", victim_});
}

TEST_F(LandlockRunMetadata, ChownOutsideTheGrantsIsRefused) {
  // Chown to the owner it already has still updates ctime: visible proof the call landed.
  ExpectClosed({"/bin/chown", Uid() + ":" + std::to_string(getgid()), victim_});
}

TEST_F(LandlockRunMetadata, TouchDateOutsideTheGrantsIsRefused) {
  ExpectClosed({"/usr/bin/touch", "-d", "2001-01-01", victim_});
}

TEST_F(LandlockRunMetadata, FdAndNewerSyscallFormsAreRefused) {
  for (const char* op : {"fchmod", "fchmodat2", "setxattr", "fsetxattr", "setxattrat"}) {
    SCOPED_TRACE(op);
    ExpectClosed({Probe(), op, victim_});
    Reset();
  }
}

}  // namespace
}  // namespace llrt
