// SPDX-License-Identifier: Apache-2.0
// --deny-network: every attempt is aimed at a listener the test owns, and the verdict is whether
// that listener received anything, never the probe's exit code. Each denial is paired with the
// same attempt without the flag, which must get through (else the test proves nothing).
#include <fcntl.h>
#include <linux/netlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "harness.h"
#include "must_run.h"

namespace llrt {
namespace {

class LandlockRunNetwork : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kernel_abi() < 1) DSH_SKIP_OR_FAIL("this kernel does not enforce Landlock (lsm=landlock)");
  }
  static std::vector<std::string> confined(bool deny, const std::vector<std::string>& probe,
                                           const char* max_abi = nullptr) {
    std::vector<std::string> args;
    if (max_abi != nullptr) args = {"--max-abi", max_abi};
    if (deny) args.push_back("--deny-network");
    for (const char* a : {"--ro", "/", "--"}) args.push_back(a);
    args.push_back(probe_path());
    args.insert(args.end(), probe.begin(), probe.end());
    return l(args);
  }
  // Runs `probe` unconfined-by-network (control) and with --deny-network; checks the listener.
  // With `max_abi` "3" the Landlock TCP layer is absent, so seccomp alone must hold.
  template <typename Listener>
  static void expect_blocked(const Listener& listener, const std::vector<std::string>& probe,
                             const char* max_abi = nullptr) {
    const RunResult control = execute(confined(false, probe, max_abi));
    EXPECT_TRUE(listener.received()) << "control did not get through: " << control.describe();
    const RunResult denied = execute(confined(true, probe, max_abi));
    EXPECT_FALSE(listener.received()) << "got through --deny-network: " << denied.describe();
    EXPECT_FALSE(denied.exited_with(0)) << denied.describe();
  }
  // io_uring is refused in every run, --deny-network or not: the control runs the probe alone.
  static void expect_uring_blocked(const InetListener& listener, const char* max_abi = nullptr) {
    const RunResult control = execute({probe_path(), "uring_tcp4", listener.port_text()});
    EXPECT_TRUE(listener.received()) << "control did not get through: " << control.describe();
    for (const bool deny : {false, true}) {
      const RunResult run = execute(confined(deny, {"uring_tcp4", listener.port_text()}, max_abi));
      EXPECT_FALSE(listener.received()) << "io_uring got through: " << run.describe();
      EXPECT_FALSE(run.exited_with(0)) << run.describe();
    }
  }
};

TEST_F(LandlockRunNetwork, Tcp4IsRefused) {
  InetListener listener(AF_INET, SOCK_STREAM);
  expect_blocked(listener, {"tcp4", listener.port_text()});
}

// Each layer on its own: below ABI 4 only the seccomp filter stands between the command and TCP.
TEST_F(LandlockRunNetwork, SeccompLayerAloneRefusesTcpAndIoUring) {
  InetListener listener(AF_INET, SOCK_STREAM);
  expect_blocked(listener, {"tcp4", listener.port_text()}, "3");
  expect_uring_blocked(listener, "3");
  // socket() itself fails, with EAFNOSUPPORT (Landlock alone would fail only the later
  // connect(), with EACCES): a refused socket never reads as Landlock's "Permission denied".
  EXPECT_EQ(execute(confined(true, {"tcp4", listener.port_text()}, "3")).out,
            "errno=" + std::to_string(EAFNOSUPPORT) + "\n");
}

TEST_F(LandlockRunNetwork, Udp4IsRefused) {
  InetListener listener(AF_INET, SOCK_DGRAM);
  expect_blocked(listener, {"udp4", listener.port_text()});
}

TEST_F(LandlockRunNetwork, Tcp6IsRefused) {
  const int probe = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (probe < 0) DSH_SKIP_OR_FAIL("IPv6 is disabled on this host");
  close(probe);
  InetListener listener(AF_INET6, SOCK_STREAM);
  expect_blocked(listener, {"tcp6", listener.port_text()});
}

// A NETLINK_USERSOCK socket owned by the test stands in for the kernel's netlink families.
class NetlinkListener {
 public:
  NetlinkListener() {
    fd_ = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_USERSOCK);
    sockaddr_nl addr{};
    addr.nl_family = AF_NETLINK;
    socklen_t size = sizeof(addr);
    bind(fd_, reinterpret_cast<sockaddr*>(&addr), size);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &size);
    port_id_ = addr.nl_pid;
  }
  ~NetlinkListener() { close(fd_); }
  bool ok() const { return fd_ >= 0 && port_id_ != 0; }
  std::string port_text() const { return std::to_string(port_id_); }
  bool received() const {
    char buffer[64];
    return ready_poll(fd_, 200) > 0 && recv(fd_, buffer, sizeof(buffer), 0) > 0;
  }

 private:
  int fd_ = -1;
  std::uint32_t port_id_ = 0;
};

TEST_F(LandlockRunNetwork, NetlinkIsRefused) {
  NetlinkListener listener;
  if (!listener.ok()) DSH_SKIP_OR_FAIL("NETLINK_USERSOCK unavailable");
  expect_blocked(listener, {"netlink", listener.port_text()});
}

// --private-netns trusts no word: in the host's namespace (which holds more than lo) the
// launcher refuses it before the command starts, and without --deny-network it is a usage error.
TEST_F(LandlockRunNetwork, PrivateNetnsIsRefusedInTheHostsNamespace) {
  if (if_nametoindex("lo") != 0 && if_nametoindex("eth0") == 0) {
    struct if_nameindex* names = if_nameindex();
    const bool lo_alone = names != nullptr && names[0].if_index != 0 && names[1].if_index == 0;
    if (names != nullptr) if_freenameindex(names);
    if (lo_alone) DSH_SKIP_OR_FAIL("this test's own network namespace holds lo alone");
  }
  TempDir dir;
  const std::string marker = dir / "marker";
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--deny-network", "--private-netns"},
        std::vector<std::string>{"--private-netns"}}) {
    std::vector<std::string> args = flags;
    for (const char* a : {"--ro", "/", "--rw", dir.path().c_str(), "--", "/usr/bin/touch"}) {
      args.push_back(a);
    }
    args.push_back(marker);
    const RunResult run = execute(l(args));
    EXPECT_TRUE(run.exited_with(125)) << run.describe();
    EXPECT_NE(run.err.find("landlock-run: "), std::string::npos) << run.describe();
    EXPECT_FALSE(std::filesystem::exists(marker));
  }
}

TEST_F(LandlockRunNetwork, IoUringCannotOpenOrConnectSockets) {
  if (read_file("/proc/sys/kernel/io_uring_disabled") == "2\n") {
    DSH_SKIP_OR_FAIL("io_uring is disabled on this host (kernel.io_uring_disabled=2)");
  }
  InetListener listener(AF_INET, SOCK_STREAM);
  expect_uring_blocked(listener);
}

// A socketpair keeps working; a socket the test listens on outside is a host socket, reached
// only when listed (unix_socket_test.cpp has the rest).
TEST_F(LandlockRunNetwork, UnixSocketsKeepWorking) {
  const RunResult pair = execute(confined(true, {"unixpair"}));
  EXPECT_TRUE(pair.exited_with(0)) << pair.describe();
  TempDir dir;
  const std::string path = dir / "sock";
  const int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  const RunResult refused = execute(confined(true, {"unix_connect", path}));
  EXPECT_FALSE(refused.exited_with(0)) << refused.describe();
  EXPECT_EQ(ready_poll(listener, 200), 0);
  const RunResult allowed = execute(l({"--deny-network", "--allow-unix-socket", path, "--ro", "/",
                                       "--", probe_path(), "unix_connect", path}));
  EXPECT_TRUE(allowed.exited_with(0)) << allowed.describe();
  EXPECT_EQ(ready_poll(listener, 1000), 1);
  close(listener);
}

// An AF_INET socket inherited from outside never passes through socket(): its connect() is the
// supervisor's to perform, and with the network off it refuses it (EACCES, Landlock's answer), on
// every ABI. Landlock's TCP rights (ABI 4, Linux 6.7) would refuse it too, were the call the
// command's own.
TEST_F(LandlockRunNetwork, InheritedTcpSocketCannotConnect) {
  InetListener listener(AF_INET, SOCK_STREAM);
  const auto attempt = [&](const char* max_abi) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    SpawnOptions options;
    options.fds = {{fd, 3}};
    const RunResult result =
        execute(confined(true, {"connect_fd", "3", listener.port_text()}, max_abi), options);
    close(fd);
    return result;
  };
  for (const char* max_abi : {static_cast<const char*>(nullptr), "3"}) {
    const RunResult run = attempt(max_abi);
    EXPECT_FALSE(listener.received()) << run.describe();
    EXPECT_EQ(run.out, "errno=" + std::to_string(EACCES) + "\n") << run.describe();
  }
}

}  // namespace
}  // namespace llrt
