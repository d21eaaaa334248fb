// SPDX-License-Identifier: Apache-2.0
// `dsh-sandbox confine` refuses bad input with exit 125 and exactly one "dsh-sandbox: " line,
// prints nothing a caller could spawn, and runs nothing: each call carries a command that would
// leave a marker, and the marker stays absent.
#include "local_harness.h"
#include "must_run.h"

namespace dsh::local_it {
namespace {

class CliInput : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string missing = MissingHostFeature(); !missing.empty()) {
      DSH_SKIP_OR_FAIL(missing);
    }
    marker_ = dir_ / Unique("marker");
    workspace_ = dir_.Mkdir("workspace");
  }
  std::vector<std::string> Marking() const {
    return {"--", "/bin/sh", "-c", "printf ran > " + marker_};
  }
  // confine OPTIONS -- (marking command): refused in one line, nothing ran.
  void ExpectRefused(std::vector<std::string> options, const std::string& mentions = "") {
    std::vector<std::string> args = {"confine"};
    args.insert(args.end(), options.begin(), options.end());
    const std::vector<std::string> marking = Marking();
    args.insert(args.end(), marking.begin(), marking.end());
    ExpectRefusedCall(args, mentions);
  }
  void ExpectRefusedCall(const std::vector<std::string>& args, const std::string& mentions) {
    SCOPED_TRACE(::testing::PrintToString(args));
    const RunResult result = Cli(args);
    ExpectOneCliErrorLine(result);
    if (!mentions.empty()) {
      EXPECT_NE(result.err.find(mentions), std::string::npos) << result.Describe();
    }
    EXPECT_FALSE(llrt::Exists(marker_));
  }
  std::string Config(const std::string& text) {
    const std::string path = dir_ / (Unique("config") + ".json");
    llrt::WriteFile(path, text);
    return path;
  }
  WorkDir dir_;
  std::string marker_;
  std::string workspace_;
};

TEST_F(CliInput, ControlAValidCallSucceeds) {
  const RunResult result = Cli({"confine", "--mode", "workspace-write", "--workspace", workspace_,
                                "--network", "deny", "--", "true"});
  EXPECT_TRUE(result.ExitedWith(0)) << result.Describe();
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(ParseJson(result.out)["network"], "deny");
}

TEST_F(CliInput, RelativeWorkspaceIsRefused) {
  ExpectRefused({"--mode", "workspace-write", "--workspace", "relative/dir"}, "relative/dir");
  ExpectRefused({"--mode", "read-only", "--workspace", "."});
}

TEST_F(CliInput, MissingWorkspaceDirectoryIsRefused) {
  const std::string missing = dir_ / "no-such-dir";
  ExpectRefused({"--mode", "workspace-write", "--workspace", missing}, missing);
  // A file is not a directory either.
  const std::string file = dir_ / "a-file";
  llrt::WriteFile(file, "");
  ExpectRefused({"--mode", "workspace-write", "--workspace", file}, file);
}

TEST_F(CliInput, UnknownModeIsRefused) {
  ExpectRefused({"--mode", "write-everything", "--workspace", workspace_}, "write-everything");
  ExpectRefused({"--mode", "Read-Only", "--workspace", workspace_});  // wire names are exact
}

TEST_F(CliInput, DangerFullAccessHasNothingToConfine) {
  ExpectRefused({"--mode", "danger-full-access", "--workspace", workspace_}, "danger-full-access");
  // Nor through the config file's default mode.
  ExpectRefused(
      {"--config", Config(R"({"mode": "danger-full-access"})"), "--workspace", workspace_},
      "danger-full-access");
}

TEST_F(CliInput, UnknownNetworkIsRefused) {
  ExpectRefused({"--network", "offline", "--workspace", workspace_}, "offline");
}

TEST_F(CliInput, MalformedOrUnknownKeyConfigIsRefused) {
  ExpectRefused({"--config", Config("{\"mode\": "), "--workspace", workspace_});
  ExpectRefused({"--config", Config("[]"), "--workspace", workspace_});
  ExpectRefused(
      {"--config", Config(R"({"bwrap_path": "/usr/bin/bwrap"})"), "--workspace", workspace_},
      "bwrap_path");
  ExpectRefused({"--config", Config(R"({"probeTimeoutMs": 0})"), "--workspace", workspace_},
                "probeTimeoutMs");
  ExpectRefused({"--config", Config(R"({"mode": "bogus"})"), "--workspace", workspace_});
  ExpectRefused({"--config", Config(R"({"bwrapPath": "bin/bwrap"})"), "--workspace", workspace_},
                "bwrapPath");
  ExpectRefused({"--config", dir_ / "no-such-config.json", "--workspace", workspace_});
}

TEST_F(CliInput, MissingArgvIsRefused) {
  ExpectRefusedCall({"confine", "--mode", "read-only", "--workspace", workspace_}, "");
  ExpectRefusedCall({"confine", "--mode", "read-only", "--workspace", workspace_, "--"}, "");
  ExpectRefusedCall({"confine"}, "");
}

}  // namespace
}  // namespace dsh::local_it
