// SPDX-License-Identifier: Apache-2.0
// --network deny: a TCP connect to a listener the test opened on 127.0.0.1
// never arrives, while the same command without deny connects (else the test proves nothing).
// The verdict is the listener's queue, never the command's word. Loopback only.
#include <sys/socket.h>

#include <algorithm>

#include "local_harness.h"
#include "must_run.h"

namespace dsh::local_it {
namespace {

class Network : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (const std::string missing = missing_host_feature(); !missing.empty()) {
      DSH_SKIP_OR_FAIL(missing);
    }
    provider_ = make_provider(GetParam());
    probe_ = copy_of_probe(workspace_);
  }
  std::unique_ptr<sandbox::LocalSandboxProvider> provider_;
  TempDir workspace_;
  std::string probe_;
};

TEST_P(Network, DenyKeepsATcpConnectFromReachingALoopbackListener) {
  for (const ConfinedSandboxMode mode :
       {ConfinedSandboxMode::kReadOnly, ConfinedSandboxMode::kWorkspaceWrite}) {
    llrt::InetListener listener(AF_INET, SOCK_STREAM);
    const std::vector<std::string> connect = {probe_, "tcp4", listener.port_text()};

    const ConfinedArgv allowed =
        confine(*provider_, connect, mode, workspace_.path(), NetworkPolicy::kInherit);
    EXPECT_EQ(allowed.backend, expected_backend_name(GetParam()));
    EXPECT_EQ(allowed.network, NetworkPolicy::kInherit);
    const RunResult control = spawn(allowed);
    EXPECT_TRUE(listener.received()) << "control did not connect: " << control.describe();

    const ConfinedArgv denied =
        confine(*provider_, connect, mode, workspace_.path(), NetworkPolicy::kDeny);
    EXPECT_EQ(denied.backend, expected_backend_name(GetParam()));
    EXPECT_EQ(denied.network, NetworkPolicy::kDeny);
    const RunResult result = spawn(denied);
    EXPECT_FALSE(listener.received()) << "connected despite --network deny: " << result.describe();
    EXPECT_FALSE(result.exited_with(0)) << result.describe();
  }
}

TEST_P(Network, CliDenyKeepsATcpConnectFromReachingALoopbackListener) {
  TempDir config_dir;
  TempDir workspace;  // not the working directory: for nobody that is /, beneath which is all
  for (const char* network : {"inherit", "deny"}) {
    llrt::InetListener listener(AF_INET, SOCK_STREAM);
    std::vector<std::string> args = {"confine", "--workspace", workspace.path(), "--network",
                                     network};
    if (GetParam() == Backend::kLandlock) {
      const std::string config = config_dir / "config.json";
      llrt::write_file(config, R"({"bwrapPath": ")" + missing_bwrap_path() + R"("})");
      args.insert(args.end(), {"--config", config});
    }
    args.insert(args.end(), {"--", probe_, "tcp4", listener.port_text()});
    const RunResult confine = run_cli(args);
    ASSERT_TRUE(confine.exited_with(0)) << confine.describe();
    const nlohmann::json confined = parse_json(confine.out);
    EXPECT_EQ(confined["backend"], expected_backend_name(GetParam()));
    EXPECT_EQ(confined["network"], network);
    std::vector<std::string> argv;
    for (const nlohmann::json& word : confined["argv"]) argv.push_back(word.get<std::string>());
    const RunResult result = llrt::execute(argv);
    const bool deny = std::string(network) == "deny";
    EXPECT_EQ(listener.received(), !deny) << network << ": " << result.describe();
    EXPECT_EQ(result.exited_with(0), !deny) << network << ": " << result.describe();
  }
}

// The CLI arguments that pick this backend (a config with a missing bwrap for Landlock alone).
std::vector<std::string> backend_args(Backend backend, const TempDir& config_dir) {
  if (backend != Backend::kLandlock) return {};
  const std::string config = config_dir / "config.json";
  llrt::write_file(config, R"({"bwrapPath": ")" + missing_bwrap_path() + R"("})");
  return {"--config", config};
}

// No --network: a confined run has no network (the product's default, not the reference's).
TEST_P(Network, ConfinedModesHaveNoNetworkByDefault) {
  TempDir config_dir;
  TempDir workspace;
  llrt::InetListener listener(AF_INET, SOCK_STREAM);
  std::vector<std::string> args = {"confine", "--workspace", workspace.path()};
  for (const std::string& arg : backend_args(GetParam(), config_dir)) args.push_back(arg);
  args.insert(args.end(), {"--", probe_, "tcp4", listener.port_text()});
  const RunResult confine = run_cli(args);
  ASSERT_TRUE(confine.exited_with(0)) << confine.describe();
  const nlohmann::json confined = parse_json(confine.out);
  EXPECT_EQ(confined["network"], "deny");
  const RunResult result = llrt::execute(confined["argv"].get<std::vector<std::string>>());
  EXPECT_FALSE(listener.received()) << "connected by default: " << result.describe();
  EXPECT_FALSE(result.exited_with(0)) << result.describe();
}

// What a run with the network off tries from inside: list the interfaces (getifaddrs and
// if_nameindex ask a NETLINK_ROUTE socket), add an address and a route to lo through that socket,
// and open a TCP socket.
constexpr const char* kInterfacesScript = R"(
import socket, subprocess
try:
    print('names', ','.join(sorted(n for _, n in socket.if_nameindex())))
except OSError as e:
    print('names refused', e.errno)
for what in (['addr', 'add', '10.200.0.1/32', 'dev', 'lo'],
             ['route', 'add', '10.201.0.0/16', 'dev', 'lo']):
    r = subprocess.run(['/usr/sbin/ip'] + what, capture_output=True)
    print(what[0], 'added' if r.returncode == 0 else 'refused')
try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    print('tcp socket')
except OSError as e:
    print('tcp refused', e.errno)
)";

std::string host_addresses_and_routes() {
  return llrt::execute({"/usr/sbin/ip", "-o", "addr"}).out +
         llrt::execute({"/usr/sbin/ip", "route", "show", "table", "all"}).out;
}

// With the network off, bwrap's private network namespace lets a route socket list its one
// interface, lo (tools built on getifaddrs keep working), and nothing it asks for changes a
// thing: the namespace is the run's own and the command holds no CAP_NET_ADMIN. Landlock alone
// runs in the host's namespace, where the route socket stays refused (it would list the host's
// addresses). Either way the TCP socket is refused with a network denial record, and the host's
// addresses and routes are unchanged, read from outside.
TEST_P(Network, NetworkOffListsOnlyLoInsideBwrapAndNothingOnTheHostsNamespace) {
  if (::access("/usr/sbin/ip", X_OK) != 0 || ::access("/usr/bin/python3", X_OK) != 0) {
    DSH_SKIP_OR_FAIL("ip or python3 is not installed");
  }
  TempDir config_dir;
  TempDir workspace;
  const std::string before = host_addresses_and_routes();
  std::vector<std::string> args = {"run", "--json", "--workspace", workspace.path()};
  for (const std::string& arg : backend_args(GetParam(), config_dir)) args.push_back(arg);
  args.insert(args.end(), {"--", "/usr/bin/python3", "-c", kInterfacesScript});
  const RunResult run = run_cli(args);
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const nlohmann::json result = parse_json(run.out);
  const bool bwrap = GetParam() == Backend::kNatural;
  // 97, EAFNOSUPPORT: the filter's answer, which never reads as a file denial.
  EXPECT_EQ(result["stdout"], std::string(bwrap ? "names lo\n" : "names refused 97\n") +
                                  "addr refused\nroute refused\ntcp refused 97\n")
      << run.out;
  EXPECT_EQ(host_addresses_and_routes(), before);
  EXPECT_EQ(host_addresses_and_routes().find("10.200.0.1"), std::string::npos);
  bool recorded = false;
  for (const nlohmann::json& denial : result["denials"]) {
    recorded = recorded || (denial["op"] == "socket" && denial["rule"] == "network-denied");
  }
  EXPECT_TRUE(recorded) << result["denials"].dump();
}

// node's os.networkInterfaces() (libuv, getifaddrs) with the network off: lo under bwrap; an
// error in the host's namespace, where the route socket is refused.
TEST_P(Network, NodeListsItsInterfacesWithTheNetworkOffOnlyUnderBwrap) {
  if (::access("/usr/bin/node", X_OK) != 0) DSH_SKIP_OR_FAIL("node is not installed");
  TempDir config_dir;
  TempDir workspace;
  std::vector<std::string> args = {"run", "--workspace", workspace.path()};
  for (const std::string& arg : backend_args(GetParam(), config_dir)) args.push_back(arg);
  args.insert(args.end(),
              {"--", "/usr/bin/node", "-e",
               "console.log(Object.keys(require('os').networkInterfaces()).join(','))"});
  const RunResult run = run_cli(args);
  if (GetParam() == Backend::kNatural) {
    EXPECT_TRUE(run.exited_with(0)) << run.describe();
    EXPECT_EQ(run.out, "lo\n") << run.describe();
  } else {
    EXPECT_FALSE(run.exited_with(0)) << run.describe();
    EXPECT_EQ(run.out, "") << run.describe();
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Network,
                         ::testing::Values(Backend::kNatural, Backend::kLandlock), param_label);

}  // namespace
}  // namespace dsh::local_it
