// SPDX-License-Identifier: Apache-2.0
// --network deny (issue 4 point 6): a TCP connect to a listener the test opened on 127.0.0.1
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
    if (const std::string missing = MissingHostFeature(); !missing.empty()) {
      DSH_SKIP_OR_FAIL(missing);
    }
    provider_ = MakeProvider(GetParam());
    probe_ = CopyOfProbe(workspace_);
  }
  std::unique_ptr<sandbox::LocalSandboxProvider> provider_;
  WorkDir workspace_;
  std::string probe_;
};

TEST_P(Network, DenyKeepsATcpConnectFromReachingALoopbackListener) {
  for (const ConfinedSandboxMode mode :
       {ConfinedSandboxMode::kReadOnly, ConfinedSandboxMode::kWorkspaceWrite}) {
    llrt::InetListener listener(AF_INET, SOCK_STREAM);
    const std::vector<std::string> connect = {probe_, "tcp4", listener.port_text()};

    const ConfinedArgv allowed =
        Confine(*provider_, connect, mode, workspace_.path(), NetworkPolicy::kInherit);
    EXPECT_EQ(allowed.backend, ExpectedBackendName(GetParam()));
    EXPECT_EQ(allowed.network, NetworkPolicy::kInherit);
    const RunResult control = Spawn(allowed);
    EXPECT_TRUE(listener.Received()) << "control did not connect: " << control.Describe();

    const ConfinedArgv denied =
        Confine(*provider_, connect, mode, workspace_.path(), NetworkPolicy::kDeny);
    EXPECT_EQ(denied.backend, ExpectedBackendName(GetParam()));
    EXPECT_EQ(denied.network, NetworkPolicy::kDeny);
    const RunResult result = Spawn(denied);
    EXPECT_FALSE(listener.Received()) << "connected despite --network deny: " << result.Describe();
    EXPECT_FALSE(result.ExitedWith(0)) << result.Describe();
  }
}

TEST_P(Network, CliDenyKeepsATcpConnectFromReachingALoopbackListener) {
  WorkDir config_dir;
  WorkDir workspace;  // not the working directory: for nobody that is /, beneath which is all
  for (const char* network : {"inherit", "deny"}) {
    llrt::InetListener listener(AF_INET, SOCK_STREAM);
    std::vector<std::string> args = {"confine", "--workspace", workspace.path(), "--network",
                                     network};
    if (GetParam() == Backend::kLandlock) {
      const std::string config = config_dir / "config.json";
      llrt::WriteFile(config, R"({"bwrapPath": ")" + MissingBwrapPath() + R"("})");
      args.insert(args.end(), {"--config", config});
    }
    args.insert(args.end(), {"--", probe_, "tcp4", listener.port_text()});
    const RunResult confine = Cli(args);
    ASSERT_TRUE(confine.ExitedWith(0)) << confine.Describe();
    const nlohmann::json confined = ParseJson(confine.out);
    EXPECT_EQ(confined["backend"], ExpectedBackendName(GetParam()));
    EXPECT_EQ(confined["network"], network);
    std::vector<std::string> argv;
    for (const nlohmann::json& word : confined["argv"]) argv.push_back(word.get<std::string>());
    const RunResult result = llrt::Execute(argv);
    const bool deny = std::string(network) == "deny";
    EXPECT_EQ(listener.Received(), !deny) << network << ": " << result.Describe();
    EXPECT_EQ(result.ExitedWith(0), !deny) << network << ": " << result.Describe();
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Network,
                         ::testing::Values(Backend::kNatural, Backend::kLandlock), ParamLabel);

}  // namespace
}  // namespace dsh::local_it
