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

INSTANTIATE_TEST_SUITE_P(Backends, Network,
                         ::testing::Values(Backend::kNatural, Backend::kLandlock), param_label);

}  // namespace
}  // namespace dsh::local_it
