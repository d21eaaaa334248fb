// SPDX-License-Identifier: Apache-2.0
// The network allow-list end to end: `dsh-sandbox confine --status-channels` under an allow-list,
// spawned here with a pipe on every status channel, against an HTTP server on the host's
// loopback that the resolver override names. Every verdict is read from outside: the proxy's
// denial lines on its status channel, the server's answers, and /proc after the run.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include "base/io.h"
#include "files.h"
#include "must_run.h"
#include "process.h"
#include "temp_dir.h"
#include "wait.h"

namespace {

using dsh::testing::execute;
using dsh::testing::RunResult;
using dsh::testing::SpawnOptions;
using dsh::testing::Started;
using dsh::testing::TempDir;

constexpr const char* kServer = R"(
import http.server, os, sys
os.chdir(sys.argv[1])
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args): pass
server = http.server.ThreadingHTTPServer((sys.argv[3] if len(sys.argv) > 3 else "127.0.0.1", 0), Quiet)
with open(sys.argv[2] + ".tmp", "w") as f: f.write(str(server.server_port))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
server.serve_forever()
)";

struct Outcome {
  RunResult run;
  std::string proxy_status;  // what dsh-netproxy wrote on its status channel
};

class NetProxyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    upstream_dir = new TempDir();
    std::ofstream(*upstream_dir / "index.html") << "hello from upstream\n";
    std::ofstream(*upstream_dir / "server.py") << kServer;
    const std::string port_file = *upstream_dir / "port";
    upstream_server = new Started(
        {"/usr/bin/python3", *upstream_dir / "server.py", upstream_dir->path(), port_file});
    upstream_port = dsh::testing::wait_for_port_file(port_file);
  }
  static void TearDownTestSuite() {
    if (upstream_server != nullptr) {
      ::kill(upstream_server->pid(), SIGKILL);
      upstream_server->wait();
    }
    delete upstream_server;
    delete upstream_dir;
  }

  void SetUp() override {
    if (upstream_port == 0) DSH_SKIP_OR_FAIL("the loopback HTTP server did not start");
    if (::access("/usr/bin/bwrap", X_OK) != 0) DSH_SKIP_OR_FAIL("bwrap is not installed");
  }

  static std::string port() { return std::to_string(upstream_port); }

  // Runs `script` (python3 -c) under the test allow-list.
  static Outcome run_python(const std::string& script) {
    TempDir workspace;
    const RunResult confined =
        execute({DSH_SANDBOX_PATH, "confine", "--status-channels", "--workspace", workspace.path(),
                 "--network", "allow:allowed.test,*.allowed.test,127.0.0.1", "--network-deny",
                 "blocked.allowed.test", "--network-resolve", "allowed.test=127.0.0.1",
                 "--network-resolve", "blocked.allowed.test=127.0.0.1", "--network-resolve",
                 "rebind.allowed.test=127.0.0.2", "--", "python3", "-c", script});
    EXPECT_TRUE(confined.exited_with(0)) << confined.describe();
    const auto facts = nlohmann::json::parse(confined.out);
    EXPECT_EQ(facts["network"], "allow-list");
    std::vector<std::pair<int, int>> read_ends;  // {read end, channel fd}
    SpawnOptions options;
    int proxy_fd = -1;
    for (const auto& channel : facts["statusChannels"]) {
      if (channel["layer"] == "netproxy") proxy_fd = channel["fd"].get<int>();
      int pipe_fds[2];
      EXPECT_EQ(::pipe(pipe_fds), 0);
      read_ends.emplace_back(pipe_fds[0], channel["fd"].get<int>());
      options.fds.emplace_back(pipe_fds[1], channel["fd"].get<int>());
    }
    EXPECT_TRUE(facts["providedFds"].empty());
    Outcome outcome;
    {
      Started started(facts["argv"].get<std::vector<std::string>>(), options);
      for (auto& [write_end, number] : options.fds) ::close(write_end);
      outcome.run = started.wait(std::chrono::seconds(60));
    }
    for (auto& [read_end, number] : read_ends) {
      std::string text;
      dsh::sandbox::io::read_all(read_end, text);
      ::close(read_end);
      if (number == proxy_fd) outcome.proxy_status = text;
    }
    return outcome;
  }

  static inline TempDir* upstream_dir = nullptr;
  static inline Started* upstream_server = nullptr;
  static inline int upstream_port = 0;
};

// A CONNECT request written by hand, so the test controls every byte of the name.
std::string connect_script(const std::string& authority_expr) {
  return "import socket\n"
         "s = socket.create_connection(('127.0.0.1', 3128))\n"
         "s.sendall(b'CONNECT ' + " +
         authority_expr +
         " + b' HTTP/1.1\\r\\n\\r\\n')\n"
         "print(s.recv(200).split(b'\\r\\n')[0].decode())\n";
}

TEST_F(NetProxyTest, AllowedNameAnswersThroughCurlAndTunnel) {
  const Outcome outcome = run_python(
      "import subprocess\n"
      "print(subprocess.run(['curl', '-sS', 'http://allowed.test:" +
      port() +
      "/index.html'], capture_output=True, text=True).stdout, end='')\n"
      "print(subprocess.run(['curl', '-sS', '-p', 'http://ALLOWED.test.:" +
      port() +
      "/index.html'], capture_output=True, text=True).stdout, end='')\n"
      "print(subprocess.run(['curl', '-sS', '-x', 'socks5h://127.0.0.1:3128', "
      "'http://sub.allowed.test:" +
      port() +
      "/index.html'], capture_output=True, "
      "text=True).stdout, end='')\n");
  EXPECT_TRUE(outcome.run.exited_with(0)) << outcome.run.describe();
  EXPECT_EQ(outcome.run.out, "hello from upstream\nhello from upstream\n");
  // sub.allowed.test has no override and no DNS answer here: refused by the resolver, not by
  // the lists, so no denial record.
  EXPECT_EQ(outcome.proxy_status, "");
}

TEST_F(NetProxyTest, RefusedNameAndAddressLeaveDenialRecords) {
  const Outcome outcome = run_python(
      "import subprocess\n"
      "for url in ['http://other.test:" +
      port() + "/', 'http://127.0.0.3:" + port() + "/', 'http://blocked.allowed.test:" + port() +
      "/']:\n"
      "    r = subprocess.run(['curl', '-s', '-o', '/dev/null', '-w', '%{http_code}\\n', url],"
      " capture_output=True, text=True)\n"
      "    print(r.stdout, end='')\n");
  EXPECT_TRUE(outcome.run.exited_with(0)) << outcome.run.describe();
  EXPECT_EQ(outcome.run.out, "403\n403\n403\n");
  for (const std::string host : {"other.test", "127.0.0.3", "blocked.allowed.test"}) {
    EXPECT_NE(outcome.proxy_status.find("denial op=connect rule=network-not-allowed pid=- exe= "
                                        "path=" +
                                        host + ":" + port() + "\n"),
              std::string::npos)
        << outcome.proxy_status;
  }
}

TEST_F(NetProxyTest, TrickSpellingsAreRefused) {
  const Outcome outcome =
      run_python(connect_script("b'allowed.test\\x00.evil.test:" + port() + "'") +
                 connect_script("b'BLOCKED.Allowed.Test.:" + port() + "'") +
                 connect_script("'\\u0430llowed.test:" + port() + "'.encode()") +  // Cyrillic a
                 connect_script("b'rebind.allowed.test:" + port() + "'") +
                 connect_script("b'allowed.test:0" + port() + "0'") +
                 connect_script("b'Allowed.Test.:" + port() + "'"));
  EXPECT_TRUE(outcome.run.exited_with(0)) << outcome.run.describe();
  EXPECT_EQ(outcome.run.out,
            "HTTP/1.1 403 Forbidden\nHTTP/1.1 403 Forbidden\nHTTP/1.1 403 Forbidden\n"
            "HTTP/1.1 403 Forbidden\nHTTP/1.1 403 Forbidden\n"
            "HTTP/1.1 200 Connection established\n");
  EXPECT_NE(outcome.proxy_status.find("path=blocked.allowed.test:" + port()), std::string::npos);
  EXPECT_NE(outcome.proxy_status.find("path=xn--llowed-2nf.test:" + port()), std::string::npos)
      << outcome.proxy_status;
  // The wildcard admitted the name; the address it rebinds to is the refusal, with its range
  // and the entry that would allow it.
  EXPECT_NE(outcome.proxy_status.find(
                "path=127.0.0.2:" + port() +
                " detail=rebind.allowed.test%20resolves%20to%20127.0.0.2,%20in%20127.0.0.0/"
                "8%20(loopback)"),
            std::string::npos)
      << outcome.proxy_status;
  EXPECT_NE(outcome.proxy_status.find("path=allowed.test:0" + port() + "0\n"), std::string::npos);
  EXPECT_NE(outcome.proxy_status.find("path=allowed.test%00.evil.test:" + port()),
            std::string::npos)
      << outcome.proxy_status;
}

TEST_F(NetProxyTest, SniOtherThanTheTunnelsNameIsRefused) {
  const Outcome outcome = run_python(
      "import socket, ssl\n"
      "s = socket.create_connection(('127.0.0.1', 3128))\n"
      "s.sendall(b'CONNECT allowed.test:" +
      port() +
      " HTTP/1.1\\r\\n\\r\\n')\n"
      "print(s.recv(200).split(b'\\r\\n')[0].decode())\n"
      "ctx = ssl.create_default_context()\n"
      "try:\n"
      "    ctx.wrap_socket(s, server_hostname='evil.test')\n"
      "    print('handshake')\n"
      "except (ssl.SSLError, OSError) as e:\n"
      "    print('refused')\n");
  EXPECT_TRUE(outcome.run.exited_with(0)) << outcome.run.describe();
  EXPECT_EQ(outcome.run.out, "HTTP/1.1 200 Connection established\nrefused\n");
  EXPECT_NE(outcome.proxy_status.find("path=evil.test:" + port()), std::string::npos)
      << outcome.proxy_status;
}

TEST_F(NetProxyTest, DirectTcpUdpAndRawSocketsFail) {
  const Outcome outcome = run_python(
      "import socket\n"
      "def attempt(name, fn):\n"
      "    try:\n"
      "        fn(); print(name, 'ok')\n"
      "    except OSError as e:\n"
      "        print(name, 'failed')\n"
      "attempt('tcp-host', lambda: socket.create_connection(('127.0.0.1', " +
      port() +
      "), timeout=5))\n"
      "attempt('tcp-out', lambda: socket.create_connection(('10.0.0.1', 80), timeout=5))\n"
      "attempt('udp', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
      ".sendto(b'x', ('127.0.0.1', 53)))\n"
      "attempt('raw', lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, 1))\n"
      "attempt('packet', lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW))\n");
  EXPECT_TRUE(outcome.run.exited_with(0)) << outcome.run.describe();
  EXPECT_EQ(outcome.run.out,
            "tcp-host failed\ntcp-out failed\nudp failed\nraw failed\npacket failed\n");
}

TEST_F(NetProxyTest, ProxyIsGoneAfterTheRun) {
  // A token only this run's argv holds: the other tests' proxies may run beside it (ctest -j).
  const std::string token = "proxy-gone-" + std::to_string(::getpid());
  const Outcome outcome = run_python("print('done')  # " + token + "\n");
  EXPECT_TRUE(outcome.run.exited_with(0)) << outcome.run.describe();
  // From outside: no dsh-netproxy of this run is left (the proxy waited for bwrap, whose PID
  // namespace took the bridge with it). Each one's command line holds the chain after it.
  const std::string self = std::filesystem::path(DSH_SANDBOX_PATH).parent_path() / "dsh-netproxy";
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::error_code error;
    const auto exe = std::filesystem::read_symlink(entry.path() / "exe", error);
    if (error || exe.string() != self) continue;
    std::string cmdline;
    std::getline(std::ifstream(entry.path() / "cmdline"), cmdline, '\f');
    EXPECT_EQ(cmdline.find(token), std::string::npos) << entry.path();
  }
}

// The proxy's control socket carries the bridge's accepted TCP connections. Driven here by a
// child of the proxy standing in for the bridge: a Unix socket handed over is closed unanswered,
// a connected TCP stream is served (its CONNECT to a listed name is answered 200).
TEST_F(NetProxyTest, ProxyServesOnlyTcpStreamsHandedOver) {
  const std::string script =
      "import array, socket\n"
      "control = socket.socket(fileno=6)\n"
      "def hand(fd):\n"
      "    control.sendmsg([b'x'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, "
      "array.array('i', [fd]))])\n"
      "request = b'CONNECT allowed.test:" +
      port() +
      " HTTP/1.1\\r\\n\\r\\n'\n"
      "ours, theirs = socket.socketpair()\n"
      "hand(theirs.fileno()); theirs.close()\n"
      "ours.settimeout(10)\n"
      "try:\n"
      "    ours.sendall(request); answer = ours.recv(200)\n"
      "except OSError:\n"
      "    answer = b''  # closed before or after the request arrived\n"
      "print('unix:', answer)\n"
      "listener = socket.create_server(('127.0.0.1', 0))\n"
      "ours = socket.create_connection(listener.getsockname())\n"
      "theirs, _ = listener.accept()\n"
      "hand(theirs.fileno()); theirs.close()\n"
      "ours.settimeout(10); ours.sendall(request)\n"
      "print('tcp:', ours.recv(200).split(b'\\r\\n')[0])\n";
  const std::string proxy = std::filesystem::path(DSH_SANDBOX_PATH).parent_path() / "dsh-netproxy";
  const RunResult run =
      execute({proxy, "--allow", "allowed.test", "--allow", "127.0.0.1", "--resolve",
               "allowed.test=127.0.0.1", "--", "python3", "-c", script});
  EXPECT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(run.out, "unix: b''\ntcp: b'HTTP/1.1 200 Connection established'\n") << run.describe();
}

// git over (dumb) http through the proxy's plain forwarding: the allowed name lists the
// repository's refs, a refused one fails with a denial record.
TEST_F(NetProxyTest, GitOverHttpReachesOnlyTheAllowedName) {
  if (::access("/usr/bin/git", X_OK) != 0) DSH_SKIP_OR_FAIL("git is not installed");
  const std::string repo = *upstream_dir / "repo.git";
  if (!std::filesystem::exists(repo)) {
    const std::string work = *upstream_dir / "repo-work";
    const RunResult made = execute(
        {"/bin/sh", "-c",
         "set -e; git init -q -b main '" + work + "'; cd '" + work +
             "'; echo hi > f; git add f; git -c user.name=t -c user.email=t@t commit -qm one; "
             "git clone -q --bare . '" +
             repo + "'; cd '" + repo + "'; git update-server-info; chmod -R a+rX '" + repo + "'"});
    ASSERT_TRUE(made.exited_with(0)) << made.describe();
  }
  const Outcome outcome = run_python(
      "import subprocess\n"
      "for host in ['allowed.test', 'other.test']:\n"
      "    r = subprocess.run(['git', 'ls-remote', 'http://' + host + ':" +
      port() +
      "/repo.git'], capture_output=True, text=True)\n"
      "    print(host, r.returncode == 0 and 'refs/heads/main' in r.stdout)\n");
  EXPECT_TRUE(outcome.run.exited_with(0)) << outcome.run.describe();
  EXPECT_EQ(outcome.run.out, "allowed.test True\nother.test False\n") << outcome.run.describe();
  EXPECT_NE(outcome.proxy_status.find(
                "rule=network-not-allowed pid=- exe= path=other.test:" + port() + "\n"),
            std::string::npos)
      << outcome.proxy_status;
}

// pip against a local simple index (PEP 503) through the proxy: the allowed index answers with
// the package's versions, a refused name fails with a denial record. `pip index versions` reads
// the index only, so the run needs no writable directory.
TEST_F(NetProxyTest, PipReadsOnlyTheAllowedIndex) {
  if (::access("/usr/bin/pip3", X_OK) != 0) DSH_SKIP_OR_FAIL("pip is not installed");
  std::filesystem::create_directories(*upstream_dir / "simple/demo");
  std::ofstream(*upstream_dir / "simple/index.html") << "<a href=\"demo/\">demo</a>\n";
  std::ofstream(*upstream_dir / "simple/demo/index.html")
      << "<a href=\"demo-1.2.0-py3-none-any.whl\">demo-1.2.0-py3-none-any.whl</a>\n";
  const Outcome outcome = run_python(
      "import subprocess\n"
      "for host in ['allowed.test', 'other.test']:\n"
      "    r = subprocess.run(['python3', '-m', 'pip', 'index', 'versions', 'demo', "
      "'--no-cache-dir',"
      " '--disable-pip-version-check', '--retries', '0', '--timeout', '10', '--trusted-host', host,"
      " '--index-url',"
      " 'http://' + host + ':" +
      port() +
      "/simple/'], capture_output=True, text=True)\n"
      "    print(host, r.returncode == 0 and '1.2.0' in r.stdout)\n");
  EXPECT_TRUE(outcome.run.exited_with(0)) << outcome.run.describe();
  EXPECT_EQ(outcome.run.out, "allowed.test True\nother.test False\n") << outcome.run.describe();
  EXPECT_NE(outcome.proxy_status.find("path=other.test:" + port() + "\n"), std::string::npos)
      << outcome.proxy_status;
}

// A trusted config file (not under /tmp, the workspace or $TMPDIR) holding `json`.
std::string write_config(const TempDir& dir, const std::string& json) {
  const std::string path = dir / "config.json";
  std::ofstream(path) << json;
  return path;
}

// The allow-list from the config file, through `run --json --learn`: the refused name is a denial
// record in the JSON result and learn proposes it beside the allowed one.
TEST_F(NetProxyTest, ConfigAllowListRefusalReachesRunJsonAndLearn) {
  TempDir workspace;
  TempDir config_dir;
  const std::string config = write_config(
      config_dir, R"({"mode":"workspace-write","networkAllow":["allowed.test","127.0.0.1"],)"
                  R"("networkDeny":["blocked.allowed.test"]})");
  const RunResult run = execute(
      {DSH_SANDBOX_PATH, "run", "--json", "--learn", "--config", config, "--workspace",
       workspace.path(), "--network-resolve", "allowed.test=127.0.0.1", "--", "bash", "-c",
       "curl -s -o /dev/null -w '%{http_code}\n' http://allowed.test:" + port() +
           "/index.html; curl -s -o /dev/null -w '%{http_code}\n' http://other.test:" + port() +
           "/"});
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const auto result = nlohmann::json::parse(run.out);
  EXPECT_EQ(result["stdout"], "200\n403\n") << run.out;
  EXPECT_EQ(result["network"], "allow-list");
  EXPECT_EQ(result["policy"]["networkAllow"], nlohmann::json::array({"allowed.test", "127.0.0.1"}));
  EXPECT_EQ(result["policy"]["networkDeny"], nlohmann::json::array({"blocked.allowed.test"}));
  bool found = false;
  for (const auto& denial : result["denials"]) {
    found = found || (denial["op"] == "connect" && denial["rule"] == "network-not-allowed" &&
                      denial["path"] == "other.test:" + port());
  }
  EXPECT_TRUE(found) << result["denials"].dump();
  EXPECT_NE(run.err.find("learn: --network allow:allowed.test,127.0.0.1,other.test"),
            std::string::npos)
      << run.err;
}

// Landlock alone has no network namespace to force the route: the allow-list is unavailable
// with the reason, and nothing runs (the marker the command would create stays absent).
TEST_F(NetProxyTest, LandlockAloneRefusesTheAllowListAndRunsNothing) {
  TempDir workspace;
  TempDir config_dir;
  const std::string config =
      write_config(config_dir, R"({"bwrapPath":"/nonexistent/dsh-netproxy-test/bwrap"})");
  const std::string marker = workspace / "marker";
  const RunResult run = execute({DSH_SANDBOX_PATH, "run", "--config", config, "--workspace",
                                 workspace.path(), "--mode", "workspace-write", "--network",
                                 "allow:allowed.test", "--", "touch", marker});
  EXPECT_TRUE(run.exited_with(125)) << run.describe();
  EXPECT_NE(run.err.find("the command was not run, confined or unconfined"), std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("needs bwrap's network namespace"), std::string::npos) << run.err;
  EXPECT_FALSE(std::filesystem::exists(marker));
  // The same policy without the allow-list runs there: the refusal is the allow-list's.
  const RunResult plain =
      execute({DSH_SANDBOX_PATH, "run", "--config", config, "--workspace", workspace.path(),
               "--mode", "workspace-write", "--", "touch", marker});
  EXPECT_TRUE(plain.exited_with(0)) << plain.describe();
  EXPECT_TRUE(std::filesystem::exists(marker));
}

// The programs a confined argv starts, read from the argv alone: its first word, then the word
// after each "--" while that word is one of the runners; each named as `layers` names it.
std::vector<std::string> layer_names_of(const std::vector<std::string>& argv) {
  const std::vector<std::pair<std::string, std::string>> runners = {
      {"dsh-netproxy", "netproxy"},
      {"bwrap", "bwrap"},
      {"landlock-run", "landlock-run"},
      {"dsh-seccomp-exec", "seccomp-exec"}};
  std::vector<std::string> names;
  auto word = argv.begin();
  while (word != argv.end()) {
    const std::string base = std::filesystem::path(*word).filename();
    const auto runner = std::find_if(runners.begin(), runners.end(),
                                     [&](const auto& entry) { return entry.first == base; });
    if (runner == runners.end()) break;
    names.push_back(runner->second);
    word = std::find(word, argv.end(), std::string("--"));
    if (word != argv.end()) ++word;
  }
  EXPECT_EQ(std::vector<std::string>(word, argv.end()), std::vector<std::string>{"true"});
  return names;
}

// `layers` names every program the argv starts, in order, the allow-list's proxy and its bridge
// included; the backend label stays the one without them. On this host's chain, with and
// without the allow-list, and on Landlock alone (bwrap made unusable by the config).
TEST_F(NetProxyTest, ConfineLayersNameEveryProgramOfTheArgv) {
  TempDir workspace;
  TempDir config_dir;
  const std::string landlock_alone =
      write_config(config_dir, R"({"bwrapPath":"/nonexistent/dsh-netproxy-test/bwrap"})");
  const std::vector<std::string> base = {DSH_SANDBOX_PATH, "confine", "--status-channels",
                                         "--workspace", workspace.path()};
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--network", "allow:allowed.test"},
        std::vector<std::string>{"--network", "deny"},
        std::vector<std::string>{"--config", landlock_alone}}) {
    std::vector<std::string> command = base;
    command.insert(command.end(), extra.begin(), extra.end());
    command.insert(command.end(), {"--", "true"});
    const RunResult confined = execute(command);
    ASSERT_TRUE(confined.exited_with(0)) << confined.describe();
    const auto facts = nlohmann::json::parse(confined.out);
    const auto layers = facts["layers"].get<std::vector<std::string>>();
    SCOPED_TRACE(facts["backend"].get<std::string>());
    EXPECT_EQ(layers, layer_names_of(facts["argv"].get<std::vector<std::string>>()));
    const bool allow_list = extra.front() == "--network" && extra.back() != "deny";
    EXPECT_EQ(std::count(layers.begin(), layers.end(), "netproxy"), allow_list ? 2 : 0);
    if (allow_list) {
      EXPECT_EQ(layers.front(), "netproxy");
    }
    if (extra.front() == "--config") {
      EXPECT_EQ(layers, std::vector<std::string>{"landlock-run"});
    }
    for (const auto& channel : facts["statusChannels"]) {
      EXPECT_NE(std::find(layers.begin(), layers.end(), channel["layer"]), layers.end());
    }
  }
}

// `run --json --learn` under `allow`, the test names resolved by `resolve`, running `script`.
RunResult run_learn(const TempDir& workspace, const std::string& allow,
                    const std::vector<std::string>& resolve, const std::string& script) {
  std::vector<std::string> argv = {DSH_SANDBOX_PATH, "run",         "--json",
                                   "--learn",        "--workspace", workspace.path(),
                                   "--network",      allow};
  for (const std::string& mapping : resolve)
    argv.insert(argv.end(), {"--network-resolve", mapping});
  argv.insert(argv.end(), {"--", "bash", "-c", script});
  return execute(argv);
}

// The record of a refused connection to `path`, or null.
nlohmann::json refusal(const nlohmann::json& result, const std::string& path) {
  for (const auto& denial : result["denials"]) {
    if (denial["op"] == "connect" && denial["rule"] == "network-not-allowed" &&
        denial["path"] == path) {
      return denial;
    }
  }
  return nullptr;
}

std::string curl_code(const std::string& url) {
  return "curl -s -o /dev/null -w '%{http_code}\\n' " + url + "; ";
}

// A listed name that resolves to loopback is refused: loopback is this host, which only an
// address entry reaches. The record names the address as its path and says in its detail which
// name resolved there, the range and the entry, which then works; learn, whose advice a harness
// may apply unread, does not propose a host-local address.
TEST_F(NetProxyTest, ANameResolvingToLoopbackNeedsTheAddressEntryLearnProposes) {
  TempDir workspace;
  const std::string url = "http://loop.test:" + port() + "/index.html";
  const RunResult refused =
      run_learn(workspace, "allow:loop.test", {"loop.test=127.0.0.1"}, curl_code(url));
  ASSERT_TRUE(refused.exited_with(0)) << refused.describe();
  const auto result = nlohmann::json::parse(refused.out);
  EXPECT_EQ(result["stdout"], "403\n");
  const nlohmann::json denial = refusal(result, "127.0.0.1:" + port());
  ASSERT_FALSE(denial.is_null()) << result["denials"].dump();
  EXPECT_EQ(denial["detail"],
            "loop.test resolves to 127.0.0.1, in 127.0.0.0/8 (loopback), which only an address "
            "entry reaches (not a name); allow it with --network allow:127.0.0.1");
  // Learn never proposes a host-local address on its own (the command chose where to connect);
  // it says so, and the refusal's detail above names the entry for a person who means it.
  EXPECT_EQ(refused.err.find("allow:loop.test,127.0.0.1"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("learn: none for 127.0.0.1:" + port() + ": learn never proposes"),
            std::string::npos)
      << refused.err;
  const RunResult allowed =
      run_learn(workspace, "allow:loop.test,127.0.0.1", {"loop.test=127.0.0.1"}, curl_code(url));
  ASSERT_TRUE(allowed.exited_with(0)) << allowed.describe();
  EXPECT_EQ(nlohmann::json::parse(allowed.out)["stdout"], "200\n") << allowed.out;
}

// An allowed loopback service, asked for by address with no proxy flag: the environment sends
// it through the proxy (no NO_PROXY exemption), which reaches the host's loopback; inside, the
// run's own loopback has nothing but the bridge.
TEST_F(NetProxyTest, AnAllowedLoopbackServiceIsReachedThroughTheProxy) {
  TempDir workspace;
  const RunResult run = run_learn(workspace, "allow:127.0.0.1", {},
                                  "printf '[%s][%s]\\n' \"${NO_PROXY-unset}\" "
                                  "\"${no_proxy-unset}\"; curl -sS http://127.0.0.1:" +
                                      port() + "/index.html");
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const auto result = nlohmann::json::parse(run.out);
  EXPECT_EQ(result["stdout"], "[][]\nhello from upstream\n") << run.out;
  EXPECT_EQ(result["exitCode"], 0) << run.out;
}

// A pasted URL is taken as its host and port (the scheme's port when none is written), with a
// note on stderr saying so.
TEST_F(NetProxyTest, AUrlEntryIsItsHostAndPortWithANote) {
  TempDir workspace;
  const RunResult run =
      run_learn(workspace, "allow:http://allowed.test:" + port() + "/some/path,127.0.0.1",
                {"allowed.test=127.0.0.1"},
                curl_code("http://allowed.test:" + port() + "/index.html") +
                    curl_code("http://allowed.test:" + std::to_string(upstream_port + 1) + "/"));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const auto result = nlohmann::json::parse(run.out);
  // The entry's port only: another port of the same name is refused.
  EXPECT_EQ(result["stdout"], "200\n403\n") << run.out;
  EXPECT_EQ(result["policy"]["networkAllow"],
            nlohmann::json::array({"allowed.test:" + port(), "127.0.0.1"}));
  EXPECT_NE(run.err.find("dsh-sandbox: note: network entry \"http://allowed.test:" + port() +
                         "/some/path\" is a URL; taken as allowed.test:" + port()),
            std::string::npos)
      << run.err;
}

// This machine's first non-loopback IPv4 address in a special range (private, CGNAT,
// documentation...), where a server can listen without a packet leaving the machine.
std::string local_special_address() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return "";
  std::string found;
  for (const ifaddrs* entry = list; entry != nullptr && found.empty(); entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != AF_INET) continue;
    const auto* in = reinterpret_cast<const sockaddr_in*>(entry->ifa_addr);
    const std::uint32_t a = ntohl(in->sin_addr.s_addr);
    const bool special = (a >> 24) == 10 || (a >> 20) == (172U << 4 | 1) ||
                         (a >> 16) == (192U << 8 | 168) || (a >> 22) == (100U << 2 | 1) ||
                         (a >> 8) == (192U << 16 | 2) || (a >> 8) == (198U << 16 | 51 << 8 | 100) ||
                         (a >> 8) == (203U << 16 | 113);
    if (!special || (a >> 24) == 127) continue;
    std::array<char, INET_ADDRSTRLEN> text{};
    ::inet_ntop(AF_INET, &in->sin_addr, text.data(), text.size());
    found = text.data();
  }
  ::freeifaddrs(list);
  return found;
}

// A company mirror on a private address, played by a server on this machine's own non-loopback
// address (no packet leaves the machine): the exactly listed name reaches it, a name a wildcard
// admits does not, and its record names the range and the entry.
TEST_F(NetProxyTest, AnExactNameReachesAPrivateMirrorAWildcardDoesNot) {
  const std::string address = local_special_address();
  if (address.empty()) DSH_SKIP_OR_FAIL("this host has no non-loopback address in a special range");
  TempDir dir;
  std::ofstream(dir / "index.html") << "hello from the mirror\n";
  const std::string port_file = dir / "port";
  Started server({"/usr/bin/python3", *upstream_dir / "server.py", dir.path(), port_file, address});
  const int mirror_port = dsh::testing::wait_for_port_file(port_file);
  ASSERT_NE(mirror_port, 0) << "the mirror did not start on " << address;
  const std::string mirror = ":" + std::to_string(mirror_port);
  TempDir workspace;
  const RunResult run = run_learn(workspace, "allow:mirror.corp.test,*.corp.test",
                                  {"mirror.corp.test=" + address, "pkg.corp.test=" + address},
                                  "curl -sS http://mirror.corp.test" + mirror + "/index.html; " +
                                      curl_code("http://pkg.corp.test" + mirror + "/index.html"));
  ::kill(server.pid(), SIGKILL);
  server.wait();
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const auto result = nlohmann::json::parse(run.out);
  EXPECT_EQ(result["stdout"], "hello from the mirror\n403\n") << run.out;
  const nlohmann::json denial = refusal(result, address + mirror);
  ASSERT_FALSE(denial.is_null()) << result["denials"].dump();
  const std::string detail = denial["detail"];
  EXPECT_NE(detail.find("pkg.corp.test resolves to " + address + ", in "), std::string::npos)
      << detail;
  EXPECT_NE(
      detail.find("which a wildcard entry never reaches; allow it with --network allow:" + address),
      std::string::npos)
      << detail;
  EXPECT_NE(run.err.find("learn: --network allow:mirror.corp.test,*.corp.test," + address),
            std::string::npos)
      << run.err;
}

// A tiny npm registry on loopback: the metadata document for `tiny` (its tarball URL built from
// the Host the client asked for, so npm fetches it by the same name through the proxy) and the
// tarball itself. It writes its port once it listens.
constexpr const char* kNpmRegistry = R"(
const http = require('http'), fs = require('fs'), crypto = require('crypto');
const [dir, portFile] = process.argv.slice(2);
const tgz = fs.readFileSync(dir + '/tiny-1.0.0.tgz');
const integrity = 'sha512-' + crypto.createHash('sha512').update(tgz).digest('base64');
const shasum = crypto.createHash('sha1').update(tgz).digest('hex');
const server = http.createServer((req, res) => {
  if (req.url === '/tiny') {
    const tarball = 'http://' + req.headers.host + '/tiny/-/tiny-1.0.0.tgz';
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({name: 'tiny', 'dist-tags': {latest: '1.0.0'}, versions: {'1.0.0':
      {name: 'tiny', version: '1.0.0', dist: {tarball, integrity, shasum}}}}));
  } else if (req.url === '/tiny/-/tiny-1.0.0.tgz') {
    res.setHeader('content-type', 'application/octet-stream');
    res.end(tgz);
  } else {
    res.statusCode = 404;
    res.end('{}');
  }
});
server.listen(0, '127.0.0.1', () => {
  fs.writeFileSync(portFile + '.tmp', String(server.address().port));
  fs.renameSync(portFile + '.tmp', portFile);
});
)";

constexpr const char* kTinyIndex = "module.exports = 'tiny from the local registry';\n";

// The local registry, serving a tarball packed here from a package.json and an index.js.
class NpmRegistry {
 public:
  NpmRegistry() {
    const std::string package = dir_ / "package";
    std::filesystem::create_directories(package);
    std::ofstream(package + "/package.json")
        << R"({"name":"tiny","version":"1.0.0","main":"index.js"})"
        << "\n";
    std::ofstream(package + "/index.js") << kTinyIndex;
    const RunResult packed =
        execute({"/bin/tar", "-czf", dir_ / "tiny-1.0.0.tgz", "-C", dir_.path(), "package"});
    EXPECT_TRUE(packed.exited_with(0)) << packed.describe();
    std::ofstream(dir_ / "registry.js") << kNpmRegistry;
    const std::string port_file = dir_ / "port";
    server_ = std::make_unique<Started>(
        std::vector<std::string>{"/usr/bin/node", dir_ / "registry.js", dir_.path(), port_file});
    port_ = dsh::testing::wait_for_port_file(port_file);
  }
  ~NpmRegistry() {
    ::kill(server_->pid(), SIGKILL);
    server_->wait();
  }
  NpmRegistry(const NpmRegistry&) = delete;
  NpmRegistry& operator=(const NpmRegistry&) = delete;

  int port() const { return port_; }

 private:
  TempDir dir_;
  std::unique_ptr<Started> server_;
  int port_ = 0;
};

// `npm install` of the workspace's one dependency from registry.test, through `run --json` under
// `allow`; npm's cache goes into the workspace (workspace-write leaves ~/.npm read-only), and
// audit, fund and the update check stay off so npm asks no other host.
RunResult npm_install(const TempDir& workspace, int port, const std::string& allow) {
  std::ofstream(workspace / "package.json")
      << R"({"name":"ws","version":"1.0.0","dependencies":{"tiny":"1.0.0"}})"
      << "\n";
  return execute({DSH_SANDBOX_PATH, "run", "--json", "--mode", "workspace-write", "--workspace",
                  workspace.path(), "--network", allow, "--network-resolve",
                  "registry.test=127.0.0.1", "--", "bash", "-c",
                  "cd \"$1\" && npm_config_cache=$PWD/.npm-cache npm_config_audit=false "
                  "npm_config_fund=false npm_config_update_notifier=false "
                  "npm_config_fetch_retries=0 npm install --registry http://registry.test:" +
                      std::to_string(port) + "/",
                  "bash", workspace.path()});
}

// npm and node, which the local registry and the install need.
bool has_npm() {
  return ::access("/usr/bin/npm", X_OK) == 0 && ::access("/usr/bin/node", X_OK) == 0;
}

// The README's example: with the registry's name allowed (and loopback, the address the test
// name resolves to, which the proxy refuses unless listed), npm installs the package; the file
// is read from outside.
TEST_F(NetProxyTest, NpmInstallsFromTheAllowedRegistry) {
  if (!has_npm()) DSH_SKIP_OR_FAIL("npm or node is not installed");
  NpmRegistry registry;
  ASSERT_NE(registry.port(), 0) << "the local npm registry did not start";
  TempDir workspace;
  const RunResult run = npm_install(workspace, registry.port(), "allow:registry.test,127.0.0.1");
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const auto result = nlohmann::json::parse(run.out);
  EXPECT_EQ(result["exitCode"], 0) << run.out;
  EXPECT_EQ(result["network"], "allow-list");
  // npm asked no other host (the real registry, an audit or update check would be refused).
  for (const auto& denial : result["denials"]) {
    EXPECT_NE(denial["rule"], "network-not-allowed") << result["denials"].dump();
  }
  std::ifstream file(workspace / "node_modules/tiny/index.js");
  const std::string installed{std::istreambuf_iterator<char>(file),
                              std::istreambuf_iterator<char>()};
  EXPECT_EQ(installed, kTinyIndex) << run.out;
}

// The registry's name not allowed: npm fails, the JSON result names the refused host, and
// nothing is installed.
TEST_F(NetProxyTest, NpmInstallFailsWhenTheRegistryIsNotAllowed) {
  if (!has_npm()) DSH_SKIP_OR_FAIL("npm or node is not installed");
  NpmRegistry registry;
  ASSERT_NE(registry.port(), 0) << "the local npm registry did not start";
  TempDir workspace;
  const RunResult run = npm_install(workspace, registry.port(), "allow:other.test,127.0.0.1");
  const auto result = nlohmann::json::parse(run.out);
  EXPECT_NE(result["exitCode"], 0) << run.out;
  bool found = false;
  for (const auto& denial : result["denials"]) {
    found = found || (denial["op"] == "connect" && denial["rule"] == "network-not-allowed" &&
                      denial["path"] == "registry.test:" + std::to_string(registry.port()));
  }
  EXPECT_TRUE(found) << result["denials"].dump();
  EXPECT_FALSE(std::filesystem::exists(workspace / "node_modules/tiny"));
}

// An origin that records every request head it receives (appended to a file before it answers
// 200), so a test sees from outside exactly what the proxy forwarded.
constexpr const char* kRecorder = R"(
import os, socketserver, sys
class Record(socketserver.StreamRequestHandler):
    def handle(self):
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            byte = self.rfile.read(1)
            if not byte: break
            head += byte
        with open(sys.argv[2], "ab") as f: f.write(head)
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Record)
with open(sys.argv[1] + ".tmp", "w") as f: f.write(str(server.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
server.serve_forever()
)";

// A request head the origin could read with another Host than the one the proxy checked (a
// bare LF or CR before a Host line, a space before a header's colon, a folded line) is refused
// with 400 and never reaches the origin; a well-formed one does, with the checked Host only.
TEST_F(NetProxyTest, SmuggledHostLinesNeverReachTheOrigin) {
  TempDir recorder_dir;
  std::ofstream(recorder_dir / "recorder.py") << kRecorder;
  const std::string port_file = recorder_dir / "port";
  const std::string log = recorder_dir / "heads";
  Started recorder({"/usr/bin/python3", recorder_dir / "recorder.py", port_file, log});
  const int recorder_port = dsh::testing::wait_for_port_file(port_file);
  ASSERT_NE(recorder_port, 0) << "the recording origin did not start";
  const std::string target = "GET http://allowed.test:" + std::to_string(recorder_port) + "/";
  std::string script = "import socket\n";
  for (const std::string& rest : {" HTTP/1.1\\r\\nX-A: 1\\nHost: evil.test\\r\\n\\r\\n",
                                  " HTTP/1.1\\r\\nX-A: 1\\rHost: evil.test\\r\\n\\r\\n",
                                  " HTTP/1.1\\r\\nHost : evil.test\\r\\n\\r\\n",
                                  " HTTP/1.1\\r\\nX-A: 1\\r\\n Host: evil.test\\r\\n\\r\\n",
                                  " HTTP/1.1\\r\\nX-A: 1\\r\\n\\r\\n"}) {
    script +=
        "s = socket.create_connection(('127.0.0.1', 3128))\n"
        "s.sendall(b'" +
        target + rest +
        "')\n"
        "print(s.recv(200).split(b'\\r\\n')[0].decode())\n";
  }
  const Outcome outcome = run_python(script);
  EXPECT_TRUE(outcome.run.exited_with(0)) << outcome.run.describe();
  EXPECT_EQ(outcome.run.out,
            "HTTP/1.1 400 Bad Request\nHTTP/1.1 400 Bad Request\nHTTP/1.1 400 Bad Request\n"
            "HTTP/1.1 400 Bad Request\nHTTP/1.1 200 OK\n");
  // The origin answered only after recording, and the run is over: the file is complete.
  EXPECT_EQ(dsh::testing::read_file(log),
            "GET / HTTP/1.1\r\nHost: allowed.test:" + std::to_string(recorder_port) +
                "\r\nX-A: 1\r\nConnection: close\r\n\r\n");
}

}  // namespace
