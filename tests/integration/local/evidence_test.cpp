// SPDX-License-Identifier: Apache-2.0
// Denials from kernel evidence (docs/evidence.md): `dsh-sandbox run --json` on bwrap+landlock and
// on Landlock alone classifies from the launcher's records, never from what the command printed.
// Every write is judged from outside: the file on the host is absent.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "consumer/bash_executor.h"
#include "local_harness.h"
#include "must_run.h"

namespace dsh::local_it {
namespace {

using nlohmann::json;

class Evidence : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (const std::string missing = missing_host_feature(); !missing.empty()) {
      DSH_SKIP_OR_FAIL(missing);
    }
  }

  // `dsh-sandbox run --json --mode MODE --workspace WS EXTRA... -c SCRIPT`, parsed.
  json run(const std::string& script, const std::string& mode = "workspace-write",
           const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"run", "--json",      "--mode",
                                     mode,  "--workspace", workspace_.path()};
    if (GetParam() == Backend::kLandlock) {
      const std::string config = config_dir_ / "config.json";
      llrt::write_file(config, R"({"bwrapPath": ")" + missing_bwrap_path() + R"("})");
      args.insert(args.end(), {"--config", config});
    }
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"-c", script});
    const RunResult result = run_cli(args);
    json object = parse_json(result.out);
    EXPECT_EQ(object.value("backend", ""),
              GetParam() == Backend::kLandlock ? "landlock" : "bwrap+landlock");
    EXPECT_EQ(object["denialSource"], "kernel") << result.describe();
    return object;
  }

  static bool names(const json& object, const std::string& op, const std::string& path,
                    const std::string& rule) {
    for (const json& denial : object["denials"]) {
      if (denial["op"] == op && denial["path"] == path && denial["rule"] == rule) return true;
    }
    return false;
  }

  TempDir config_dir_;
  TempDir workspace_;
};

TEST_P(Evidence, PrintedPermissionDeniedIsNoDenial) {
  const json object = run("echo 'touch: cannot touch /etc/x: Permission denied' >&2; exit 1");
  EXPECT_FALSE(object["denied"].get<bool>()) << object.dump();
  EXPECT_EQ(object["denialCount"], 0) << object.dump();
  EXPECT_TRUE(object["denials"].empty());
}

TEST_P(Evidence, WriteOutsideTheWorkspaceIsADenialNamingThePathDespiteAMegabyteOfStderr) {
  const std::string target = "/etc/" + unique("dsh-evidence");
  const json object =
      run("echo x > " + target + "; head -c 1048576 /dev/zero | tr '\\0' x >&2; exit 1");
  EXPECT_FALSE(std::filesystem::exists(target)) << target;
  EXPECT_TRUE(object["denied"].get<bool>()) << object["denials"].dump();
  EXPECT_TRUE(names(object, "create", target, "outside-writable-roots"))
      << object["denials"].dump();
}

TEST_P(Evidence, AnApplicationsOwnEaccesIsAnOrdinaryFailure) {
  // As nobody /etc/shadow is unreadable by its mode; as root (capabilities dropped, owner root)
  // it is read. Neither is the sandbox's refusal.
  const json object = run("cat /etc/shadow > /dev/null", "read-only");
  EXPECT_FALSE(object["denied"].get<bool>()) << object.dump();
  EXPECT_EQ(object["denialCount"], 0) << object["denials"].dump();
}

TEST_P(Evidence, AMetadataRefusalIsNamedAsSuch) {
  llrt::write_file(workspace_ / "file", "x");
  const std::string file = workspace_ / "file";
  const json object = run("chmod 600 " + file, "read-only");
  EXPECT_TRUE(object["denied"].get<bool>()) << object.dump();
  EXPECT_TRUE(names(object, "chmod", file, "metadata")) << object["denials"].dump();
}

TEST_P(Evidence, ANetworkRefusalIsNamedAsSuch) {
  const json object = run("exec 3<>/dev/tcp/127.0.0.1/9", "workspace-write", {"--network", "deny"});
  EXPECT_TRUE(object["denied"].get<bool>()) << object.dump();
  EXPECT_TRUE(names(object, "socket", "af-inet", "network-denied")) << object["denials"].dump();
}

TEST_P(Evidence, ManyRefusedCallsKeepTheRecordsBoundedWithTheirTotal) {
  const std::string target = "/etc/" + unique("dsh-flood");
  const json object =
      run("perl -e 'for (1..100000) { open(my $f, \">\", \"" + target + "\") }'; exit 1");
  EXPECT_FALSE(std::filesystem::exists(target));
  EXPECT_LE(object["denials"].size(), 64U);
  EXPECT_GE(object["denialCount"].get<std::uint64_t>(), 100000U) << object["denials"].dump();
  EXPECT_LE(object["denialCount"].get<std::uint64_t>(), 100010U);
}

// A background job's refusals land in that job's outcome, as a foreground run's do.
TEST_P(Evidence, ADenialInABackgroundJobLandsInItsOutcome) {
  const std::string target = "/etc/" + unique("dsh-job");
  auto provider = make_provider(GetParam());
  sandbox::consumer::SandboxBashExecutor executor(*provider);
  sandbox::consumer::RunSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo x > " + target + "; exit 1"};
  spec.policy.mode = sandbox::SandboxMode::kWorkspaceWrite;
  spec.policy.workspace_root = workspace_.path();
  spec.process.workdir = workspace_.path();
  sandbox::consumer::BackgroundJob job = executor.start(spec);
  const sandbox::consumer::RunOutcome outcome = job.wait();
  EXPECT_FALSE(std::filesystem::exists(target));
  EXPECT_TRUE(outcome.sandbox.denied);
  EXPECT_EQ(outcome.sandbox.denial_source, sandbox::DenialSource::kKernel);
  ASSERT_FALSE(outcome.sandbox.denials.records.empty());
  EXPECT_EQ(outcome.sandbox.denials.records.front().path, target);
  EXPECT_EQ(outcome.sandbox.denials.records.front().op, "create");
}

INSTANTIATE_TEST_SUITE_P(Backends, Evidence,
                         ::testing::Values(Backend::kNatural, Backend::kLandlock), param_label);

// Waits until `path` exists (a handshake), at most `limit`.
bool wait_for(const std::string& path, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!std::filesystem::exists(path)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// The supervisor killed mid-run: the command (its child) dies with it, and a process that
// outlives both finds every notified call refused, a write inside its writable root included.
TEST(EvidenceSupervisor, KilledSupervisorLeavesNotifiedCallsRefused) {
  if (const std::string missing = missing_host_feature(); !missing.empty()) {
    DSH_SKIP_OR_FAIL(missing);
  }
  TempDir workspace;
  TempDir out_dir;
  const std::string ws = workspace.path();
  const std::string out_path = out_dir / "out";
  const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(out, 0);
  // The survivor waits for "go" (created from outside), then tries a write inside the root and
  // reports its status on its inherited stdout (a write(2), never notified).
  const std::string survivor = "while [ ! -e " + ws + "/go ]; do sleep 0.02; done; (echo x > " +
                               ws + "/late) 2>/dev/null; echo rc=$?";
  testing::SpawnOptions options;
  options.stdout_fd = out;
  testing::Started launcher(
      {LANDLOCK_RUN_PATH, "--ro", "/", "--rw", ws, "--evidence", "--", "sh", "-c",
       "setsid sh -c '" + survivor + "' & echo up > " + ws + "/started; sleep 60"},
      options);
  ::close(out);
  ASSERT_TRUE(wait_for(ws + "/started", std::chrono::seconds(10)));
  ASSERT_EQ(::kill(launcher.pid(), SIGKILL), 0);
  const RunResult killed = launcher.wait(std::chrono::seconds(10));
  EXPECT_TRUE(killed.killed_by(SIGKILL)) << killed.describe();
  llrt::write_file(ws + "/go", "");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::string said;
  while (said.find("rc=") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    said = llrt::read_file(out_path);
  }
  EXPECT_NE(said.find("rc="), std::string::npos) << "the survivor never reported";
  EXPECT_EQ(said.find("rc=0"), std::string::npos) << said;
  EXPECT_FALSE(std::filesystem::exists(ws + "/late"));
}

}  // namespace
}  // namespace dsh::local_it
