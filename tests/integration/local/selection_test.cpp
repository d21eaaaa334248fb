// SPDX-License-Identifier: Apache-2.0
// Which backend confines, decided on the real host: naturally
// bwrap with landlock-run layered inside; Landlock when bwrap is missing or when a container's
// seccomp profile forbids namespaces; SANDBOX_UNAVAILABLE, with nothing run, when neither works.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>

#include "dsh/sandbox/errors.h"
#include "local_harness.h"
#include "must_run.h"
#include "profiles/bwrap.h"

namespace dsh::local_it {
namespace {

using sandbox::BackendReport;
using sandbox::SandboxBackend;
using sandbox::SandboxEnforcement;

std::string dir(const std::string& path) { return path.substr(0, path.rfind('/')); }

class Selection : public LocalTest {};

const nlohmann::json& find(const nlohmann::json& probe, const std::string& name) {
  static const nlohmann::json k_none = nullptr;
  for (const nlohmann::json& backend : probe["backends"]) {
    if (backend["backend"] == name) return backend;
  }
  ADD_FAILURE() << "no backend " << name << " in " << probe.dump();
  return k_none;
}

// A cause and a fix, one line each, for an unusable backend.
void expect_one_line_diagnosis(const nlohmann::json& backend) {
  ASSERT_TRUE(backend.is_object());
  EXPECT_EQ(backend["usable"], false) << backend.dump();
  ASSERT_TRUE(backend["cause"].is_string()) << backend.dump();
  ASSERT_TRUE(backend["fix"].is_string()) << backend.dump();
  const std::string cause = backend["cause"];
  const std::string fix = backend["fix"];
  EXPECT_FALSE(cause.empty());
  EXPECT_FALSE(fix.empty());
  EXPECT_EQ(cause.find('\n'), std::string::npos) << cause;
  EXPECT_EQ(fix.find('\n'), std::string::npos) << fix;
}

void expect_landlock_usable(const nlohmann::json& probe) {
  const nlohmann::json& landlock = find(probe, "landlock");
  ASSERT_TRUE(landlock.is_object());
  EXPECT_EQ(landlock["usable"], true) << landlock.dump();
  // Both readings full: the contract's is the launcher's verdict (full on this ABI), and under
  // workspace-write the launcher's supervisor keeps file metadata inside the writable roots
  // (Landlock does not govern it), so nothing is ungoverned, as confine says for that mode.
  EXPECT_EQ(landlock["enforcement"], "full") << landlock.dump();
  EXPECT_EQ(landlock["strictEnforcement"], "full") << landlock.dump();
  ASSERT_EQ(landlock["modes"].size(), 2U) << landlock.dump();
  EXPECT_EQ(landlock["modes"][0]["mode"], "read-only");
  EXPECT_EQ(landlock["modes"][0]["enforcement"], "full") << landlock.dump();
  EXPECT_EQ(landlock["modes"][0]["strictEnforcement"], "full") << landlock.dump();
  EXPECT_EQ(landlock["modes"][1]["mode"], "workspace-write");
  EXPECT_EQ(landlock["modes"][1]["enforcement"], "full") << landlock.dump();
  EXPECT_EQ(landlock["modes"][1]["strictEnforcement"], "full") << landlock.dump();
  EXPECT_EQ(landlock["landlockAbi"], llrt::kernel_abi()) << landlock.dump();
  EXPECT_EQ(landlock["runner"], dir(dsh_sandbox()) + "/landlock-run") << landlock.dump();
}

// --- 1. natural selection -------------------------------------------------------------------

TEST_F(Selection, LibraryNaturallySelectsBwrapWithLandlockInsideFull) {
  auto provider = make_provider(Backend::kNatural);
  const sandbox::ProbeSummary summary = provider->probe_all();
  EXPECT_EQ(summary.platform, "linux");
  EXPECT_EQ(summary.selected, "bwrap+landlock");
  ASSERT_EQ(summary.backends.size(), 2U);
  EXPECT_EQ(summary.backends[0].backend, SandboxBackend::kBwrap);
  EXPECT_TRUE(summary.backends[0].usable) << summary.backends[0].cause;
  EXPECT_EQ(summary.backends[0].enforcement, SandboxEnforcement::kFull);
  EXPECT_EQ(summary.backends[0].runner, "/usr/bin/bwrap");
  EXPECT_EQ(summary.backends[1].backend, SandboxBackend::kLandlock);
  EXPECT_TRUE(summary.backends[1].usable) << summary.backends[1].cause;
  EXPECT_EQ(summary.backends[1].landlock_abi, llrt::kernel_abi());

  // Lazily, on the first confine: both modes, full, and the verdict probed once.
  auto lazy = make_provider(Backend::kNatural);
  EXPECT_EQ(lazy->probes_run(), 0);
  TempDir workspace;
  for (const ConfinedSandboxMode mode :
       {ConfinedSandboxMode::kReadOnly, ConfinedSandboxMode::kWorkspaceWrite}) {
    const ConfinedArgv confined = confine(*lazy, {"/bin/true"}, mode, workspace.path());
    EXPECT_EQ(confined.backend, "bwrap+landlock");
    EXPECT_EQ(confined.enforcement, SandboxEnforcement::kFull);
    EXPECT_TRUE(confined.ungoverned.empty());
    EXPECT_EQ(confined.argv.front(), "/usr/bin/bwrap");
    EXPECT_NE(std::find(confined.argv.begin(), confined.argv.end(), llrt::launcher()),
              confined.argv.end());
    EXPECT_TRUE(spawn(confined).exited_with(0)) << spawn(confined).describe();
  }
  EXPECT_EQ(lazy->probes_run(), 2);  // bwrap, then landlock for the inner layer; cached after
}

TEST_F(Selection, CliProbeJsonNaturallySelectsBwrapWithLandlockFull) {
  const RunResult probe = run_cli({"probe", "--json"});
  ASSERT_TRUE(probe.exited_with(0)) << probe.describe();
  const nlohmann::json report = parse_json(probe.out);
  EXPECT_EQ(report["platform"], "linux");
  EXPECT_EQ(report["selected"], "bwrap+landlock");
  const nlohmann::json& bwrap = find(report, "bwrap");
  EXPECT_EQ(bwrap["usable"], true) << bwrap.dump();
  EXPECT_EQ(bwrap["enforcement"], "full") << bwrap.dump();
  EXPECT_EQ(bwrap["runner"], "/usr/bin/bwrap");
  expect_landlock_usable(report);

  TempDir workspace;
  const RunResult confine = run_cli(
      {"confine", "--mode", "workspace-write", "--workspace", workspace.path(), "--", "true"});
  ASSERT_TRUE(confine.exited_with(0)) << confine.describe();
  const nlohmann::json confined = parse_json(confine.out);
  EXPECT_EQ(confined["backend"], "bwrap+landlock");
  EXPECT_EQ(confined["enforcement"], "full");
  EXPECT_EQ(confined["network"], "deny");  // confined modes default to no network
  EXPECT_EQ(confined["ungoverned"], nlohmann::json::array());
  EXPECT_EQ(confined["argv"].back(), "true");
}

// --- 2. bwrap unusable: Landlock ------------------------------------------------------------

TEST_F(Selection, LibraryFallsToLandlockWhenBwrapIsMissing) {
  auto provider = make_provider(Backend::kLandlock);
  const sandbox::ProbeSummary summary = provider->probe_all();
  EXPECT_EQ(summary.selected, "landlock");
  ASSERT_EQ(summary.backends.size(), 2U);
  const BackendReport& bwrap = summary.backends[0];
  EXPECT_FALSE(bwrap.usable);
  EXPECT_NE(bwrap.cause.find(missing_bwrap_path()), std::string::npos) << bwrap.cause;
  EXPECT_NE(bwrap.cause.find("No such file or directory"), std::string::npos) << bwrap.cause;
  EXPECT_EQ(bwrap.cause.find('\n'), std::string::npos);
  EXPECT_FALSE(bwrap.fix.empty());
  EXPECT_EQ(bwrap.fix.find('\n'), std::string::npos);
  const BackendReport& landlock = summary.backends[1];
  EXPECT_TRUE(landlock.usable) << landlock.cause;

  // The wrap's enforcement is the probe's verdict in both modes; the strict reading is full too:
  // under read-only seccomp denies metadata, under workspace-write the launcher's supervisor
  // performs it inside the writable roots only.
  TempDir workspace;
  auto lazy = make_provider(Backend::kLandlock);
  const ConfinedArgv read_only =
      confine(*lazy, {"/bin/true"}, ConfinedSandboxMode::kReadOnly, workspace.path());
  EXPECT_EQ(read_only.backend, "landlock");
  EXPECT_EQ(read_only.argv.front(), llrt::launcher());
  ASSERT_EQ(landlock.modes.size(), 2U);
  EXPECT_EQ(read_only.enforcement, landlock.modes[0].enforcement);
  EXPECT_EQ(read_only.enforcement, SandboxEnforcement::kFull);
  const ConfinedArgv workspace_write =
      confine(*lazy, {"/bin/true"}, ConfinedSandboxMode::kWorkspaceWrite, workspace.path());
  EXPECT_EQ(workspace_write.backend, "landlock");
  EXPECT_EQ(workspace_write.enforcement, SandboxEnforcement::kFull);
  EXPECT_EQ(workspace_write.strict_enforcement, SandboxEnforcement::kFull);
  EXPECT_EQ(workspace_write.enforcement, landlock.modes[1].enforcement);
  EXPECT_EQ(workspace_write.strict_enforcement, landlock.modes[1].strict_enforcement);
  EXPECT_EQ(landlock.enforcement, SandboxEnforcement::kFull);
  EXPECT_EQ(landlock.strict_enforcement, SandboxEnforcement::kFull);  // the weakest of its modes
  EXPECT_TRUE(workspace_write.ungoverned.empty());
  EXPECT_NE(
      std::find(workspace_write.argv.begin(), workspace_write.argv.end(), "--contain-metadata"),
      workspace_write.argv.end());
  EXPECT_TRUE(spawn(workspace_write).exited_with(0)) << spawn(workspace_write).describe();
}

TEST_F(Selection, CliFallsToLandlockWhenConfigNamesAMissingBwrap) {
  const std::string config = write_config(R"({"bwrapPath": ")" + missing_bwrap_path() + R"("})");
  const RunResult probe = run_cli({"probe", "--json", "--config", config});
  ASSERT_TRUE(probe.exited_with(0)) << probe.describe();
  const nlohmann::json report = parse_json(probe.out);
  EXPECT_EQ(report["selected"], "landlock");
  const nlohmann::json& bwrap = find(report, "bwrap");
  expect_one_line_diagnosis(bwrap);
  EXPECT_EQ(bwrap["runner"], missing_bwrap_path());
  expect_landlock_usable(report);

  // A workspace apart from the config: the working directory (/ for nobody) would hold it.
  TempDir workspace;
  const RunResult confine =
      run_cli({"confine", "--workspace", workspace.path(), "--config", config, "--", "true"});
  ASSERT_TRUE(confine.exited_with(0)) << confine.describe();
  const nlohmann::json confined = parse_json(confine.out);
  EXPECT_EQ(confined["backend"], "landlock");
  EXPECT_EQ(confined["argv"][0], dir(dsh_sandbox()) + "/landlock-run");
}

// A container's seccomp profile (Docker's default refuses namespace flags): bwrap cannot create
// its sandbox, the probe says why and what to do in one line each, and Landlock confines.
TEST_F(Selection, CliUnderSeccompThatForbidsNamespacesFallsToLandlockAndSaysWhy) {
  // The wrapper really forbids namespaces: bwrap alone fails under it.
  const RunResult direct = llrt::execute(
      {deny_namespaces(), "/usr/bin/bwrap", "--ro-bind", "/", "/", "--", "/bin/true"});
  ASSERT_FALSE(direct.exited_with(0)) << direct.describe();

  const RunResult probe = cli_without_namespaces({"probe", "--json"});
  ASSERT_TRUE(probe.exited_with(0)) << probe.describe();
  const nlohmann::json report = parse_json(probe.out);
  EXPECT_EQ(report["selected"], "landlock");
  const nlohmann::json& bwrap = find(report, "bwrap");
  expect_one_line_diagnosis(bwrap);
  EXPECT_NE(lower(bwrap["cause"].get<std::string>()).find("seccomp"), std::string::npos)
      << bwrap.dump();
  EXPECT_NE(lower(bwrap["fix"].get<std::string>()).find("seccomp"), std::string::npos)
      << bwrap.dump();
  expect_landlock_usable(report);

  // The human report: bwrap's cause and fix on one line each (the allow-list's proxy, unusable
  // without bwrap, has lines of its own).
  const RunResult human = cli_without_namespaces({"probe"});
  ASSERT_TRUE(human.exited_with(0)) << human.describe();
  int causes = 0;
  int fixes = 0;
  for (const std::string& line : split_lines(human.out)) {
    if (line == "  cause: " + bwrap["cause"].get<std::string>()) ++causes;
    if (line.rfind("  fix:", 0) == 0 &&
        line.find(bwrap["fix"].get<std::string>()) != std::string::npos) {
      ++fixes;
    }
  }
  EXPECT_EQ(causes, 1) << human.out;
  EXPECT_EQ(fixes, 1) << human.out;
  EXPECT_NE(human.out.find("selected: landlock\n"), std::string::npos) << human.out;

  // confine under the same filter picks Landlock, and that argv confines under the filter.
  TempDir workspace;
  const RunResult confine =
      cli_without_namespaces({"confine", "--mode", "workspace-write", "--workspace",
                              workspace.path(), "--", "/bin/bash", "-c",
                              "printf in > " + (workspace / "inside") + "; printf out > " +
                                  workspace.path() + "-sibling"});
  ASSERT_TRUE(confine.exited_with(0)) << confine.describe();
  const nlohmann::json confined = parse_json(confine.out);
  EXPECT_EQ(confined["backend"], "landlock");
  std::vector<std::string> argv = {deny_namespaces()};
  for (const nlohmann::json& word : confined["argv"]) argv.push_back(word.get<std::string>());
  const RunResult ran = llrt::execute(argv);
  EXPECT_EQ(llrt::read_file(workspace / "inside"), "in") << ran.describe();
  EXPECT_FALSE(llrt::exists(workspace.path() + "-sibling")) << ran.describe();
  std::remove((workspace.path() + "-sibling").c_str());

  // The filtered call's verdict does not leak into an unfiltered call (root's CLI keeps a
  // per-user cache): outside the filter the natural selection stands.
  const RunResult natural = run_cli({"confine", "--workspace", workspace.path(), "--", "true"});
  ASSERT_TRUE(natural.exited_with(0)) << natural.describe();
  EXPECT_EQ(parse_json(natural.out)["backend"], "bwrap+landlock") << natural.out;
  // ...and the reverse: a warm unfiltered verdict does not hand the filtered caller bwrap.
  const RunResult again =
      cli_without_namespaces({"confine", "--workspace", workspace.path(), "--", "true"});
  ASSERT_TRUE(again.exited_with(0)) << again.describe();
  EXPECT_EQ(parse_json(again.out)["backend"], "landlock") << again.out;
}

// --- 3. nothing usable: SANDBOX_UNAVAILABLE, nothing runs ------------------------------------

// The refusal names what is missing, so a library caller is not told to install a bubblewrap
// that is installed.
TEST_F(Selection, LibraryThrowsSandboxUnavailableWhenNeitherBackendWorks) {
  sandbox::LocalSandboxConfig config;
  config.bwrap_path = missing_bwrap_path();
  sandbox::LocalSandboxHooks hooks;
  hooks.launcher_path = dir_ / "no-landlock-run";
  sandbox::LocalSandboxProvider provider(config, hooks);
  TempDir workspace;
  const std::string marker = workspace / unique("marker");
  for (const ConfinedSandboxMode mode :
       {ConfinedSandboxMode::kReadOnly, ConfinedSandboxMode::kWorkspaceWrite}) {
    try {
      confine(provider, {"/bin/sh", "-c", "printf ran > " + marker}, mode, workspace.path());
      ADD_FAILURE() << "confine returned an argv with no usable backend";
    } catch (const sandbox::SandboxUnavailableError& error) {
      EXPECT_EQ(error.code(), sandbox::SANDBOX_UNAVAILABLE);
      EXPECT_EQ(error.mode(), mode);
      EXPECT_FALSE(error.detail().has_value());
      // The reference's message, then what is missing: each runner by path, with its fix.
      const std::string what = error.what();
      EXPECT_EQ(what.rfind(sandbox::sandbox_unavailable_message(mode, {}) + " Why: bwrap (" +
                               missing_bwrap_path() + "): ",
                           0),
                0U)
          << what;
      EXPECT_NE(what.find("; landlock (" + hooks.launcher_path + "): "), std::string::npos) << what;
      EXPECT_NE(what.find("(install bubblewrap: sudo apt-get install -y bubblewrap)"),
                std::string::npos)
          << what;
    }
  }
  EXPECT_EQ(provider.probes_run(), 2);  // the unavailable verdict is cached too
  EXPECT_FALSE(llrt::exists(marker));
}

TEST_F(Selection, CliAloneWithoutLauncherAndWithoutBwrapExits125) {
  // dsh-sandbox copied alone: no landlock-run beside it.
  const std::string lonely = dir_ / "dsh-sandbox";
  std::filesystem::copy_file(dsh_sandbox(), lonely);
  ASSERT_EQ(::chmod(lonely.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(dir_.path().c_str(), 0755), 0);
  const std::string config = write_config(R"({"bwrapPath": ")" + missing_bwrap_path() + R"("})");
  TempDir workspace;
  const std::string marker = workspace / unique("marker");
  for (const char* mode : {"read-only", "workspace-write"}) {
    const RunResult confine =
        run_cli({"confine", "--config", config, "--mode", mode, "--workspace", workspace.path(),
                 "--", "/bin/sh", "-c", "printf ran > " + marker},
                lonely);
    expect_one_cli_error_line(confine);
    EXPECT_EQ(confine.err.rfind("dsh-sandbox: sandbox mode \"" + std::string(mode) + "\"", 0), 0U)
        << confine.err;
    EXPECT_NE(confine.err.find("no sandbox backend is usable on this host; refusing to run the "
                               "command unconfined"),
              std::string::npos)
        << confine.err;
  }
  EXPECT_FALSE(llrt::exists(marker));

  const std::string launcher = dir_ / "landlock-run";
  const RunResult probe = run_cli({"probe", "--config", config}, lonely);
  EXPECT_TRUE(probe.exited_with(125)) << probe.describe();
  EXPECT_NE(
      probe.out.find("  cause: " + launcher + " cannot be started: No such file or directory"),
      std::string::npos)
      << probe.out;
  EXPECT_NE(probe.out.find("landlock-run must sit beside the dsh-sandbox binary"),
            std::string::npos)
      << probe.out;
  EXPECT_NE(probe.out.find("selected: none (SANDBOX_UNAVAILABLE)"), std::string::npos) << probe.out;

  const RunResult json = run_cli({"probe", "--json", "--config", config}, lonely);
  EXPECT_TRUE(json.exited_with(125)) << json.describe();
  const nlohmann::json report = parse_json(json.out);
  EXPECT_TRUE(report["selected"].is_null()) << json.out;
  const nlohmann::json& landlock = find(report, "landlock");
  expect_one_line_diagnosis(landlock);
  EXPECT_EQ(landlock["runner"], launcher);
  expect_one_line_diagnosis(find(report, "bwrap"));
}

// bwrap alone runs behind dsh-seccomp-exec. A copy of the CLI with neither the launcher nor the
// shim beside it: bwrap alone is unusable with the shim named as the cause and the fix, confine
// refuses (exit 125, one line), and nothing runs.
TEST_F(Selection, BwrapAloneWithoutItsExecShimIsUnusableAndNamesIt) {
  const std::string cli = dir_ / "dsh-sandbox";
  copy_program(dsh_sandbox(), cli);
  ASSERT_EQ(::chmod(dir_.path().c_str(), 0755), 0);
  TempDir workspace;
  const std::string marker = workspace / unique("marker");
  const RunResult confine = run_cli(
      {"confine", "--workspace", workspace.path(), "--", "/bin/sh", "-c", "printf ran > " + marker},
      cli);
  expect_one_cli_error_line(confine);
  EXPECT_NE(confine.err.find("no sandbox backend is usable on this host"), std::string::npos)
      << confine.err;
  EXPECT_FALSE(llrt::exists(marker));

  const RunResult json = run_cli({"probe", "--json"}, cli);
  EXPECT_TRUE(json.exited_with(125)) << json.describe();
  const nlohmann::json report = parse_json(json.out);
  EXPECT_TRUE(report["selected"].is_null()) << json.out;
  const nlohmann::json& bwrap = find(report, "bwrap");
  expect_one_line_diagnosis(bwrap);
  const std::string shim = dir_ / "dsh-seccomp-exec";
  EXPECT_NE(bwrap["cause"].get<std::string>().find(shim + " cannot be started: No such file"),
            std::string::npos)
      << bwrap.dump();
  EXPECT_NE(bwrap["fix"].get<std::string>().find("dsh-seccomp-exec"), std::string::npos);

  // With the shim beside it, the same copy confines with bwrap alone, behind the shim.
  copy_program(seccomp_exec(), shim);
  const RunResult confined =
      run_cli({"confine", "--workspace", workspace.path(), "--", "true"}, cli);
  ASSERT_TRUE(confined.exited_with(0)) << confined.describe();
  const nlohmann::json facts = parse_json(confined.out);
  EXPECT_EQ(facts["backend"], "bwrap");
  EXPECT_EQ(facts["argv"][0], shim);
  EXPECT_EQ(facts["providedFds"], nlohmann::json::array());
}

// The shim puts exactly the program the library generates on the descriptor it is told, sealed
// and at offset 0, and execs the program after `--` with it open.
TEST_F(Selection, ExecShimOpensTheLaunchersFilterOnItsDescriptor) {
  const RunResult read =
      testing::execute({seccomp_exec(), "--seccomp-fd", "5", "--", "/bin/sh", "-c",
                        "od -An -tx1 -v <&5 | tr -d ' \\n'; echo; if (echo x >&5) 2>/dev/null; "
                        "then echo writable; fi"});
  ASSERT_TRUE(read.exited_with(0)) << read.describe();
  std::string expected;
  for (const char byte : sandbox::profiles::bwrap_seccomp_program()) {
    std::array<char, 3> hex{};
    std::snprintf(hex.data(), hex.size(), "%02x",
                  static_cast<unsigned>(static_cast<unsigned char>(byte)));
    expected += hex.data();
  }
  EXPECT_EQ(read.out, expected + "\n");
  const RunResult usage =
      testing::execute({seccomp_exec(), "--seccomp-fd", "2", "--", "/bin/true"});
  EXPECT_TRUE(usage.exited_with(125)) << usage.describe();
  EXPECT_EQ(usage.err.rfind("dsh-seccomp-exec: ", 0), 0U) << usage.describe();
}

}  // namespace
}  // namespace dsh::local_it
