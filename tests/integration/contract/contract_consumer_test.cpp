// SPDX-License-Identifier: Apache-2.0
// A consumer that knows only the reference contract (shared/spec/dsh-contract.md) and nothing of
// this project's library or extensions: it asks `dsh-sandbox confine` for the ConfinedArgv as
// JSON, spawns `argv` exactly as given (no descriptor, no flag added), classifies the settled run
// with the contract's fields alone (runnerFailureRules before denialSignatures, then enforcement)
// and renders it as the contract's bash tool does. It runs through every backend this host
// offers (bwrap+landlock; Landlock alone with bwrap made unusable; bwrap alone with the launcher
// left out of a copy of the install) and through fakes for what the host lacks: an operator's
// runnerCommand, and a launcher that behaves like the reference's. Every effect is judged from
// outside: the file on the host.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "files.h"
#include "json.h"
#include "must_run.h"
#include "process.h"
#include "temp_dir.h"

namespace dsh::contract_it {
namespace {

using nlohmann::json;
using testing::RunResult;
using testing::TempDir;

// --- What the contract says, restated here and nowhere else --------------------------------

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// Splits on \r?\n, as classifyRunnerFailure does.
std::vector<std::string> stderr_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream stream(text);
  while (std::getline(stream, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

// classifyRunnerFailure: exit 0 or a signal is never a runner failure; rules in order, each
// gated by its allowedExitCodes; informational lines excluded by whole-line equality; the first
// other line containing a non-blank fatal signature (case-insensitive) is the detail, unchanged.
std::optional<std::string> classify_runner_failure(std::optional<int> exit_code,
                                                   const std::string& err, const json& rules) {
  if (!exit_code || *exit_code == 0) return std::nullopt;
  const std::vector<std::string> lines = stderr_lines(err);
  for (const json& rule : rules) {
    if (rule.contains("allowedExitCodes")) {
      const auto& codes = rule["allowedExitCodes"];
      if (std::find(codes.begin(), codes.end(), *exit_code) == codes.end()) continue;
    }
    std::vector<std::string> informational;
    for (const json& line : rule.value("informationalLines", json::array())) {
      informational.push_back(lower(line.get<std::string>()));
    }
    std::vector<std::string> fatal;
    for (const json& signature : rule["fatalSignatures"]) {
      const std::string text = signature.get<std::string>();
      if (text.find_first_not_of(" \t\r\n") != std::string::npos) fatal.push_back(lower(text));
    }
    for (const std::string& line : lines) {
      const std::string folded = lower(line);
      if (std::find(informational.begin(), informational.end(), folded) != informational.end()) {
        continue;
      }
      for (const std::string& signature : fatal) {
        if (folded.find(signature) != std::string::npos) return line;
      }
    }
  }
  return std::nullopt;
}

// classifyDenial: a nonzero exit (not a signal) whose stderr holds one of this backend's
// signatures, case-insensitively.
bool classify_denial(std::optional<int> exit_code, const std::string& err, const json& signatures) {
  if (!exit_code || *exit_code == 0) return false;
  const std::string folded = lower(err);
  return std::any_of(signatures.begin(), signatures.end(), [&](const json& signature) {
    return folded.find(lower(signature.get<std::string>())) != std::string::npos;
  });
}

std::string unavailable_message(const std::string& mode, const std::optional<std::string>& detail) {
  std::string message =
      "sandbox mode \"" + mode +
      "\" is requested but no sandbox backend is usable on this host; refusing to run the "
      "command unconfined. Install bubblewrap or run a Landlock-enforcing kernel (Linux), "
      "ensure sandbox-exec is usable (macOS), or ensure the ACL restricted-token runner can "
      "start (Windows) — otherwise switch the consumer to danger-full-access.";
  if (detail) message += " Runner failure: " + *detail;
  return message;
}

std::string without_final_newline(std::string text) {
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

// What the consumer decided about one settled run, and the foreground render the model sees.
struct Settled {
  std::optional<std::string> runner_failure;  // the command never ran
  bool denied = false;
  std::string enforcement;
  std::string render;
};

Settled settle(const RunResult& run, const json& confined, const std::string& mode) {
  Settled settled;
  const std::optional<int> exit_code =
      WIFEXITED(run.status) ? std::optional<int>(WEXITSTATUS(run.status)) : std::nullopt;
  settled.runner_failure =
      classify_runner_failure(exit_code, run.err, confined["runnerFailureRules"]);
  if (settled.runner_failure) {
    settled.render = "Error: " + unavailable_message(mode, settled.runner_failure);
    return settled;
  }
  settled.denied = classify_denial(exit_code, run.err, confined["denialSignatures"]);
  settled.enforcement = confined["enforcement"].get<std::string>();
  std::vector<std::string> parts;
  if (!run.out.empty()) parts.push_back(without_final_newline(run.out));
  if (!run.err.empty()) parts.push_back("[stderr]\n" + without_final_newline(run.err));
  if (parts.empty()) parts.emplace_back("(no output)");
  if (settled.denied) parts.push_back("[sandbox: file access denied under " + mode + " mode]");
  if (exit_code && *exit_code != 0) {
    parts.push_back("[exit code: " + std::to_string(*exit_code) + "]");
  } else if (!exit_code) {
    parts.push_back("[killed by signal: " + std::to_string(WTERMSIG(run.status)) + "]");
  }
  for (std::size_t i = 0; i < parts.size(); ++i) {
    settled.render += (i == 0 ? "" : "\n") + parts[i];
  }
  return settled;
}

// --- The installs under test ----------------------------------------------------------------

std::string directory_of(const std::string& path) { return path.substr(0, path.rfind('/')); }

// The programs an install puts beside dsh-sandbox, one name a line.
std::vector<std::string> installed_programs() {
  std::ifstream list(DSH_PROGRAMS_LIST);
  std::vector<std::string> names;
  for (std::string name; std::getline(list, name);) {
    if (!name.empty()) names.push_back(name);
  }
  return names;
}

// How the CLI is made to select each backend.
enum class Backend { kNatural, kLandlockAlone, kBwrapAlone };

const char* backend_name(Backend backend) {
  switch (backend) {
    case Backend::kNatural:
      return "bwrap+landlock";
    case Backend::kLandlockAlone:
      return "landlock";
    case Backend::kBwrapAlone:
      return "bwrap";
  }
  return "unknown";
}

// Why this host cannot run the real backends, or "".
std::string missing_host_feature() {
  const std::string launcher = directory_of(DSH_SANDBOX_PATH) + "/landlock-run";
  const RunResult probe = testing::execute({launcher, "--probe"});
  if (!probe.exited_with(0)) return "landlock-run --probe: this kernel does not enforce Landlock";
  const RunResult bwrap =
      testing::execute({"/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid",
                        "--proc", "/proc", "--", "/bin/true"});
  if (!bwrap.exited_with(0)) return "bwrap cannot create its sandbox here: " + bwrap.err;
  return {};
}

class ContractConsumer : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string missing = missing_host_feature(); !missing.empty()) {
      DSH_SKIP_OR_FAIL(missing);
    }
    // Beside the test's files, readable by the other leg's user: a directory only its owner
    // writes, where the trust check accepts runners and configs.
    ASSERT_EQ(::chmod(dir_.path().c_str(), 0755), 0);
    workspace_ = dir_.mkdir("workspace");
    outside_ = dir_.mkdir("outside", 0777);
  }

  // A copy of the install with `left_out` missing and `replaced` (name -> file) put instead.
  std::string install_copy(const std::string& name, const std::string& left_out,
                           const std::string& replacement = {}) const {
    const std::string bin = dir_.mkdir(name);
    for (const std::string& program : installed_programs()) {
      if (program == left_out) continue;
      copy(directory_of(DSH_SANDBOX_PATH) + "/" + program, bin + "/" + program);
    }
    if (!replacement.empty()) copy(replacement, bin + "/" + left_out);
    return bin + "/dsh-sandbox";
  }

  static void copy(const std::string& from, const std::string& to) {
    std::error_code error;
    std::filesystem::copy_file(from, to, error);
    ASSERT_FALSE(error) << from << " -> " << to << ": " << error.message();
    ASSERT_EQ(::chmod(to.c_str(), 0755), 0) << to;
  }

  std::string config(const std::string& name, const std::string& text) const {
    const std::string path = dir_ / (name + ".json");
    testing::write_file(path, text, 0644);
    return path;
  }

  // The CLI and config that select `backend` on this host.
  std::pair<std::string, std::vector<std::string>> cli_for(Backend backend) {
    switch (backend) {
      case Backend::kNatural:
        return {DSH_SANDBOX_PATH, {}};
      case Backend::kLandlockAlone:
        return {
            DSH_SANDBOX_PATH,
            {"--config", config("no-bwrap", R"({"bwrapPath": "/nonexistent/contract/bwrap"})")}};
      case Backend::kBwrapAlone:
        return {install_copy("no-launcher", "landlock-run"), {}};
    }
    return {};
  }

  // `dsh-sandbox confine --mode MODE [config] -- /bin/bash -c SCRIPT`, parsed: the contract's
  // ConfinedArgv (the consumer reads only its fields).
  json confine(const std::string& cli, const std::vector<std::string>& config,
               const std::string& mode, const std::string& script,
               const std::vector<std::string>& flags = {}) const {
    std::vector<std::string> args = {cli, "confine", "--mode", mode, "--workspace", workspace_};
    args.insert(args.end(), config.begin(), config.end());
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", "/bin/bash", "-c", script});
    const RunResult confined = testing::execute(args);
    EXPECT_TRUE(confined.exited_with(0)) << confined.describe();
    return testing::parse_json(confined.out);
  }

  // Confine, spawn the argv exactly as returned (from `spawn_in` when given: a shell enters it
  // and execs the argv unchanged), settle.
  Settled run(const std::string& cli, const std::vector<std::string>& config,
              const std::string& mode, const std::string& script,
              const std::vector<std::string>& flags = {}, const std::string& spawn_in = {},
              RunResult* raw = nullptr) const {
    const json confined = confine(cli, config, mode, script, flags);
    if (!confined.is_object()) return {};
    std::vector<std::string> argv = confined["argv"].get<std::vector<std::string>>();
    EXPECT_EQ(std::vector<std::string>(argv.end() - 3, argv.end()),
              (std::vector<std::string>{"/bin/bash", "-c", script}));
    if (!spawn_in.empty()) {
      argv.insert(argv.begin(), {"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", spawn_in});
    }
    RunResult result = testing::execute(argv);
    if (raw != nullptr) *raw = result;
    return settle(result, confined, mode);
  }

  TempDir dir_;
  std::string workspace_;
  std::string outside_;
};

class EveryBackend : public ContractConsumer, public ::testing::WithParamInterface<Backend> {};

// The command runs, its own failure is its own, a write outside the mode is a denial of this
// backend's dialect (and absent on the host), and a workspace-write write lands.
TEST_P(EveryBackend, ReturnedArgvRunsAndSettlesByTheContractsFieldsAlone) {
  const auto [cli, config] = cli_for(GetParam());
  const json facts = confine(cli, config, "read-only", "true");
  ASSERT_TRUE(facts.is_object());
  EXPECT_EQ(facts["backend"], backend_name(GetParam())) << facts.dump();

  const Settled hello = run(cli, config, "read-only", "echo hello");
  EXPECT_FALSE(hello.runner_failure) << hello.render;
  EXPECT_EQ(hello.render, "hello");

  const Settled own = run(cli, config, "read-only", "echo oops >&2; exit 3");
  EXPECT_FALSE(own.runner_failure) << own.render;
  EXPECT_FALSE(own.denied) << own.render;
  EXPECT_EQ(own.render, "[stderr]\noops\n[exit code: 3]");

  const std::string outside = outside_ + "/" + testing::unique("written");
  const Settled denied = run(cli, config, "read-only", "echo x > " + outside);
  EXPECT_FALSE(denied.runner_failure) << denied.render;
  EXPECT_TRUE(denied.denied) << denied.render;
  EXPECT_NE(
      denied.render.find("[sandbox: file access denied under read-only mode]\n[exit code: 1]"),
      std::string::npos)
      << denied.render;
  EXPECT_FALSE(testing::exists(outside));

  const std::string inside = workspace_ + "/" + testing::unique("written");
  const Settled written = run(cli, config, "workspace-write", "printf in > " + inside);
  EXPECT_FALSE(written.runner_failure) << written.render;
  EXPECT_EQ(written.render, "(no output)");
  EXPECT_EQ(testing::read_file(inside), "in");
}

// The lines of `text`, as a set, without those about /proc/PID entries: host processes come and
// go between a listing and a stat, so those lines differ from one walk to the next.
std::set<std::string> walk_errors(const std::string& text) {
  std::set<std::string> lines;
  for (const std::string& line : stderr_lines(text)) {
    if (line.find("'/proc/") == std::string::npos) lines.insert(line);
  }
  return lines;
}

// Listing works as on the host in every confined mode, a hidden path included: `ls /`, `ls ~`,
// the hidden directory's parent and `find / -maxdepth 2` print what they print outside, and no
// error the host walk lacks. The hidden file's contents stay unreadable; on Landlock alone the
// refusal is EACCES, a file denial by Landlock's dialect (which it is), and by bwrap's, whose
// dialect is the write refusal, no denial.
TEST_P(EveryBackend, ListingsWorkAndAHiddenFileStaysUnreadable) {
  const auto [cli, config] = cli_for(GetParam());
  const std::string secret = dir_.mkdir("secret", 0755);
  testing::write_file(secret + "/key", "the-hidden-key\n", 0644);
  const std::vector<std::string> hide = {"--deny-read", secret};
  const char* home = std::getenv("HOME");  // NOLINT(concurrency-mt-unsafe): the test's thread
  ASSERT_NE(home, nullptr);
  // Each as on the host, status and output: as nobody, a home that is root's is unlistable
  // outside as well.
  const std::vector<std::string> listings = {"ls -a /", "ls -a ~", "ls -a " + dir_.path()};
  std::vector<RunResult> host;
  for (const std::string& listing : listings) {
    host.push_back(testing::execute({"/bin/bash", "-c", listing}));
  }
  ASSERT_TRUE(host[0].exited_with(0)) << host[0].describe();
  ASSERT_TRUE(host[2].exited_with(0)) << host[2].describe();
  const RunResult host_walk =
      testing::execute({"/bin/bash", "-c", "find / -maxdepth 2 -xdev >/dev/null"});
  for (const char* mode : {"read-only", "workspace-write"}) {
    // workspace-write's private /tmp (bwrap) would differ from the host's: a home beneath it is
    // compared under read-only only.
    const bool home_in_tmp = std::string(home).starts_with("/tmp/");
    for (std::size_t i = 0; i < listings.size(); ++i) {
      if (i == 1 && std::string(mode) != "read-only" && home_in_tmp) continue;
      RunResult listed;
      const Settled settled = run(cli, config, mode, listings[i], hide, {}, &listed);
      EXPECT_FALSE(settled.runner_failure) << settled.render;
      EXPECT_EQ(listed.status, host[i].status)
          << mode << " " << listings[i] << ": " << listed.describe() << host[i].describe();
      EXPECT_EQ(listed.out, host[i].out) << mode << " " << listings[i];
    }
    RunResult walked;
    run(cli, config, mode, "find / -maxdepth 2 -xdev >/dev/null", hide, {}, &walked);
    const std::set<std::string> host_errors = walk_errors(host_walk.err);
    for (const std::string& line : walk_errors(walked.err)) {
      EXPECT_TRUE(host_errors.contains(line)) << mode << ": the sandbox added: " << line;
    }
  }
  RunResult read;
  const Settled hidden = run(cli, config, "read-only", "cat " + secret + "/key", hide, {}, &read);
  EXPECT_FALSE(hidden.runner_failure) << hidden.render;
  EXPECT_TRUE(read.exited_with(1)) << read.describe();
  EXPECT_EQ(read.out.find("the-hidden-key"), std::string::npos) << read.out;
  EXPECT_NE(read.err.find("Permission denied"), std::string::npos) << read.err;
  EXPECT_EQ(hidden.denied, GetParam() == Backend::kLandlockAlone) << hidden.render;
}

// The network's refusal under the default policy (no network) is never a file denial: a socket
// the launcher's filter refuses fails with "Address family not supported by protocol", bwrap's
// namespace holds only lo, and neither text is in any backend's denialSignatures.
TEST_P(EveryBackend, ASocketRefusedByTheNetworkPolicyIsNoFileDenial) {
  const auto [cli, config] = cli_for(GetParam());
  for (const char* mode : {"read-only", "workspace-write"}) {
    for (const std::string script :
         {"exec 3<>/dev/tcp/127.0.0.1/9", "exec 3<>/dev/udp/192.0.2.1/53 && echo x >&3",
          "python3 -c 'import socket; socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)"
          ".connect((\"2001:db8::1\", 53))'"}) {
      RunResult raw;
      const Settled settled = run(cli, config, mode, script, {}, {}, &raw);
      EXPECT_FALSE(settled.runner_failure) << settled.render;
      EXPECT_FALSE(raw.exited_with(0)) << mode << " " << script << ": " << raw.describe();
      EXPECT_FALSE(settled.denied) << mode << " " << script << ": " << settled.render;
      EXPECT_EQ(settled.render.find("[sandbox: file access denied"), std::string::npos)
          << settled.render;
    }
  }
}

// The printed argv runs in confine's --cwd, by default the workspace root, whichever backend
// confines it and wherever the caller spawns it from; a --cwd it cannot enter is refused before
// the command runs, never run elsewhere.
TEST_P(EveryBackend, TheArgvRunsInTheSameDirectoryOnEveryBackend) {
  const auto [cli, config] = cli_for(GetParam());
  const std::string sub = workspace_ + "/sub";
  ASSERT_EQ(::mkdir(sub.c_str(), 0755), 0);
  for (const char* mode : {"read-only", "workspace-write"}) {
    const Settled root = run(cli, config, mode, "pwd", {}, sub);
    EXPECT_EQ(root.render, workspace_) << mode << " from " << sub;
    const Settled given = run(cli, config, mode, "pwd", {"--cwd", sub}, outside_);
    EXPECT_EQ(given.render, sub) << mode << " from " << outside_;
  }
  const std::string gone = workspace_ + "/gone";
  ASSERT_EQ(::mkdir(gone.c_str(), 0755), 0);
  const json confined = confine(cli, config, "read-only", "pwd", {"--cwd", gone});
  ASSERT_TRUE(confined.is_object());
  ASSERT_EQ(::rmdir(gone.c_str()), 0);
  const RunResult refused = testing::execute(confined["argv"].get<std::vector<std::string>>());
  EXPECT_FALSE(refused.exited_with(0)) << refused.describe();
  EXPECT_EQ(refused.out, "") << refused.describe();
  EXPECT_TRUE(settle(refused, confined, "read-only").runner_failure) << refused.describe();
}

// enforcement is the contract's fact: bwrap's static "full", Landlock's the launcher's own
// verdict (its --probe line), in both modes.
TEST_P(EveryBackend, EnforcementIsTheContractsVerdict) {
  const auto [cli, config] = cli_for(GetParam());
  std::string expected = "full";
  if (GetParam() == Backend::kLandlockAlone) {
    const RunResult probe =
        testing::execute({directory_of(DSH_SANDBOX_PATH) + "/landlock-run", "--probe"});
    ASSERT_TRUE(probe.exited_with(0)) << probe.describe();
    if (probe.out.find("partially enforced") != std::string::npos) expected = "partial";
  }
  for (const char* mode : {"read-only", "workspace-write"}) {
    const json confined = confine(cli, config, mode, "true");
    ASSERT_TRUE(confined.is_object());
    EXPECT_EQ(confined["enforcement"], expected) << mode << ": " << confined.dump();
  }
}

std::string param_name(const ::testing::TestParamInfo<Backend>& param) {
  switch (param.param) {
    case Backend::kNatural:
      return "bwrap_landlock";
    case Backend::kLandlockAlone:
      return "landlock";
    case Backend::kBwrapAlone:
      return "bwrap";
  }
  return "unknown";
}

INSTANTIATE_TEST_SUITE_P(Backends, EveryBackend,
                         ::testing::Values(Backend::kNatural, Backend::kLandlockAlone,
                                           Backend::kBwrapAlone),
                         param_name);

// An operator's runnerCommand, a fake this host lacks: the operator's assertion is "full", both
// Linux dialects are denials, and its own failure line is a runner failure (the command never
// ran, and the consumer says so).
TEST_F(ContractConsumer, OperatorsRunnerIsFullAndItsFailureIsARunnerFailure) {
  // A stand-in runner: skips the profile up to "--" and runs the rest, unless told to fail.
  const std::string runner = dir_ / "fake-runner";
  testing::write_file(runner,
                      "#!/bin/sh\n"
                      "[ -e \"" +
                          (dir_ / "fail") +
                          "\" ] && { echo 'fake-runner: cannot confine "
                          "here' >&2; exit 1; }\n"
                          "while [ \"$#\" -gt 0 ] && [ \"$1\" != -- ]; do shift; done\n"
                          "shift\nexec \"$@\"\n",
                      0755);
  // The network open: the documented profile cannot deny it, and the contract has no network.
  const std::vector<std::string> open = {
      "--config",
      config("runner", R"({"runnerCommand": [")" + runner +
                           R"("], "runnerFailureSignatures": ["fake-runner: "]})"),
      "--network", "inherit"};
  for (const char* mode : {"read-only", "workspace-write"}) {
    const json confined = confine(DSH_SANDBOX_PATH, open, mode, "true");
    ASSERT_TRUE(confined.is_object());
    EXPECT_EQ(confined["enforcement"], "full") << mode << ": " << confined.dump();
    EXPECT_EQ(confined["argv"][0], runner);
  }
  const Settled denied =
      run(DSH_SANDBOX_PATH, open, "read-only", "echo 'cat: secret: Permission denied' >&2; exit 1");
  EXPECT_FALSE(denied.runner_failure);
  EXPECT_TRUE(denied.denied) << denied.render;

  testing::write_file(dir_ / "fail", "", 0644);
  const std::string marker = workspace_ + "/" + testing::unique("marker");
  const Settled failed = run(DSH_SANDBOX_PATH, open, "read-only", "printf ran > " + marker);
  ASSERT_TRUE(failed.runner_failure) << failed.render;
  EXPECT_EQ(*failed.runner_failure, "fake-runner: cannot confine here");
  EXPECT_EQ(failed.render,
            "Error: " + unavailable_message("read-only", "fake-runner: cannot confine here"));
  EXPECT_FALSE(testing::exists(marker));
}

// A launcher that behaves like the reference's (no --features, no extensions) beside the CLI and
// no bwrap: confine refuses with the contract's code and message before anything runs, and the
// consumer renders it as the contract's error.
TEST_F(ContractConsumer, ReferenceLikeLauncherAloneIsUnavailableAndNothingRuns) {
  const std::string cli = install_copy("reference-launcher", "landlock-run", REFERENCE_LAUNCHER);
  const std::string config =
      this->config("no-bwrap", R"({"bwrapPath": "/nonexistent/contract/bwrap"})");
  const std::string marker = workspace_ + "/" + testing::unique("marker");
  const RunResult refused =
      testing::execute({cli, "confine", "--mode", "read-only", "--workspace", workspace_,
                        "--config", config, "--", "/bin/bash", "-c", "printf ran > " + marker});
  EXPECT_TRUE(refused.exited_with(125)) << refused.describe();
  EXPECT_EQ(refused.out, "");
  EXPECT_EQ(refused.err.rfind("dsh-sandbox: " + unavailable_message("read-only", std::nullopt), 0),
            0U)
      << refused.err;
  EXPECT_FALSE(testing::exists(marker));
}

}  // namespace
}  // namespace dsh::contract_it
