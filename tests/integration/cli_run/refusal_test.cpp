// SPDX-License-Identifier: Apache-2.0
// A call refused for the caller's own choice says so, names the fix and is no runner failure; a
// read-only call adds no writable root, so it runs from / and from an ancestor of the install;
// a flag the mode cannot apply is an error; the command's words after `--` arrive unchanged
// whatever option precedes them; an application's own "Permission denied" is no denial. The real
// CLI on the real kernel, as root and as nobody, judged from outside.
#include <unistd.h>

#include <filesystem>
#include <optional>

#include "cli_run_harness.h"
#include "must_run.h"
#include "paths.h"

namespace dsh::cli_run_it {
namespace {

using std::string;
using std::vector;

// The directory holding the build's bin/: an ancestor of the running CLI and its launcher.
string install_ancestor() {
  return std::filesystem::path(dsh_sandbox()).parent_path().parent_path().string();
}

class Refusal : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!host_problem().empty()) DSH_SKIP_OR_FAIL(host_problem());
    // Readable by the nobody leg; a private per-user directory for each test (the record of
    // writable workspaces, the verdict cache); root's is always /run/dsh-sandbox.
    ASSERT_EQ(::chmod(dir_.path().c_str(), 0755), 0);
    if (!is_root()) xdg_.emplace("XDG_RUNTIME_DIR", dir_.mkdir("xdg", 0700).c_str());
  }

  static string record_text() {
    const string path =
        is_root() ? string("/run/dsh-sandbox/workspaces.json")
                  : string(std::getenv("XDG_RUNTIME_DIR")) + "/dsh-sandbox/workspaces.json";
    return exists(path) ? read_file(path) : "";
  }

  // Exit 125, one "dsh-sandbox: " line on stderr naming `needle`, and none of the words of a
  // host without a backend or of a runner failure.
  static void expect_caller_refusal(const CliResult& result, const string& needle) {
    EXPECT_TRUE(result.exited_with(125)) << result.describe();
    ASSERT_EQ(split_lines(result.err).size(), 1U) << result.describe();
    EXPECT_EQ(result.err.rfind("dsh-sandbox: ", 0), 0U) << result.describe();
    EXPECT_NE(result.err.find(needle), string::npos) << result.describe();
    EXPECT_EQ(result.err.find("Runner failure"), string::npos) << result.describe();
    EXPECT_EQ(result.err.find("no sandbox backend is usable"), string::npos) << result.describe();
  }

  TempDir dir_;
  const string ws_ = dir_.mkdir("ws", 0755);
  std::optional<dsh::testing::ScopedEnv> xdg_;
};

TEST_F(Refusal, ReadOnlyRunsFromTheRootDirectory) {
  const dsh::testing::CwdGuard cwd("/");
  const CliResult result = cli({"run", "--mode", "read-only", "--json", "--", "/bin/true"});
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  const nlohmann::json object = parse_json(result.out);
  EXPECT_EQ(object["workspaceRoot"], "/") << result.out;
  EXPECT_EQ(object["backend"], backend_name(Backend::kNatural)) << result.out;
  // And it stays read-only: a write beside the temporary directory is refused.
  const string target = dir_ / "from-root";
  const CliResult write = cli({"run", "--", "bash", "-c", "echo x > " + target});
  EXPECT_TRUE(write.exited_with(1)) << write.describe();
  EXPECT_FALSE(exists(target));
}

TEST_F(Refusal, ReadOnlyRunsFromAnAncestorOfTheInstall) {
  const string ancestor = install_ancestor();
  for (const vector<string>& where :
       {vector<string>{"--workspace", ancestor},
        vector<string>{"--workspace", ancestor, "--config", dir_ / "landlock.json"}}) {
    write_file(dir_ / "landlock.json", R"({"bwrapPath":"/nonexistent/dsh-refusal/bwrap"})");
    vector<string> args = {"run", "--mode", "read-only", "--json"};
    args.insert(args.end(), where.begin(), where.end());
    args.insert(args.end(), {"--", "/bin/true"});
    const CliResult result = cli(args);
    EXPECT_TRUE(result.exited_with(0)) << result.describe();
    const Backend backend = where.size() > 2 ? Backend::kLandlock : Backend::kNatural;
    EXPECT_EQ(parse_json(result.out)["backend"], backend_name(backend)) << result.out;
  }
}

TEST_F(Refusal, WorkspaceContainingTheCliIsTheCallersChoiceNotARunnerFailure) {
  const string ancestor = install_ancestor();
  const string marker = dir_ / "ran";
  const vector<string> args = {"run",         "--mode", "workspace-write",
                               "--workspace", ancestor, "--",
                               "bash",        "-c",     "echo ran > " + marker};
  const CliResult plain = cli(args);
  expect_caller_refusal(plain, "contains the running dsh-sandbox");
  EXPECT_NE(plain.err.find("--mode read-only"), string::npos) << plain.describe();
  vector<string> json_args = args;
  json_args.insert(json_args.begin() + 1, "--json");
  const CliResult json = cli(json_args);
  expect_caller_refusal(json, "contains the running dsh-sandbox");
  const nlohmann::json object = parse_json(json.out);
  EXPECT_EQ(object["runnerFailed"], false) << json.out;
  EXPECT_EQ(object["exitCode"], nullptr) << json.out;
  EXPECT_EQ(object["refusal"]["code"], "SANDBOX_INVALID_INPUT") << json.out;
  EXPECT_FALSE(exists(marker));
  // Refused before the record: no later call distrusts the install because of it.
  EXPECT_EQ(record_text().find("\"" + ancestor + "\""), string::npos) << record_text();
}

TEST_F(Refusal, ARefusalBeforeAnythingRanIsNoRunnerFailure) {
  // An operator's runner without hardening cannot deny the network: refused before it starts.
  const string config = dir_ / "runner.json";
  write_file(config, R"({"runnerCommand":["/usr/bin/env"],"runnerFailureSignatures":["env: "]})");
  const vector<string> args = {"run",  "--json",      "--config", config, "--network",
                               "deny", "--workspace", ws_,        "--",   "/bin/true"};
  const CliResult result = cli(args);
  EXPECT_TRUE(result.exited_with(125)) << result.describe();
  EXPECT_EQ(result.err.find("Runner failure"), string::npos) << result.describe();
  const nlohmann::json object = parse_json(result.out);
  EXPECT_EQ(object["runnerFailed"], false) << result.out;
  EXPECT_EQ(object["refusal"]["code"], "SANDBOX_UNAVAILABLE") << result.out;
  EXPECT_NE(object["refusal"]["message"].get<string>().find("network"), string::npos) << result.out;
}

TEST_F(Refusal, PathFlagsTheModeCannotApplyAreErrors) {
  const string marker = dir_ / "ran";
  const string touch = "echo ran > " + marker;
  struct Case {
    vector<string> flags;
    string needle;
  };
  const vector<Case> cases = {
      {{"--allow-write", dir_.mkdir("extra")}, "--allow-write"},
      {{"--mode", "read-only", "--allow-cache", "npm"}, "--allow-cache"},
      {{"--mode", "danger-full-access", "--deny-read", ws_}, "danger-full-access"},
      {{"--mode", "danger-full-access", "--allow-write", ws_}, "danger-full-access"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.flags.front() + " " + c.flags[1]);
    vector<string> args = {"run", "--workspace", ws_};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    args.insert(args.end(), {"--", "bash", "-c", touch});
    const CliResult result = cli(args);
    expect_caller_refusal(result, c.needle);
    EXPECT_NE(result.err.find("workspace-write"), string::npos) << result.describe();
    EXPECT_FALSE(exists(marker));
  }
}

// Each option right before `--`, the command's own -c and words that spell our options after
// it: the command gets them all, in order, and none of them changes the call.
TEST_F(Refusal, TheCommandAfterTheSeparatorArrivesIntactWhateverPrecedesIt) {
  const string secret = dir_.mkdir("secret");
  const string config = dir_ / "empty.json";
  write_file(config, "{}");
  const vector<vector<string>> options = {
      {"--mode", "read-only"},
      {"--workspace", ws_},
      {"--network", "inherit"},
      {"--config", config},
      {"--mode", "workspace-write", "--allow-write", dir_.mkdir("extra")},
      {"--mode", "workspace-write", "--deny-write", dir_.mkdir("ws/kept")},
      {"--deny-read", secret},
      {"--deny-read", secret, "--deny-read", dir_.mkdir("secret2")},
      {"--timeout", "60"},
      {"--escalate", "never"},
      {"--session", dir_ / "session.jsonl"},
      {"--workdir", ws_},
      {"--stdin", "close"},
      {"--max-processes", "512"},
      {"--max-memory", "1G"},
      {"--env", "PATH"},
      {"--unset-env", "DSH_REFUSAL_UNSET"},
      {"--env", "PATH", "--unset-env", "DSH_REFUSAL_UNSET"},
  };
  const vector<string> command = {"bash", "-c",     "printf '%s|' \"$0\" \"$@\"", "x", "-c",
                                  "y",    "--mode", "danger-full-access"};
  for (const vector<string>& option : options) {
    SCOPED_TRACE(option.front() + " " + option[1]);
    vector<string> args = {"run"};
    if (option.front() != "--workspace") args.insert(args.end(), {"--workspace", ws_});
    args.insert(args.end(), option.begin(), option.end());
    args.emplace_back("--");
    args.insert(args.end(), command.begin(), command.end());
    const CliResult result = cli(args);
    EXPECT_TRUE(result.exited_with(0)) << result.describe();
    EXPECT_EQ(result.out, "x|-c|y|--mode|danger-full-access|") << result.describe();
  }
  // An option with its value missing before `--` is an error, and the command never ran.
  const CliResult missing = cli(
      {"run", "--workspace", ws_, "--deny-read", "--", "bash", "-c", "echo ran > " + dir_ / "ran"});
  EXPECT_TRUE(missing.exited_with(125)) << missing.describe();
  EXPECT_NE(missing.err.find("--deny-read"), string::npos) << missing.describe();
  EXPECT_FALSE(exists(dir_ / "ran"));
}

// The default backend's only dialect is bwrap's: an application's own "Permission denied" is no
// denial when stderr is all there is, and a refused write still is.
TEST_F(Refusal, AnApplicationsOwnPermissionDeniedIsNoDenialWithoutEvidence) {
  const CliResult own = cli({"run", "--no-evidence", "--json", "--workspace", ws_, "--", "bash",
                             "-c", "echo 'app: /srv/data: Permission denied' >&2; exit 1"});
  EXPECT_TRUE(own.exited_with(1)) << own.describe();
  const nlohmann::json object = parse_json(own.out);
  EXPECT_EQ(object["backend"], backend_name(Backend::kNatural)) << own.out;
  EXPECT_EQ(object["denialSource"], "stderr") << own.out;
  EXPECT_EQ(object["denied"], false) << own.out;
  const string target = dir_ / "outside";
  const CliResult refused = cli({"run", "--no-evidence", "--json", "--workspace", ws_, "--", "bash",
                                 "-c", "echo x > " + target});
  EXPECT_TRUE(refused.exited_with(1)) << refused.describe();
  EXPECT_EQ(parse_json(refused.out)["denied"], true) << refused.out;
  EXPECT_FALSE(exists(target));
}

// At a terminal, run says once where the interactive shell is when the command is a shell given
// nothing to run; never for a command that runs by itself, nor when the caller chose stdin or
// asked for a machine-readable form.
TEST_F(Refusal, ATerminalOnStdinGetsOneHintAboutTheShell) {
  const string hint = "dsh-sandbox shell";
  const CliResult plain = cli_on_terminal({"run", "--workspace", ws_, "--", "/bin/bash"}, "");
  EXPECT_TRUE(plain.exited_with(0)) << plain.describe();
  const std::size_t first = plain.err.find(hint);
  EXPECT_NE(first, string::npos) << plain.describe();
  EXPECT_EQ(plain.err.find(hint, first + 1), string::npos) << plain.describe();  // once
  for (const vector<string>& quiet : {vector<string>{"--stdin", "close"}, vector<string>{"--json"},
                                      vector<string>{"--format", "agent"}, vector<string>{}}) {
    vector<string> args = {"run", "--workspace", ws_};
    args.insert(args.end(), quiet.begin(), quiet.end());
    args.insert(args.end(), {"--", quiet.empty() ? "/bin/true" : "/bin/bash"});
    const CliResult result = cli_on_terminal(args, "");
    EXPECT_TRUE(result.exited_with(0)) << result.describe();
    EXPECT_EQ(result.err.find(hint), string::npos) << result.describe();
  }
  // Not a terminal: no hint.
  const CliResult piped = cli({"run", "--workspace", ws_, "--", "/bin/true"});
  EXPECT_EQ(piped.err, "") << piped.describe();
}

}  // namespace
}  // namespace dsh::cli_run_it
