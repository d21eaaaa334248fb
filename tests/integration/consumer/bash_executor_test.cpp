// SPDX-License-Identifier: Apache-2.0
// SandboxBashExecutor with real processes: fake runners written as
// scripts, the real landlock-run for the out-of-band failure channel, the real provider end to
// end. Every file effect is checked from outside.
#include "consumer/bash_executor.h"
#include "consumer/render.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <variant>

#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/executor.h"
#include "dsh/sandbox/local_provider.h"
#include "profiles/profiles.h"
#include "scripts.h"
#include "temp_dir.h"
#include "wait.h"

namespace dsh::sandbox::consumer {
namespace {

using Argv = std::vector<std::string>;
using dsh::testing::TempDir;
using dsh::testing::write_script;

class FakeProvider final : public SandboxProvider {
 public:
  using Wrap = std::function<ConfinedArgv(std::span<const std::string>)>;
  // For wraps whose runners take the run's flags (status channels, --chdir).
  using RequestWrap = std::function<ConfinedArgv(const ConfineRequest&)>;
  explicit FakeProvider(Wrap wrap)
      : wrap_([wrap = std::move(wrap)](const ConfineRequest& request) {
          return wrap(request.argv);
        }) {}
  explicit FakeProvider(RequestWrap wrap) : wrap_(std::move(wrap)) {}
  int calls = 0;

 private:
  ConfinedArgv confine_validated(const ConfineRequest& request) override {
    ++calls;
    return wrap_(request);
  }
  RequestWrap wrap_;
};

profiles::RunNeeds needs_of(const ConfineRequest& request) {
  return {request.workdir, request.status_channels};
}

// A runner that runs what follows its "--" unconfined: enough to exercise classification.
constexpr const char* kPassThrough = "while [ \"$1\" != -- ]; do shift; done; shift; exec \"$@\"";

ConfinedArgv wrap_with(const std::string& runner, std::span<const std::string> argv,
                       Argv denial = {"permission denied"},
                       std::vector<RunnerFailureRule> rules = {
                           {std::vector<int>{125}, {"fake-runner: "}, std::nullopt}}) {
  ConfinedArgv confined{
      {runner, "--"}, SandboxEnforcement::kFull, std::move(denial), std::move(rules)};
  confined.argv.insert(confined.argv.end(), argv.begin(), argv.end());
  confined.backend = "fake";
  return confined;
}

class BashExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override { ::chmod(dir_.path().c_str(), 0755); }
  RunSpec spec(const std::string& command, SandboxMode mode = SandboxMode::kReadOnly) {
    RunSpec spec;
    spec.argv = {"/bin/sh", "-c", command};
    spec.policy = {mode, dir_.path(), std::nullopt};
    spec.process.workdir = dir_.path();
    spec.process.grace_ms = 200;
    return spec;
  }
  // The command's argv as given, no shell in front (the CLI's `-- ARGV`).
  RunSpec program(Argv argv) {
    RunSpec result = spec("");
    result.argv = std::move(argv);
    return result;
  }
  std::string runner(const std::string& body = kPassThrough) {
    return write_script(dir_ / "fake-runner", body);
  }
  TempDir dir_;
};

TEST_F(BashExecutorTest, DangerFullAccessNeverCallsTheProvider) {
  FakeProvider provider([](std::span<const std::string>) -> ConfinedArgv {
    throw std::logic_error("the provider must not be called");
  });
  SandboxBashExecutor executor(provider);
  const RunOutcome outcome = executor.run(spec("exit 3", SandboxMode::kDangerFullAccess));
  EXPECT_EQ(outcome.status, RunStatus(status::Exited{3}));
  EXPECT_EQ(provider.calls, 0);
  EXPECT_EQ(outcome.sandbox.mode, SandboxMode::kDangerFullAccess);
  EXPECT_FALSE(outcome.sandbox.denied);
  EXPECT_EQ(outcome.sandbox.enforcement, std::nullopt);
}

TEST_F(BashExecutorTest, ProviderUnavailabilityPropagatesUnchangedAndNothingRuns) {
  FakeProvider provider([](std::span<const std::string>) -> ConfinedArgv {
    throw SandboxUnavailableError(ConfinedSandboxMode::kReadOnly, "probe said no");
  });
  SandboxBashExecutor executor(provider);
  try {
    (void)executor.run(spec("touch " + (dir_ / "marker")));
    FAIL() << "expected SANDBOX_UNAVAILABLE";
  } catch (const SandboxUnavailableError& error) {
    EXPECT_EQ(error.detail(), "probe said no");
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "marker"));
}

// A runner failure is the RunnerFailed status of run(), and run_or_throw throws it as
// SANDBOX_UNAVAILABLE carrying the same detail.
void expect_unavailable_naming(SandboxBashExecutor& executor, const RunSpec& run_spec,
                               const std::string& part) {
  const RunOutcome outcome = executor.run(run_spec);
  const auto* failed = std::get_if<status::RunnerFailed>(&outcome.status);
  ASSERT_NE(failed, nullptr) << "expected the runner to fail, got status "
                             << outcome.status.index();
  EXPECT_FALSE(outcome.sandbox.denied);
  const std::string detail_part = part.starts_with("Runner failure: ") ? part.substr(16) : part;
  EXPECT_NE(failed->detail.find(detail_part), std::string::npos) << failed->detail;
  try {
    (void)executor.run_or_throw(run_spec);
    ADD_FAILURE() << "expected SANDBOX_UNAVAILABLE";
  } catch (const SandboxUnavailableError& error) {
    EXPECT_EQ(error.code(), "SANDBOX_UNAVAILABLE");
    EXPECT_NE(std::string(error.what()).find(part), std::string::npos) << error.what();
  }
}

TEST_F(BashExecutorTest, MissingRunnerIsUnavailableNamingItAndTheCommandNeverRan) {
  const std::string missing = dir_ / "no-such-runner";
  FakeProvider provider(
      [&](std::span<const std::string> argv) { return wrap_with(missing, argv); });
  SandboxBashExecutor executor(provider);
  expect_unavailable_naming(executor, spec("touch " + (dir_ / "marker")),
                            "Runner failure: Error: spawn " + missing + " ENOENT");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "marker"));
}

// Byte-exact: the reference's message with its spawn-failure detail, String() of Node's spawn
// error ("Error: spawn <runner> ENOENT").
TEST_F(BashExecutorTest, MissingRunnerDetailIsTheReferencesTextExactly) {
  const std::string missing = dir_ / "no-such-runner";
  FakeProvider provider(
      [&](std::span<const std::string> argv) { return wrap_with(missing, argv); });
  SandboxBashExecutor executor(provider);
  try {
    (void)executor.run_or_throw(spec("true"));
    ADD_FAILURE() << "expected SANDBOX_UNAVAILABLE";
  } catch (const SandboxUnavailableError& error) {
    EXPECT_EQ(std::string(error.what()),
              "sandbox mode \"read-only\" is requested but no sandbox backend is usable on this "
              "host; refusing to run the command unconfined. Install bubblewrap or run a "
              "Landlock-enforcing kernel (Linux), ensure sandbox-exec is usable (macOS), or "
              "ensure the ACL restricted-token runner can start (Windows) \u2014 otherwise "
              "switch the consumer to danger-full-access. Runner failure: Error: spawn " +
                  missing + " ENOENT");
  }
}

TEST_F(BashExecutorTest, NonExecutableRunnerIsUnavailable) {
  const std::string path = runner();
  ::chmod(path.c_str(), 0644);
  FakeProvider provider([&](std::span<const std::string> argv) { return wrap_with(path, argv); });
  SandboxBashExecutor executor(provider);
  expect_unavailable_naming(executor, spec("touch " + (dir_ / "marker")), "EACCES");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "marker"));
}

TEST_F(BashExecutorTest, MissingWorkdirStaysAnOrdinaryStartFailure) {
  const std::string path = runner();
  FakeProvider provider([&](std::span<const std::string> argv) { return wrap_with(path, argv); });
  SandboxBashExecutor executor(provider);
  RunSpec run_spec = spec("true");
  run_spec.process.workdir = dir_ / "missing";
  const RunOutcome outcome = executor.run(run_spec);
  const auto* not_started = std::get_if<status::NotStarted>(&outcome.status);
  ASSERT_NE(not_started, nullptr);
  EXPECT_EQ(not_started->stage, exec::SpawnStage::kWorkdir);
}

TEST_F(BashExecutorTest, RunnerFailureLineAtItsExitCodeIsUnavailableWithTheLine) {
  const std::string path = runner("echo 'fake-runner: refused the profile' >&2; exit 125");
  FakeProvider provider([&](std::span<const std::string> argv) { return wrap_with(path, argv); });
  SandboxBashExecutor executor(provider);
  expect_unavailable_naming(executor, spec("true"),
                            "Runner failure: fake-runner: refused the profile");
}

TEST_F(BashExecutorTest, RunnerFailureOutranksDenialWords) {
  const std::string path =
      runner("echo 'fake-runner: cannot open rule path: /x: Permission denied' >&2; exit 125");
  FakeProvider provider([&](std::span<const std::string> argv) { return wrap_with(path, argv); });
  SandboxBashExecutor executor(provider);
  expect_unavailable_naming(executor, spec("true"), "cannot open rule path");
}

TEST_F(BashExecutorTest, DenialNeedsANonzeroExitAndThisBackendsOwnSignatures) {
  const std::string path = runner();
  FakeProvider unix_dialect(
      [&](std::span<const std::string> argv) { return wrap_with(path, argv); });
  FakeProvider bwrap_dialect([&](std::span<const std::string> argv) {
    return wrap_with(path, argv, {"read-only file system"});
  });
  const RunSpec denied = spec("echo 'sh: /x: Permission denied' >&2; exit 1");
  EXPECT_TRUE(SandboxBashExecutor(unix_dialect).run(denied).sandbox.denied);
  EXPECT_FALSE(SandboxBashExecutor(bwrap_dialect).run(denied).sandbox.denied);
  const RunSpec clean = spec("echo 'Permission denied' >&2; exit 0");
  EXPECT_FALSE(SandboxBashExecutor(unix_dialect).run(clean).sandbox.denied);
  const RunSpec missing = spec("echo 'No such file or directory' >&2; exit 1");
  EXPECT_FALSE(SandboxBashExecutor(unix_dialect).run(missing).sandbox.denied);
}

TEST_F(BashExecutorTest, ChildExits125And126And127StayOrdinary) {
  const std::string path = runner();
  FakeProvider provider([&](std::span<const std::string> argv) { return wrap_with(path, argv); });
  SandboxBashExecutor executor(provider);
  for (const int code : {125, 126, 127}) {
    const RunOutcome outcome = executor.run(spec("exit " + std::to_string(code)));
    EXPECT_EQ(outcome.status, RunStatus(status::Exited{code}));
    EXPECT_FALSE(outcome.sandbox.denied);
  }
}

TEST_F(BashExecutorTest, FactsCarryTheBackendsEnforcement) {
  const std::string path = runner();
  FakeProvider provider([&](std::span<const std::string> argv) {
    ConfinedArgv confined = wrap_with(path, argv);
    confined.enforcement = SandboxEnforcement::kPartial;
    return confined;
  });
  const RunOutcome outcome = SandboxBashExecutor(provider).run(spec("true"));
  EXPECT_EQ(outcome.sandbox.enforcement, SandboxEnforcement::kPartial);
  EXPECT_EQ(outcome.sandbox.backend, "fake");
}

// The real launcher as the outermost runner: its failure channel is out of band.
ConfinedArgv landlock_wrap(Argv launcher_args, const ConfineRequest& request,
                           const char* launcher = LANDLOCK_RUN_PATH) {
  const std::span<const std::string> argv = request.argv;
  ConfinedArgv confined{
      profiles::landlock_run_args(needs_of(request)),
      SandboxEnforcement::kFull,
      {"permission denied"},
      {{std::vector<int>{125},
        {"landlock-run: "},
        std::vector<std::string>{"landlock-run: partial enforcement (older Landlock ABI)"}}}};
  confined.argv.insert(confined.argv.begin(), launcher);
  confined.argv.insert(confined.argv.end(), launcher_args.begin(), launcher_args.end());
  confined.argv.emplace_back("--");
  confined.argv.insert(confined.argv.end(), argv.begin(), argv.end());
  confined.backend = "landlock";
  confined.layers = {RunnerLayer::kLandlockRun};
  if (request.status_channels) confined.status_channels = {profiles::landlock_status_channel()};
  return confined;
}

TEST_F(BashExecutorTest, ACommandSpoofingALauncherLineIsAnOrdinaryFailure) {
  FakeProvider provider([](const ConfineRequest& request) {
    return landlock_wrap({"--ro", "/", "--rw", "/dev/null"}, request);
  });
  SandboxBashExecutor executor(provider);
  const RunOutcome outcome =
      executor.run(spec("echo 'landlock-run: exec failed: spoofed' >&2; exit 125"));
  EXPECT_EQ(outcome.status, RunStatus(status::Exited{125}));
  EXPECT_FALSE(outcome.sandbox.denied);
}

TEST_F(BashExecutorTest, TheLaunchersOwnRefusalIsUnavailableAndTheCommandNeverRan) {
  FakeProvider provider([](const ConfineRequest& request) {
    return landlock_wrap({"--ro", "/no/such/dsh-grant"}, request);
  });
  SandboxBashExecutor executor(provider);
  expect_unavailable_naming(executor, spec("touch " + (dir_ / "marker")),
                            "Runner failure: landlock-run: cannot open rule path");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "marker"));
}

// A launcher that behaves as the reference's knows no --status-fd: it refuses the run with its
// line and exit 125 and writes nothing on the channel. Silence is no success: the in-band rule
// names the runner's failure, never the command's exit.
TEST_F(BashExecutorTest, AReferenceLauncherGivenTheStatusChannelIsUnavailableNotTheCommandsExit) {
  FakeProvider provider([](const ConfineRequest& request) {
    return landlock_wrap({"--ro", "/", "--rw", "/dev/null"}, request, REFERENCE_LAUNCHER_PATH);
  });
  SandboxBashExecutor executor(provider);
  expect_unavailable_naming(
      executor, spec("touch " + (dir_ / "marker")),
      "Runner failure: landlock-run: usage error: unknown argument: --status-fd");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "marker"));
}

// Each failure exit of our launcher, forced in its test build, with evidence on: a runner
// failure (SANDBOX_UNAVAILABLE) naming the launcher's line, never the command's exit 125, and
// the command never ran.
TEST_F(BashExecutorTest, EveryLauncherFailureExitIsUnavailable) {
  FakeProvider provider([](const ConfineRequest& request) {
    return landlock_wrap({"--ro", "/", "--rw", "/dev/null"}, request, LANDLOCK_RUN_TESTING_PATH);
  });
  SandboxBashExecutor executor(provider);
  for (const char* stage : {"storage", "nnp", "roots", "socketpair", "pdeathsig", "child-killed",
                            "child-caps", "restrict", "filter", "parent-caps", "signalfd"}) {
    SCOPED_TRACE(stage);
    RunSpec run = spec("touch " + (dir_ / "marker"));
    run.process.env["LANDLOCK_RUN_FAULT"] = stage;
    expect_unavailable_naming(executor, run, "Runner failure: landlock-run: ");
    EXPECT_FALSE(std::filesystem::exists(dir_ / "marker"));
  }
}

// The real bwrap as the outermost runner: its exit report is the out-of-band channel.
ConfinedArgv bwrap_wrap(Argv extra, const ConfineRequest& request,
                        std::span<const std::string> argv) {
  ConfinedArgv confined{{"/usr/bin/bwrap"},
                        SandboxEnforcement::kFull,
                        {"read-only file system"},
                        {{std::nullopt, {"bwrap: "}, std::nullopt}}};
  const Argv flags = profiles::bwrap_run_args(needs_of(request));
  confined.argv.insert(confined.argv.end(), flags.begin(), flags.end());
  confined.argv.insert(confined.argv.end(),
                       {"--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--proc", "/proc",
                        "--die-with-parent"});
  confined.argv.insert(confined.argv.end(), extra.begin(), extra.end());
  confined.argv.emplace_back("--");
  confined.argv.insert(confined.argv.end(), argv.begin(), argv.end());
  confined.backend = "bwrap";
  confined.layers = {RunnerLayer::kBwrap};
  if (request.status_channels) confined.status_channels = {profiles::bwrap_status_channel()};
  return confined;
}

ConfinedArgv bwrap_wrap(Argv extra, const ConfineRequest& request) {
  return bwrap_wrap(std::move(extra), request, request.argv);
}

TEST_F(BashExecutorTest, ACommandSpoofingABwrapLineIsAnOrdinaryFailure) {
  FakeProvider provider([](const ConfineRequest& request) { return bwrap_wrap({}, request); });
  const RunOutcome outcome = SandboxBashExecutor(provider).run(
      spec("echo 'bwrap: Creating new namespace failed' >&2; exit 1"));
  EXPECT_EQ(outcome.status, RunStatus(status::Exited{1}));
  EXPECT_FALSE(outcome.sandbox.denied);
}

TEST_F(BashExecutorTest, BwrapFailingToSetUpIsUnavailableAndTheCommandNeverRan) {
  FakeProvider provider([](const ConfineRequest& request) {
    return bwrap_wrap({"--bind", "/no/such/dsh-source", "/mnt"}, request);
  });
  SandboxBashExecutor executor(provider);
  expect_unavailable_naming(executor, spec("touch " + (dir_ / "marker")),
                            "Runner failure: bwrap: Can't find source path");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "marker"));
}

// confine() returns exactly the argv that runs: the executor adds no flag of its own, and asks
// for the status channels and the workdir it will spawn in.
TEST_F(BashExecutorTest, TheSpawnedArgvIsExactlyTheOneConfineReturned) {
  const std::string record = dir_ / "argv";
  const std::string path =
      runner("printf '%s\\n' \"$@\" > " + record + "; " + std::string(kPassThrough));
  Argv returned;
  Argv handed;  // the command the provider was asked to confine
  ConfineRequest seen;
  FakeProvider provider([&](const ConfineRequest& request) {
    seen = request;
    handed.assign(request.argv.begin(), request.argv.end());
    ConfinedArgv confined = wrap_with(path, request.argv);
    confined.argv.insert(confined.argv.begin() + 1, {"--flag", "value"});
    returned = confined.argv;
    return confined;
  });
  const RunOutcome outcome = SandboxBashExecutor(provider).run(spec("exit 0"));
  EXPECT_EQ(outcome.status, RunStatus(status::Exited{0})) << outcome.err.tail;
  EXPECT_EQ(handed, (Argv{"/bin/sh", "-c", "exit 0"}));  // the spec's argv, no shell of ours
  EXPECT_TRUE(seen.status_channels);
  EXPECT_EQ(seen.workdir, dir_.path());
  std::ifstream recorded(record);
  Argv spawned{path};
  for (std::string line; std::getline(recorded, line);) spawned.push_back(line);
  EXPECT_EQ(spawned, returned);
}

// With the sandbox in place, the kernel refusing to execute the command itself means the
// command never started, as when exec refuses it unconfined: NotStarted with the program and the
// errno the runner reported out of band (127 as a shell reports it: ENOENT; 126: EACCES); neither
// a runner failure nor a denial (every mode grants execute on /).
void expect_exec_refusals(SandboxBashExecutor& executor, const RunSpec& missing,
                          const RunSpec& not_executable) {
  const RunOutcome not_found = executor.run(missing);
  EXPECT_EQ(not_found.status,
            RunStatus(status::NotStarted{exec::SpawnStage::kProgram, ENOENT, missing.argv.front()}))
      << not_found.err.tail;
  EXPECT_EQ(exit_status(not_found.status), 127);
  EXPECT_FALSE(not_found.sandbox.denied);
  const RunOutcome refused = executor.run(not_executable);
  EXPECT_EQ(refused.status, RunStatus(status::NotStarted{exec::SpawnStage::kProgram, EACCES,
                                                         not_executable.argv.front()}))
      << refused.err.tail;
  EXPECT_EQ(exit_status(refused.status), 126);
  EXPECT_FALSE(refused.sandbox.denied) << refused.err.tail;
}

TEST_F(BashExecutorTest, TheLauncherRefusedTheCommandsExecIsTheCommandsFailure) {
  FakeProvider provider([](const ConfineRequest& request) {
    return landlock_wrap({"--ro", "/", "--rw", "/dev/null"}, request);
  });
  SandboxBashExecutor executor(provider);
  const std::string noexec = write_script(dir_ / "noexec", "true");
  ASSERT_EQ(::chmod(noexec.c_str(), 0644), 0);
  expect_exec_refusals(executor, program({dir_ / "no-such-program"}), program({noexec}));
}

TEST_F(BashExecutorTest, BwrapRefusedTheCommandsExecIsTheCommandsFailure) {
  FakeProvider provider([](const ConfineRequest& request) { return bwrap_wrap({}, request); });
  SandboxBashExecutor executor(provider);
  const std::string noexec = write_script(dir_ / "noexec", "true");
  ASSERT_EQ(::chmod(noexec.c_str(), 0644), 0);
  expect_exec_refusals(executor, program({dir_ / "no-such-program"}), program({noexec}));
}

// bwrap falls back to $HOME when its view hides the caller's directory; with our --chdir the
// command never runs instead, and the result says the workdir was refused, as exec says it.
TEST_F(BashExecutorTest, AWorkdirBwrapsViewHidesIsRefusedAndTheCommandNeverRuns) {
  const std::filesystem::path out = dir_ / "out";
  const std::filesystem::path hidden = dir_ / "hidden";
  std::filesystem::create_directories(hidden / "wd");
  std::filesystem::create_directory(out);
  FakeProvider provider([&](const ConfineRequest& request) {
    return bwrap_wrap({"--bind", out, out, "--tmpfs", hidden}, request);
  });
  SandboxBashExecutor executor(provider);
  RunSpec run_spec = program({"/bin/sh", "-c", "pwd > " + (out / "marker").string()});
  run_spec.process.workdir = hidden / "wd";
  const RunOutcome outcome = executor.run(run_spec);
  const auto* not_started = std::get_if<status::NotStarted>(&outcome.status);
  ASSERT_NE(not_started, nullptr) << outcome.err.tail;
  EXPECT_EQ(not_started->stage, exec::SpawnStage::kWorkdir);
  EXPECT_EQ(not_started->error, ENOENT);
  EXPECT_EQ(not_started->path, hidden / "wd");
  EXPECT_FALSE(exit_code_of(outcome.status).has_value());
  EXPECT_FALSE(outcome.sandbox.denied);
  EXPECT_FALSE(std::filesystem::exists(out / "marker"));
  // Control: a workdir inside the view is where the command runs.
  run_spec.process.workdir = out;
  EXPECT_EQ(executor.run(run_spec).status, RunStatus(status::Exited{0}));
  std::ifstream marker(out / "marker");
  std::string line;
  EXPECT_TRUE(std::getline(marker, line) && line == out.string()) << line;
}

// The layered wrap: the launcher inside bwrap reports the command's refusal; bwrap's own exec is
// of the launcher, so a launcher it cannot execute is a broken runner, not a missing command.
ConfinedArgv layered_wrap(const std::string& launcher, const ConfineRequest& request) {
  Argv inner = profiles::landlock_run_args(needs_of(request));
  inner.insert(inner.begin(), launcher);
  inner.insert(inner.end(), {"--ro", "/", "--rw", "/dev/null", "--"});
  inner.insert(inner.end(), request.argv.begin(), request.argv.end());
  ConfinedArgv confined = bwrap_wrap({}, request, inner);
  confined.backend = "bwrap+landlock";
  confined.layers = {RunnerLayer::kBwrap, RunnerLayer::kLandlockRun};
  if (request.status_channels) {
    confined.status_channels.push_back(profiles::landlock_status_channel());
  }
  return confined;
}

TEST_F(BashExecutorTest, LayeredWrapReportsTheCommandsRefusalThroughTheLauncher) {
  FakeProvider provider(
      [](const ConfineRequest& request) { return layered_wrap(LANDLOCK_RUN_PATH, request); });
  SandboxBashExecutor executor(provider);
  const std::string noexec = write_script(dir_ / "noexec", "true");
  ASSERT_EQ(::chmod(noexec.c_str(), 0644), 0);
  expect_exec_refusals(executor, program({dir_ / "no-such-program"}), program({noexec}));
}

TEST_F(BashExecutorTest, LayeredWrapWhoseLauncherBwrapCannotExecuteIsUnavailable) {
  FakeProvider provider([](const ConfineRequest& request) {
    return layered_wrap("/no/such/dsh-landlock-run", request);
  });
  SandboxBashExecutor executor(provider);
  expect_unavailable_naming(executor, program({"/usr/bin/touch", dir_ / "marker"}),
                            "Runner failure: bwrap: execvp /no/such/dsh-landlock-run");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "marker"));
}

TEST_F(BashExecutorTest, BackgroundDenialIsClassifiedAgainstTheJobsOwnDialect) {
  const std::string path = runner();
  FakeProvider unix_dialect(
      [&](std::span<const std::string> argv) { return wrap_with(path, argv); });
  FakeProvider bwrap_dialect([&](std::span<const std::string> argv) {
    return wrap_with(path, argv, {"read-only file system"});
  });
  SandboxBashExecutor unix_executor(unix_dialect);
  SandboxBashExecutor bwrap_executor(bwrap_dialect);
  // Each job blocks reading its own FIFO until the test has seen both readers, so the two jobs
  // provably overlap; the second is let go and judged first.
  const std::string first_gate = dir_ / "first-gate";
  const std::string second_gate = dir_ / "second-gate";
  dsh::testing::make_fifo(first_gate);
  dsh::testing::make_fifo(second_gate);
  const auto denied = [&](const std::string& gate) {
    return spec("read -r _ < '" + gate + "'; echo 'sh: /x: Permission denied' >&2; exit 1");
  };
  BackgroundJob first = unix_executor.start(denied(first_gate));
  BackgroundJob second = bwrap_executor.start(denied(second_gate));  // another dialect
  const int first_writer = dsh::testing::open_fifo_when_read(first_gate);
  const int second_writer = dsh::testing::open_fifo_when_read(second_gate);
  ASSERT_GE(first_writer, 0);
  ASSERT_GE(second_writer, 0);
  ::close(second_writer);  // end of file: the second job goes on
  const RunOutcome second_outcome = second.wait();
  ::close(first_writer);
  const RunOutcome first_outcome = first.wait();
  EXPECT_TRUE(first_outcome.sandbox.denied);
  EXPECT_FALSE(second_outcome.sandbox.denied);
  EXPECT_FALSE(std::holds_alternative<status::RunnerFailed>(first_outcome.status));
}

TEST_F(BashExecutorTest, BackgroundRunnerFailureIsAFactAndOutranksDenial) {
  const std::string path =
      runner("echo 'fake-runner: cannot open rule path: /x: Permission denied' >&2; exit 125");
  FakeProvider provider([&](std::span<const std::string> argv) { return wrap_with(path, argv); });
  BackgroundJob job = SandboxBashExecutor(provider).start(spec("true"));
  const RunOutcome outcome = job.wait();
  EXPECT_TRUE(std::holds_alternative<status::RunnerFailed>(outcome.status));
  EXPECT_FALSE(outcome.sandbox.denied);
}

TEST_F(BashExecutorTest, BackgroundMissingRunnerThrowsAtStart) {
  const std::string missing = dir_ / "no-such-runner";
  FakeProvider provider(
      [&](std::span<const std::string> argv) { return wrap_with(missing, argv); });
  SandboxBashExecutor executor(provider);
  EXPECT_THROW((void)executor.start(spec("touch " + (dir_ / "marker"))), SandboxUnavailableError);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "marker"));
}

TEST_F(BashExecutorTest, BackgroundKillIsNeverADenial) {
  const std::string path = runner();
  const std::string ready = dir_ / "ready";
  FakeProvider provider([&](std::span<const std::string> argv) { return wrap_with(path, argv); });
  BackgroundJob job = SandboxBashExecutor(provider).start(
      spec("echo 'Permission denied' >&2; : > " + ready + "; exec sleep 30"));
  // The denial-like line is on stderr before the kill.
  ASSERT_TRUE(dsh::testing::wait_until([&] { return std::filesystem::exists(ready); }));
  job.kill();
  const RunOutcome outcome = job.wait();
  EXPECT_TRUE(signal_of(outcome.status).has_value());  // Aborted by kill(), ended by its signal
  EXPECT_FALSE(outcome.sandbox.denied);
  EXPECT_FALSE(std::holds_alternative<status::RunnerFailed>(outcome.status));
}

TEST_F(BashExecutorTest, BackgroundDangerFullAccessNeverCallsTheProviderAndHasNoFacts) {
  FakeProvider provider([](std::span<const std::string>) -> ConfinedArgv {
    throw std::logic_error("the provider must not be called");
  });
  BackgroundJob job = SandboxBashExecutor(provider).start(
      spec("echo 'Permission denied' >&2; exit 3", SandboxMode::kDangerFullAccess));
  const RunOutcome outcome = job.wait();
  EXPECT_EQ(outcome.status, RunStatus(status::Exited{3}));
  EXPECT_EQ(provider.calls, 0);
  EXPECT_EQ(outcome.sandbox.mode, SandboxMode::kDangerFullAccess);
  EXPECT_FALSE(outcome.sandbox.denied);
  EXPECT_EQ(outcome.sandbox.enforcement, std::nullopt);
  EXPECT_TRUE(outcome.sandbox.backend.empty());
}

TEST_F(BashExecutorTest, BackgroundLauncherRefusalIsRunnerFailedThroughTheStatusChannel) {
  FakeProvider provider([](const ConfineRequest& request) {
    return landlock_wrap({"--ro", "/no/such/dsh-grant"}, request);
  });
  BackgroundJob job = SandboxBashExecutor(provider).start(spec("touch " + (dir_ / "marker")));
  const RunOutcome outcome = job.wait();
  EXPECT_TRUE(std::holds_alternative<status::RunnerFailed>(outcome.status));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "marker"));
}

TEST_F(BashExecutorTest, BackgroundCommandTheLauncherCouldNotExecuteIsNoRunnerFailure) {
  FakeProvider provider([](const ConfineRequest& request) {
    return landlock_wrap({"--ro", "/", "--rw", "/dev/null"}, request);
  });
  BackgroundJob job = SandboxBashExecutor(provider).start(program({dir_ / "no-such-program"}));
  const RunOutcome outcome = job.wait();
  EXPECT_EQ(outcome.status, RunStatus(status::NotStarted{exec::SpawnStage::kProgram, ENOENT,
                                                         dir_ / "no-such-program"}));
  EXPECT_FALSE(std::holds_alternative<status::RunnerFailed>(outcome.status));
  EXPECT_FALSE(outcome.sandbox.denied);
}

TEST_F(BashExecutorTest, RealProviderReadOnlyDenialIsClassifiedAndTheFileAbsent) {
  LocalSandboxHooks hooks;
  hooks.launcher_path = LANDLOCK_RUN_PATH;
  LocalSandboxProvider provider({}, hooks);
  SandboxBashExecutor executor(provider);
  const RunOutcome denied = executor.run(spec("echo x > " + (dir_ / "denied")));
  EXPECT_NE(exit_code_of(denied.status).value_or(0), 0);
  EXPECT_TRUE(denied.sandbox.denied) << denied.err.tail;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "denied"));
  const RunOutcome written =
      executor.run(spec("echo x > " + (dir_ / "written"), SandboxMode::kWorkspaceWrite));
  EXPECT_EQ(written.status, RunStatus(status::Exited{0})) << written.err.tail;
  EXPECT_FALSE(written.sandbox.denied);
  std::ifstream file(dir_ / "written");
  std::string line;
  EXPECT_TRUE(std::getline(file, line) && line == "x");
}

TEST_F(BashExecutorTest, ProvidedDescriptorHoldsExactlyItsBytesFromTheStart) {
  // The runner checks descriptor 5 before running the command: its bytes (NUL included), that
  // it starts at offset 0, and that it cannot be written (a sealed memfd).
  const std::string content("seccomp\0bytes\xff", 14);
  const std::string check = runner(
      "[ \"$(od -An -tx1 <&5 | tr -d ' \\n')\" = 736563636f6d70006279746573ff ] || "
      "{ echo 'fake-runner: wrong bytes' >&2; exit 125; }\n"
      "(echo x >&5) 2>/dev/null && { echo 'fake-runner: writable' >&2; exit 125; }\n" +
      std::string(kPassThrough));
  FakeProvider provider([&](std::span<const std::string> argv) {
    ConfinedArgv confined = wrap_with(check, argv);
    confined.argv.insert(confined.argv.begin() + 1, {"--seccomp", "5"});
    confined.provided_fds = {{5, content, "test"}};
    return confined;
  });
  const RunOutcome outcome = SandboxBashExecutor(provider).run(spec("echo ran"));
  EXPECT_EQ(outcome.status, RunStatus(status::Exited{0})) << outcome.err.tail;
  EXPECT_EQ(outcome.out.tail, "ran\n");
}

TEST_F(BashExecutorTest, RealBwrapAloneLoadsTheLaunchersFilterThroughItsExecShim) {
  LocalSandboxHooks hooks;
  // A launcher that does not exist, where no confined run could plant one: bwrap alone, behind
  // the exec shim that opens its seccomp program.
  hooks.launcher_path = "/nonexistent/dsh-consumer-it/landlock-run";
  hooks.seccomp_exec_path = SECCOMP_EXEC_PATH;
  LocalSandboxProvider provider({}, hooks);
  SandboxBashExecutor executor(provider);
  // setarch -R asks personality(ADDR_NO_RANDOMIZE): refused by the filter, so the program fails.
  const RunOutcome outcome = executor.run(spec("setarch -R /bin/true; echo status=$?"));
  EXPECT_EQ(outcome.sandbox.backend, "bwrap");
  EXPECT_EQ(outcome.status, RunStatus(status::Exited{0})) << outcome.err.tail;
  EXPECT_NE(outcome.out.tail, "status=0\n") << outcome.err.tail;
  EXPECT_NE(outcome.err.tail.find("Operation not permitted"), std::string::npos)
      << outcome.err.tail;
}

// The exec shim has no status channel: when it fails, bwrap never wrote its exit, and the
// shim's own line (exit 125) is the runner failure, named as it wrote it; nothing ran.
TEST_F(BashExecutorTest, FailingExecShimOfBwrapAloneIsARunnerFailureNamingItsLine) {
  LocalSandboxHooks hooks;
  hooks.platform = "linux";
  hooks.launcher_path = "/nonexistent/dsh-consumer-it/landlock-run";
  hooks.seccomp_exec_path = write_script(dir_ / "dsh-seccomp-exec",
                                         "echo 'dsh-seccomp-exec: memfd_create: boom' >&2\n"
                                         "exit 125\n");
  // bwrap usable, Landlock not: bwrap alone, behind the failing shim (fake probes never start it).
  hooks.probe = [](BackendReport& report) {
    report.usable = report.backend == SandboxBackend::kBwrap;
    report.enforcement = SandboxEnforcement::kFull;
  };
  hooks.check_runner = [](const std::string&, std::span<const std::string>) -> Result<void> {
    return {};
  };
  LocalSandboxProvider provider({}, hooks);
  SandboxBashExecutor executor(provider);
  expect_unavailable_naming(executor, spec("touch " + (dir_ / "marker")),
                            "Runner failure: dsh-seccomp-exec: memfd_create: boom");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "marker"));
}

// One workdir rule for every consumer: none is the workspace root, a relative one is resolved
// against that root, never against the calling process's directory (moved to / here, so a
// cwd-relative answer would show). Checked by what `pwd` printed and what the runner was given.
TEST_F(BashExecutorTest, OneWorkdirRuleForTheExecutorsWhateverTheCallersDirectory) {
  std::filesystem::create_directories(dir_ / "sub");
  const std::string caller = std::filesystem::current_path().string();
  ASSERT_EQ(::chdir("/"), 0);
  std::vector<std::string> given;
  FakeProvider provider([&](const ConfineRequest& request) {
    given.push_back(request.workdir);
    return wrap_with(runner(), request.argv);
  });
  SandboxBashExecutor executor(provider);
  for (const std::string& workdir : {std::string(), std::string("sub")}) {
    for (const SandboxMode mode : {SandboxMode::kReadOnly, SandboxMode::kDangerFullAccess}) {
      RunSpec run = spec("pwd", mode);
      run.process.workdir = workdir;
      const RunOutcome outcome = executor.run(run);
      const std::string expected = workdir.empty() ? dir_.path() : (dir_ / "sub");
      EXPECT_EQ(outcome.out.tail, expected + "\n") << wire_name(mode) << " " << workdir;
    }
  }
  EXPECT_EQ(given, (std::vector<std::string>{dir_.path(), (dir_ / "sub")}));

  SandboxExecutor public_executor(provider);
  RunRequest request;
  request.argv = {"/bin/sh", "-c", "pwd"};
  request.workspace_root = dir_.path();
  request.workdir = "sub";
  const RunResult result = public_executor.run(request);
  ASSERT_EQ(::chdir(caller.c_str()), 0);
  EXPECT_EQ(result.stdout_tail, (dir_ / "sub") + "\n");
  EXPECT_EQ(given.back(), (dir_ / "sub"));
}

}  // namespace
}  // namespace dsh::sandbox::consumer
