// SPDX-License-Identifier: Apache-2.0
// Host Unix sockets are network: with the network denied (the default) a confined command reaches
// no named Unix socket outside the run, whatever tool it uses, on both backends, as root and as
// nobody; --allow-unix-socket lets a listed one through, a socket the run binds keeps working,
// and the refusal is a network record that --learn turns into the option. Every verdict is the
// listener's, outside the sandbox: did anything connect.
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "cli_run_harness.h"
#include "must_run.h"

namespace dsh::cli_run_it {
namespace {

using std::string;
using std::vector;

// A host service's socket: a pathname stream listener the test holds, open to every user (the
// nobody leg's command must be able to reach it, or a refusal would prove nothing).
class HostSocket {
 public:
  explicit HostSocket(const string& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    ok_ = ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
          ::chmod(path.c_str(), 0777) == 0 && ::listen(fd_, 1024) == 0;
  }
  ~HostSocket() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  HostSocket(const HostSocket&) = delete;
  HostSocket& operator=(const HostSocket&) = delete;
  bool ok() const { return ok_; }
  const string& path() const { return path_; }
  // The connections that reached it since the last call (waits up to 300 ms for the first).
  int connections() const {
    pollfd ready{fd_, POLLIN, 0};
    if (::poll(&ready, 1, 300) != 1) return 0;
    int count = 0;
    for (int client; (client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC)) >= 0; ++count) {
      ::close(client);
    }
    return count;
  }

 private:
  string path_;
  int fd_ = -1;
  bool ok_ = false;
};

// Every tool's attempt on socket $1; the verdict is the listener's.
const string kAttempts =
    "/usr/bin/python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' "
    "\"$1\"; curl -s --max-time 2 --unix-socket \"$1\" http://localhost/ >/dev/null; "
    "command -v socat >/dev/null && socat -u OPEN:/dev/null UNIX-CONNECT:\"$1\"; true";

class CliUnixSockets : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (!host_problem().empty()) DSH_SKIP_OR_FAIL(host_problem());
    ::chmod(dir_.path().c_str(), 0755);
    ws_ = dir_.mkdir("ws");
    ::chmod(ws_.c_str(), 0777);
  }
  vector<string> run(const vector<string>& options, const string& script,
                     const vector<string>& args) {
    vector<string> argv = {"run", "--mode", "workspace-write", "--workspace", ws_};
    if (GetParam() == Backend::kLandlock) {
      const string config = dir_ / "landlock.json";
      if (!exists(config)) write_file(config, R"({"bwrapPath":"/nonexistent/dsh-unix/bwrap"})");
      argv.insert(argv.end(), {"--config", config});
    }
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {"--", "/bin/bash", "-c", script, "attempt"});
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  TempDir dir_;
  string ws_;
};

INSTANTIATE_TEST_SUITE_P(Backends, CliUnixSockets,
                         ::testing::Values(Backend::kNatural, Backend::kLandlock),
                         [](const ::testing::TestParamInfo<Backend>& param) {
                           return string(param.param == Backend::kNatural ? "bwrap" : "landlock");
                         });

// A socket in a 0755 directory under /var/tmp and one under /tmp (which workspace-write grants on
// Landlock alone): python, curl and socat reach neither with the network denied, with or without
// evidence; --network inherit (the control) reaches both; --allow-unix-socket reaches exactly the
// one it lists.
TEST_P(CliUnixSockets, HostSocketsAreRefusedUnlessListed) {
  TempDir var_dir;
  TempDir tmp_dir("/tmp");
  for (const TempDir* dir : {&var_dir, &tmp_dir}) ::chmod(dir->path().c_str(), 0755);
  HostSocket var_socket(var_dir / "service.sock");
  HostSocket tmp_socket(tmp_dir / "service.sock");
  ASSERT_TRUE(var_socket.ok() && tmp_socket.ok());
  for (const HostSocket* socket : {&var_socket, &tmp_socket}) {
    const bool under_tmp = socket == &tmp_socket;
    // Inside bwrap a workspace-write run has a private /tmp: the host's socket is not even there.
    if (!(under_tmp && GetParam() == Backend::kNatural)) {
      const CliResult control = cli(run({"--network", "inherit"}, kAttempts, {socket->path()}));
      EXPECT_GE(socket->connections(), 2) << "control did not get through: " << control.describe();
    }
    for (const char* evidence : {"--json", "--no-evidence"}) {
      const CliResult denied = cli(run({evidence}, kAttempts, {socket->path()}));
      EXPECT_EQ(socket->connections(), 0) << "a host socket was reached: " << denied.describe();
    }
    const CliResult allowed =
        cli(run({"--allow-unix-socket", socket->path()}, kAttempts, {socket->path()}));
    EXPECT_GE(socket->connections(), 2) << "the allowed socket was refused: " << allowed.describe();
    const HostSocket& other = under_tmp ? var_socket : tmp_socket;
    const CliResult others =
        cli(run({"--allow-unix-socket", socket->path()}, kAttempts, {other.path()}));
    EXPECT_EQ(other.connections(), 0) << "an unlisted socket was reached: " << others.describe();
  }
}

// The refusal is a network record naming the socket; --learn proposes the option, and the agent
// render names the refused socket.
TEST_P(CliUnixSockets, RefusalIsANetworkRecordThatLearnNames) {
  TempDir dir;
  ::chmod(dir.path().c_str(), 0755);
  HostSocket socket(dir / "bus.sock");
  ASSERT_TRUE(socket.ok());
  const string connect =
      "/usr/bin/python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' "
      "\"$1\"";
  const CliResult json = cli(run({"--json"}, connect, {socket.path()}));
  EXPECT_EQ(socket.connections(), 0) << json.describe();
  const nlohmann::json object = parse_json(json.out);
  ASSERT_EQ(object["denials"].size(), 1U) << json.out;
  EXPECT_EQ(object["denials"][0]["kind"], "network") << json.out;
  EXPECT_EQ(object["denials"][0]["op"], "connect") << json.out;
  EXPECT_EQ(object["denials"][0]["path"], socket.path()) << json.out;
  EXPECT_EQ(object["denied"], true) << json.out;
  const CliResult learn = cli(run({"--learn"}, connect, {socket.path()}));
  EXPECT_NE(learn.err.find("dsh-sandbox: learn: --allow-unix-socket " + socket.path()),
            string::npos)
      << learn.describe();
  const CliResult agent = cli(run({"--format", "agent"}, connect, {socket.path()}));
  EXPECT_NE(agent.out.find("[sandbox refused: connect " + socket.path() + " (network-denied)]"),
            string::npos)
      << agent.describe();
  EXPECT_EQ(socket.connections(), 0);
}

// A server the command starts in its workspace keeps working, pathname and abstract, and a
// symbolic link the command swaps between an allowed and a forbidden socket while it connects
// never reaches the forbidden one.
TEST_P(CliUnixSockets, RunSocketsWorkAndASwapRaceNeverReachesTheForbiddenSocket) {
  const string serve = R"(/usr/bin/python3 -c '
import os, socket, threading
def serve(name):
    s = socket.socket(socket.AF_UNIX)
    s.bind(name)
    s.listen(1)
    threading.Thread(target=lambda: s.accept()[0].sendall(b"hi")).start()
    c = socket.socket(socket.AF_UNIX)
    c.connect(name)
    return c.recv(2).decode()
print(serve("server.sock"), serve("\0dsh-cli-%d" % os.getpid()))
')";
  const CliResult own = cli(run({}, "cd \"$1\" && " + serve, {ws_}));
  EXPECT_EQ(own.out, "hi hi\n") << own.describe();

  TempDir dir;
  ::chmod(dir.path().c_str(), 0755);
  HostSocket allowed(dir / "allowed.sock");
  HostSocket forbidden(dir / "forbidden.sock");
  ASSERT_TRUE(allowed.ok() && forbidden.ok());
  const string race = R"(/usr/bin/python3 -c '
import os, socket, sys, threading
allowed, forbidden, link = sys.argv[1:4]
stop = False
def swap():
    while not stop:
        for target in (allowed, forbidden):
            os.symlink(target, link + ".new")
            os.rename(link + ".new", link)
threading.Thread(target=swap).start()
through = 0
for i in range(400):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(link)
        through += 1
    except OSError:
        pass
    s.close()
stop = True
print("through", through > 0)
' "$@")";
  const CliResult raced = cli(run({"--allow-unix-socket", allowed.path()}, race,
                                  {allowed.path(), forbidden.path(), ws_ + "/link"}));
  EXPECT_EQ(raced.out, "through True\n") << raced.describe();
  EXPECT_GT(allowed.connections(), 0) << raced.describe();
  EXPECT_EQ(forbidden.connections(), 0) << "the forbidden socket was reached: " << raced.describe();
}

}  // namespace
}  // namespace dsh::cli_run_it
