// SPDX-License-Identifier: Apache-2.0
// Host Unix sockets are network: with --deny-network or --allow-connect-port the supervisor
// performs every connect itself (unix_connect.h). Each attempt aims at a listener the test owns
// outside the sandbox, and the verdict is whether that listener was reached, never the command's
// word; each refusal is paired with a control that gets through.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "harness.h"
#include "must_run.h"

namespace llrt {
namespace {

// A pathname stream socket the test listens on; counts the connections that reached it.
class UnixListener {
 public:
  explicit UnixListener(const std::string& path) : path_(path) {
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    ok_ =
        bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 && listen(fd_, 1024) == 0;
  }
  ~UnixListener() {
    close(fd_);
    unlink(path_.c_str());
  }
  UnixListener(const UnixListener&) = delete;
  UnixListener& operator=(const UnixListener&) = delete;
  bool ok() const { return ok_; }
  const std::string& path() const { return path_; }
  // The connections that arrived since the last call (waits up to 200 ms for the first).
  int accepted() const {
    int count = 0;
    if (ready_poll(fd_, 200) != 1) return 0;
    for (int client; (client = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC)) >= 0; ++count) {
      close(client);
    }
    return count;
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool ok_ = false;
};

constexpr const char* kPython = "/usr/bin/python3";

// Connects to argv[1] (a path, or "@name" for an abstract one); prints "ok" or "errno=N".
constexpr const char* kConnect = R"(
import socket, sys
name = sys.argv[1]
s = socket.socket(socket.AF_UNIX)
try:
    s.connect("\0" + name[1:] if name.startswith("@") else name)
    print("ok")
except OSError as e:
    print("errno=%d" % e.errno)
)";

class LandlockRunUnixSockets : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kernel_abi() < 1) DSH_SKIP_OR_FAIL("this kernel does not enforce Landlock (lsm=landlock)");
  }
  // `landlock-run [--deny-network] EXTRA... --ro / --rw RW -- python3 -c SCRIPT ARGS...`
  static std::vector<std::string> confined(bool deny, const std::vector<std::string>& extra,
                                           const std::string& rw, const char* script,
                                           const std::vector<std::string>& args) {
    std::vector<std::string> argv;
    if (deny) argv.emplace_back("--deny-network");
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {"--ro", "/", "--rw", rw, "--", kPython, "-c", script});
    argv.insert(argv.end(), args.begin(), args.end());
    return l(argv);
  }
};

// A host socket, under /var/tmp and under /tmp (which workspace-write grants): reached without
// --deny-network, refused with it (with and without evidence), ECONNREFUSED.
TEST_F(LandlockRunUnixSockets, HostSocketIsRefusedWithTheNetworkOff) {
  for (const char* base : {"/var/tmp", "/tmp"}) {
    TempDir dir(base);
    TempDir rw;
    UnixListener host(dir / "host.sock");
    ASSERT_TRUE(host.ok());
    const RunResult control = execute(confined(false, {}, rw.path(), kConnect, {host.path()}));
    EXPECT_EQ(control.out, "ok\n") << control.describe();
    EXPECT_EQ(host.accepted(), 1) << "control did not get through: " << control.describe();
    for (const bool evidence : {false, true}) {
      const std::vector<std::string> extra =
          evidence ? std::vector<std::string>{"--evidence"} : std::vector<std::string>{};
      const RunResult denied = execute(confined(true, extra, rw.path(), kConnect, {host.path()}));
      EXPECT_EQ(host.accepted(), 0) << "reached the host socket: " << denied.describe();
      EXPECT_EQ(denied.out, "errno=" + std::to_string(ECONNREFUSED) + "\n") << denied.describe();
    }
  }
}

// --allow-unix-socket lets exactly the listed socket through.
TEST_F(LandlockRunUnixSockets, AllowedSocketGetsThrough) {
  TempDir dir;
  TempDir rw;
  UnixListener allowed(dir / "allowed.sock");
  UnixListener other(dir / "other.sock");
  ASSERT_TRUE(allowed.ok() && other.ok());
  const std::vector<std::string> extra = {"--allow-unix-socket", allowed.path()};
  const RunResult through = execute(confined(true, extra, rw.path(), kConnect, {allowed.path()}));
  EXPECT_EQ(through.out, "ok\n") << through.describe();
  EXPECT_EQ(allowed.accepted(), 1) << through.describe();
  const RunResult refused = execute(confined(true, extra, rw.path(), kConnect, {other.path()}));
  EXPECT_EQ(other.accepted(), 0) << refused.describe();
  // With the network inherited the option has nothing to lift: a usage error, not ignored.
  const RunResult inherit = execute(confined(false, extra, rw.path(), kConnect, {other.path()}));
  EXPECT_TRUE(inherit.exited_with(125)) << inherit.describe();
}

// Sockets the command binds itself keep working: a pathname one (absolute and relative to its
// cwd) and an abstract one. A datagram socket, whose sendto carries an address no filter can
// read race-free, is refused at creation.
TEST_F(LandlockRunUnixSockets, SocketsTheRunBindsKeepWorking) {
  constexpr const char* kServe = R"(
import os, socket, sys, threading
def serve(name):
    s = socket.socket(socket.AF_UNIX)
    s.bind(name)
    s.listen(1)
    threading.Thread(target=lambda: s.accept()[0].sendall(b"hi")).start()
    c = socket.socket(socket.AF_UNIX)
    c.connect(name)
    return c.recv(2).decode()
os.chdir(sys.argv[1])
print(serve(sys.argv[1] + "/abs.sock"), serve("rel.sock"), serve("\0dsh-test-%d" % os.getpid()))
for make in (lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM),
             lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)):
    try:
        make()
        print("datagram made")
    except OSError as e:
        print("errno=%d" % e.errno)
)";
  for (const bool evidence : {false, true}) {
    TempDir rw;
    const std::vector<std::string> extra =
        evidence ? std::vector<std::string>{"--evidence"} : std::vector<std::string>{};
    const RunResult run = execute(confined(true, extra, rw.path(), kServe, {rw.path()}));
    const std::string refused = "errno=" + std::to_string(EAFNOSUPPORT) + "\n";
    EXPECT_EQ(run.out, "hi hi hi\n" + refused + refused) << run.describe();
  }
}

// The record of a refused connect is a network one naming the socket (the kernel's view of the
// node, not the text the command spelled: here a symbolic link in the writable root).
TEST_F(LandlockRunUnixSockets, RefusalIsANetworkRecordNamingTheSocket) {
  TempDir dir;
  TempDir rw;
  UnixListener host(dir / "host.sock");
  ASSERT_TRUE(host.ok());
  ASSERT_EQ(symlink(host.path().c_str(), (rw / "link").c_str()), 0);
  TempDir status_dir;
  const std::string status = status_dir / "status";
  const int fd = open(status.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  SpawnOptions options;
  options.fds = {{fd, 9}};
  const RunResult run = execute(
      confined(true, {"--evidence", "--status-fd", "9"}, rw.path(), kConnect, {rw / "link"}),
      options);
  close(fd);
  EXPECT_EQ(host.accepted(), 0) << run.describe();
  const std::string records = read_file(status);
  EXPECT_NE(records.find("denial op=connect rule=network-denied pid="), std::string::npos)
      << records;
  EXPECT_NE(records.find(" path=" + host.path() + "\n"), std::string::npos) << records;
}

// A symbolic link swapped between an allowed and a forbidden socket while the command connects
// through it, and the sockaddr itself rewritten by another thread while connect is pending: the
// supervisor checks and connects one pinned node, so the forbidden one is never reached.
TEST_F(LandlockRunUnixSockets, SwapRacesNeverReachTheForbiddenSocket) {
  TempDir dir;
  TempDir rw;
  UnixListener allowed(dir / "allowed.sock");
  UnixListener forbidden(dir / "forbidden.sock");
  ASSERT_TRUE(allowed.ok() && forbidden.ok());
  constexpr const char* kRace = R"(
import ctypes, os, socket, sys, threading
allowed, forbidden, link = sys.argv[1:4]
stop = False
def swap():
    while not stop:
        for target in (allowed, forbidden):
            try:
                os.unlink(link + ".new")
            except FileNotFoundError:
                pass
            os.symlink(target, link + ".new")
            os.rename(link + ".new", link)
libc = ctypes.CDLL(None, use_errno=True)
def address(path):
    return (ctypes.c_ushort(socket.AF_UNIX).value.to_bytes(2, sys.byteorder) +
            path.encode() + b"\0" * (108 - len(path)))
good, bad = address(allowed), address(forbidden)
buffer = ctypes.create_string_buffer(good, 110)
def flip():
    while not stop:
        ctypes.memmove(buffer, bad, 110)
        ctypes.memmove(buffer, good, 110)
threads = [threading.Thread(target=swap), threading.Thread(target=flip)]
for t in threads:
    t.start()
through = 0
for i in range(300):
    for target in ("link", "buffer"):
        s = socket.socket(socket.AF_UNIX)
        if target == "link":
            try:
                s.connect(link)
                through += 1
            except OSError:
                pass
        elif libc.connect(s.fileno(), buffer, 110) == 0:
            through += 1
        s.close()
stop = True
for t in threads:
    t.join()
print("through", through > 0)
)";
  const RunResult run = execute(confined(true, {"--allow-unix-socket", allowed.path()}, rw.path(),
                                         kRace, {allowed.path(), forbidden.path(), rw / "link"}));
  EXPECT_EQ(run.out, "through True\n") << run.describe();
  EXPECT_GT(allowed.accepted(), 0) << run.describe();
  EXPECT_EQ(forbidden.accepted(), 0) << "the forbidden socket was reached: " << run.describe();
}

// The allow-list's TCP rule is the supervisor's now (it performs the connect): the listed port
// only, on every ABI.
TEST_F(LandlockRunUnixSockets, AllowListConnectsOnlyToItsPort) {
  if (kernel_abi() < 4) DSH_SKIP_OR_FAIL("needs Landlock ABI >= 4 (Linux 6.7) for TCP rights");
  InetListener bridge(AF_INET, SOCK_STREAM);
  InetListener other(AF_INET, SOCK_STREAM);
  for (const InetListener* target : {&bridge, &other}) {
    const RunResult run = execute(l({"--allow-connect-port", bridge.port_text(), "--ro", "/", "--",
                                     probe_path(), "tcp4", target->port_text()}));
    EXPECT_EQ(target->received(), target == &bridge) << run.describe();
  }
}

}  // namespace
}  // namespace llrt
