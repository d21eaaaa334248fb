// SPDX-License-Identifier: Apache-2.0
// --scope-ipc (Landlock ABI 6 scopes) against processes outside the sandbox, and fail-closed
// refusal when the usable ABI is too old.
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "harness.h"
#include "must_run.h"

namespace llrt {
namespace {

class LandlockRunIpc : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kernel_abi() < 6) DSH_SKIP_OR_FAIL("needs Landlock ABI >= 6 (Linux 6.12) for IPC scopes");
  }
  static std::vector<std::string> confined(bool scope, const std::vector<std::string>& probe) {
    std::vector<std::string> args;
    if (scope) args.push_back("--scope-ipc");
    for (const char* a : {"--ro", "/", "--"}) args.push_back(a);
    args.push_back(probe_path());
    args.insert(args.end(), probe.begin(), probe.end());
    return l(args);
  }
};

// A process outside the sandbox, of the same uid, that only waits to be signalled.
class Bystander {
 public:
  Bystander() {
    pid_ = fork();
    if (pid_ == 0) {
      for (;;) pause();
    }
  }
  ~Bystander() {
    kill(pid_, SIGKILL);
    reap(0);
  }
  std::string pid_text() const { return std::to_string(pid_); }
  // The signal that ended it, 0 while it is alive.
  int reap(int options) {
    if (reaped_ != -1) return reaped_;
    int status = 0;
    if (waitpid(pid_, &status, options) != pid_) return 0;
    reaped_ = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return reaped_;
  }

 private:
  pid_t pid_ = -1;
  int reaped_ = -1;
};

TEST_F(LandlockRunIpc, SignalToAnOutsideProcessIsRefused) {
  Bystander target;
  const RunResult denied = execute(confined(true, {"kill", target.pid_text()}));
  EXPECT_EQ(target.reap(WNOHANG), 0) << "the bystander was signalled: " << denied.describe();
  EXPECT_FALSE(denied.exited_with(0));
  execute(confined(false, {"kill", target.pid_text()}));
  EXPECT_EQ(target.reap(0), SIGTERM) << "control signal did not arrive";
}

TEST_F(LandlockRunIpc, AbstractSocketOfAnOutsideProcessIsRefused) {
  const std::string name = "llrun-" + std::to_string(getpid());
  const int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  const auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), size), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  const RunResult denied = execute(confined(true, {"abstract", name}));
  EXPECT_EQ(ready_poll(listener, 200), 0) << "connection arrived: " << denied.describe();
  const RunResult control = execute(confined(false, {"abstract", name}));
  EXPECT_EQ(ready_poll(listener, 1000), 1) << "control did not connect: " << control.describe();
  close(listener);
}

TEST_F(LandlockRunIpc, ScopeRequestOnAnOlderAbiFailsClosed) {
  TempDir dir;
  const std::string marker = dir / "marker";
  const RunResult result = execute(l({"--max-abi", "5", "--scope-ipc", "--rw", dir.path(), "--",
                                      "/bin/sh", "-c", "echo ran > " + marker}));
  EXPECT_TRUE(result.exited_with(125)) << result.describe();
  EXPECT_EQ(result.err,
            "landlock-run: --scope-ipc needs Landlock ABI 6 (Linux 6.12); the usable ABI is 5\n");
  EXPECT_FALSE(exists(marker));
}

}  // namespace
}  // namespace llrt
