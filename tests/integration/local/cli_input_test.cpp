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
    if (const std::string missing = missing_host_feature(); !missing.empty()) {
      DSH_SKIP_OR_FAIL(missing);
    }
    marker_ = dir_ / unique("marker");
    workspace_ = dir_.mkdir("workspace");
  }
  std::vector<std::string> marking_command() const {
    return {"--", "/bin/sh", "-c", "printf ran > " + marker_};
  }
  // confine OPTIONS -- (marking command): refused in one line, nothing ran.
  void expect_refused(std::vector<std::string> options, const std::string& mentions = "") {
    std::vector<std::string> args = {"confine"};
    args.insert(args.end(), options.begin(), options.end());
    const std::vector<std::string> marking = marking_command();
    args.insert(args.end(), marking.begin(), marking.end());
    expect_refused_call(args, mentions);
  }
  void expect_refused_call(const std::vector<std::string>& args, const std::string& mentions) {
    SCOPED_TRACE(::testing::PrintToString(args));
    const RunResult result = run_cli(args);
    expect_one_cli_error_line(result);
    if (!mentions.empty()) {
      EXPECT_NE(result.err.find(mentions), std::string::npos) << result.describe();
    }
    EXPECT_FALSE(llrt::exists(marker_));
  }
  std::string write_config(const std::string& text) {
    const std::string path = dir_ / (unique("config") + ".json");
    llrt::write_file(path, text);
    return path;
  }
  TempDir dir_;
  std::string marker_;
  std::string workspace_;
};

TEST_F(CliInput, ControlAValidCallSucceeds) {
  const RunResult result = run_cli({"confine", "--mode", "workspace-write", "--workspace",
                                    workspace_, "--network", "deny", "--", "true"});
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(parse_json(result.out)["network"], "deny");
}

TEST_F(CliInput, RelativeWorkspaceIsRefused) {
  expect_refused({"--mode", "workspace-write", "--workspace", "relative/dir"}, "relative/dir");
  expect_refused({"--mode", "read-only", "--workspace", "."});
}

TEST_F(CliInput, MissingWorkspaceDirectoryIsRefused) {
  const std::string missing = dir_ / "no-such-dir";
  expect_refused({"--mode", "workspace-write", "--workspace", missing}, missing);
  // A file is not a directory either.
  const std::string file = dir_ / "a-file";
  llrt::write_file(file, "");
  expect_refused({"--mode", "workspace-write", "--workspace", file}, file);
}

TEST_F(CliInput, UnknownModeIsRefused) {
  expect_refused({"--mode", "write-everything", "--workspace", workspace_}, "write-everything");
  expect_refused({"--mode", "Read-Only", "--workspace", workspace_});  // wire names are exact
}

TEST_F(CliInput, DangerFullAccessHasNothingToConfine) {
  expect_refused({"--mode", "danger-full-access", "--workspace", workspace_}, "danger-full-access");
  // Nor through the config file's default mode.
  expect_refused(
      {"--config", write_config(R"({"mode": "danger-full-access"})"), "--workspace", workspace_},
      "danger-full-access");
}

TEST_F(CliInput, UnknownNetworkIsRefused) {
  expect_refused({"--network", "offline", "--workspace", workspace_}, "offline");
}

TEST_F(CliInput, MalformedOrUnknownKeyConfigIsRefused) {
  expect_refused({"--config", write_config("{\"mode\": "), "--workspace", workspace_});
  expect_refused({"--config", write_config("[]"), "--workspace", workspace_});
  expect_refused(
      {"--config", write_config(R"({"bwrap_path": "/usr/bin/bwrap"})"), "--workspace", workspace_},
      "bwrap_path");
  expect_refused({"--config", write_config(R"({"probeTimeoutMs": 0})"), "--workspace", workspace_},
                 "probeTimeoutMs");
  expect_refused({"--config", write_config(R"({"mode": "bogus"})"), "--workspace", workspace_});
  expect_refused(
      {"--config", write_config(R"({"bwrapPath": "bin/bwrap"})"), "--workspace", workspace_},
      "bwrapPath");
  expect_refused({"--config", dir_ / "no-such-config.json", "--workspace", workspace_});
}

TEST_F(CliInput, MissingArgvIsRefused) {
  expect_refused_call({"confine", "--mode", "read-only", "--workspace", workspace_}, "");
  expect_refused_call({"confine", "--mode", "read-only", "--workspace", workspace_, "--"}, "");
  expect_refused_call({"confine"}, "");
}

}  // namespace
}  // namespace dsh::local_it
