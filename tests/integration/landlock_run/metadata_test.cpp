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
#include "wait.h"

namespace llrt {
namespace {

class LandlockRunMetadata : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kernel_abi() < 1) DSH_SKIP_OR_FAIL("this kernel does not enforce Landlock (lsm=landlock)");
    reset();
  }
  void reset() {
    write_file(victim_, "original", 0644);
    const timespec times[2] = {{1000000000, 0}, {1000000000, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, victim_.c_str(), times, 0), 0);
    removexattr(victim_.c_str(), "user.pwned");
    ASSERT_EQ(stat(victim_.c_str(), &before_), 0);
    // A ctime comes from the kernel's coarse clock (a tick apart): wait until a change made now
    // would get a ctime other than the victim's, so a change by the command is visible.
    const std::string tick = dir_ / "tick";
    write_file(tick, "", 0644);
    ASSERT_TRUE(dsh::testing::wait_until([&] {
      struct stat now {};
      return chmod(tick.c_str(), 0644) == 0 && stat(tick.c_str(), &now) == 0 &&
             (now.st_ctim.tv_sec != before_.st_ctim.tv_sec ||
              now.st_ctim.tv_nsec != before_.st_ctim.tv_nsec);
    }));
  }
  RunResult confined(bool deny, const std::vector<std::string>& command) {
    std::vector<std::string> args;
    if (deny) args.push_back("--deny-metadata");
    for (const char* a : {"--ro", "/", "--"}) args.push_back(a);
    args.insert(args.end(), command.begin(), command.end());
    return execute(l(args));
  }
  struct stat current_stat() const {
    struct stat info {};
    EXPECT_EQ(stat(victim_.c_str(), &info), 0);
    return info;
  }
  bool unchanged() const {
    const struct stat now = current_stat();
    return now.st_mode == before_.st_mode && now.st_uid == before_.st_uid &&
           now.st_mtim.tv_sec == before_.st_mtim.tv_sec &&
           now.st_ctim.tv_sec == before_.st_ctim.tv_sec &&
           now.st_ctim.tv_nsec == before_.st_ctim.tv_nsec &&
           getxattr(victim_.c_str(), "user.pwned", nullptr, 0) < 0;
  }
  // The gap without the flag, then the flag's refusal, for one command.
  void expect_closed(const std::vector<std::string>& command) {
    const RunResult gap = confined(false, command);
    EXPECT_FALSE(unchanged()) << "no gap to close? " << gap.describe();
    reset();
    const RunResult denied = confined(true, command);
    EXPECT_TRUE(unchanged()) << "metadata changed under --deny-metadata: " << denied.describe();
    EXPECT_FALSE(denied.exited_with(0));
  }
  TempDir dir_;
  std::string victim_ = dir_ / "victim";
  struct stat before_ {};
};

TEST_F(LandlockRunMetadata, ChmodOutsideTheGrantsIsRefused) {
  expect_closed({"/bin/chmod", "777", victim_});
}

TEST_F(LandlockRunMetadata, ChownOutsideTheGrantsIsRefused) {
  // Chown to the owner it already has still updates ctime: visible proof the call landed.
  expect_closed({"/bin/chown", uid() + ":" + std::to_string(getgid()), victim_});
}

TEST_F(LandlockRunMetadata, TouchDateOutsideTheGrantsIsRefused) {
  expect_closed({"/usr/bin/touch", "-d", "2001-01-01", victim_});
}

TEST_F(LandlockRunMetadata, FdAndNewerSyscallFormsAreRefused) {
  for (const char* op : {"fchmod", "fchmodat2", "setxattr", "fsetxattr", "setxattrat"}) {
    SCOPED_TRACE(op);
    expect_closed({probe_path(), op, victim_});
    reset();
  }
}

}  // namespace
}  // namespace llrt
