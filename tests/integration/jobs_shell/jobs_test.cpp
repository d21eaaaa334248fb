// SPDX-License-Identifier: Apache-2.0
// Background jobs through the real CLI: `start` prints a handle, `job-output` renders each
// outcome (the texts the reference pins, byte for byte), `job-kill` and the session's end leave
// nothing of the command's tree (checked in /proc from outside), and nothing a confined run can
// do changes what job-output says. On the host's natural chain and on Landlock alone, as root
// and as nobody.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <regex>
#include <thread>

#include "cli_run_harness.h"
#include "dsh/sandbox/policy_service.h"
#include "must_run.h"
#include "paths.h"
#include "temp_dir.h"
#include "wait.h"

namespace dsh::cli_run_it {
namespace {

using sandbox::SandboxMode;
using sandbox::SandboxModeEvent;
using sandbox::SessionLog;
using sandbox::set_sandbox_mode;
using std::string;
using std::vector;

constexpr std::string_view kRunnerFailed =
    "[sandbox: the sandbox runner itself failed under read-only mode \u2014 the command did not "
    "run; this is a sandbox problem, not a command failure]";

class Jobs : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (!host_problem().empty()) DSH_SKIP_OR_FAIL(host_problem());
    ::chmod(dir_.path().c_str(), 0755);
    ws_ = dir_.mkdir("ws", 0755);
    if (!is_root()) xdg_.emplace("XDG_RUNTIME_DIR", dir_.mkdir("xdg", 0700).c_str());
  }

  static string jobs_dir() {
    if (is_root()) return "/run/dsh-sandbox/jobs";
    return string(std::getenv("XDG_RUNTIME_DIR")) + "/dsh-sandbox/jobs";
  }

  // The CLI with `args` as nobody (setpriv, when the suite runs as root), through env(1) with
  // `env` (its options and NAME=VALUE words).
  static CliResult as_nobody(const vector<string>& args, const vector<string>& env) {
    vector<string> argv;
    if (is_root()) {
      argv = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
              "--inh-caps=-all"};
    }
    argv.emplace_back("/usr/bin/env");
    argv.insert(argv.end(), env.begin(), env.end());
    const vector<string> cli_args = cli_argv(args);
    argv.insert(argv.end(), cli_args.begin(), cli_args.end());
    return testing::execute(argv);
  }

  // `start` with the backend's options, the workspace, then `tail`.
  vector<string> start_args(const vector<string>& tail) {
    vector<string> args = {"start", "--workspace", ws_};
    if (GetParam() == Backend::kLandlock) {
      const string config = dir_ / "landlock.json";
      if (!exists(config)) write_file(config, R"({"bwrapPath":"/nonexistent/dsh-jobs/bwrap"})");
      args.insert(args.end(), {"--config", config});
    }
    args.insert(args.end(), tail.begin(), tail.end());
    return args;
  }

  string start(const vector<string>& tail) {
    const CliResult started = cli(start_args(tail));
    EXPECT_TRUE(started.exited_with(0)) << started.describe();
    string handle = started.out;
    while (!handle.empty() && handle.back() == '\n') handle.pop_back();
    EXPECT_TRUE(std::regex_match(handle, std::regex("[0-9a-f]{16}"))) << started.describe();
    return handle;
  }

  // The fence nonce replaced by N.
  static string unfenced(const string& shown) {
    return std::regex_replace(shown, std::regex("<(/?)(stdout|stderr) [0-9a-f]{16}>"), "<$1$2 N>");
  }

  // job-output with the fence nonce replaced by N (its exit status is the job's: see below).
  static string output(const string& handle) { return unfenced(cli({"job-output", handle}).out); }

  // job-wait: blocks until the job has ended (60 s at most), then shows it as job-output does.
  static CliResult wait(const string& handle, const vector<string>& flags = {}) {
    vector<string> args = {"job-wait", "--timeout", "60"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.push_back(handle);
    CliResult shown = cli(args);
    EXPECT_FALSE(shown.exited_with(75)) << "the job did not end: " << shown.describe();
    shown.out = unfenced(shown.out);
    return shown;
  }

  static string ended(const string& handle) { return wait(handle).out; }

  // Waits until `count` processes whose argv starts with `prefix` exist (10 s at most).
  static bool appear(const string& prefix, std::size_t count) {
    return testing::wait_until([&] { return processes_named(prefix).size() >= count; },
                               std::chrono::seconds(30));
  }

  TempDir dir_;
  string ws_;
  std::optional<testing::ScopedEnv> xdg_;
};

TEST_P(Jobs, CompletedRenderIsExact) {
  const string handle = start({"-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(ended(handle),
            "<stdout N>\n  out\n</stdout N>\n<stderr N>\n  err\n</stderr N>\n"
            "[status: completed, exit code: 3]\n");
}

TEST_P(Jobs, DeniedWriteIsMarkedAndNothingLands) {
  const string target = ws_ + "/denied";
  const string shown = ended(start({"-c", "echo x > " + target}));
  EXPECT_NE(shown.find("\n[sandbox: file access denied under read-only mode]\n"), string::npos)
      << shown;
  EXPECT_TRUE(shown.ends_with("[status: completed, exit code: 1]\n")) << shown;
  EXPECT_FALSE(exists(target));
}

// The config's path rules and the command line's hold for a background job as for run: a secret
// they make unreadable is not in the job's output (the same job without them shows it), a path
// --deny-write protects stays unwritten, checked on the host.
// A job is held to the same policy builder as a run: under danger-full-access nothing would
// enforce a --network, so the call is refused and nothing starts (no handle, no marker).
TEST_P(Jobs, AnUnenforceableNetworkIsRefusedAndNothingStarts) {
  const string marker = ws_ + "/started";
  for (const string network : {"allow:example.com", "deny"}) {
    const CliResult refused = cli({"start", "--workspace", ws_, "--mode", "danger-full-access",
                                   "--network", network, "-c", "touch " + marker});
    EXPECT_TRUE(refused.exited_with(125)) << refused.describe();
    EXPECT_TRUE(refused.out.empty()) << refused.describe();
    EXPECT_NE(refused.err.find("nothing would enforce it"), string::npos) << refused.describe();
  }
  EXPECT_FALSE(exists(marker));
}

TEST_P(Jobs, PathRulesHoldForAJob) {
  const auto [secret, guarded] = make_rule_targets(dir_, ws_);
  nlohmann::json rules = {{"denyRead", {secret}}};
  if (GetParam() == Backend::kLandlock) rules["bwrapPath"] = "/nonexistent/dsh-jobs/bwrap";
  const string config = dir_ / "rules.json";
  write_file(config, rules.dump());
  const string command = "cat " + secret + "/key; echo x > " + guarded + "/f";
  const CliResult started = cli({"start", "--workspace", ws_, "--config", config, "--mode",
                                 "workspace-write", "--deny-write", guarded, "-c", command});
  ASSERT_TRUE(started.exited_with(0)) << started.describe();
  string handle = started.out;
  while (!handle.empty() && handle.back() == '\n') handle.pop_back();
  const string shown = ended(handle);
  EXPECT_EQ(shown.find(kSecret), string::npos) << shown;
  // Landlock grants only add access: a read-only carve-out inside a writable root is what it
  // cannot govern (confine names it in `ungoverned`), so only bwrap's is checked.
  if (GetParam() == Backend::kNatural) EXPECT_FALSE(exists(guarded + "/f")) << shown;
  // Control: without the rules, the same job reads the secret and writes the file.
  const string open = ended(start({"--mode", "workspace-write", "-c", command}));
  EXPECT_NE(open.find(kSecret), string::npos) << open;
  EXPECT_TRUE(exists(guarded + "/f")) << open;
}

TEST_P(Jobs, JobKillEndsTheWholeTree) {
  const string tag = std::to_string(7000 + (::getpid() % 1000) * 2 + static_cast<int>(GetParam()));
  const string handle = start({"-c", "sleep 1" + tag + " & setsid sleep 2" + tag + " & (sleep 3" +
                                         tag + " &); echo ready; wait"});
  ASSERT_TRUE(appear("sleep 1" + tag, 1) && appear("sleep 2" + tag, 1) &&
              appear("sleep 3" + tag, 1));
  const CliResult running = cli({"job-output", handle});
  EXPECT_TRUE(running.exited_with(75)) << running.describe();
  EXPECT_TRUE(running.out.ends_with("\n[status: running]\n")) << running.describe();
  const CliResult killed = cli({"job-kill", handle});
  ASSERT_TRUE(killed.exited_with(0)) << killed.describe();
  // job-kill returns once the job's supervisor is gone, which is after the tree was reaped.
  for (const char* which : {"sleep 1", "sleep 2", "sleep 3"}) {
    EXPECT_TRUE(processes_named(which + tag).empty()) << which << tag << " survived";
  }
  const CliResult after = cli({"job-output", handle});
  EXPECT_TRUE(after.out.ends_with("[status: killed, killed before exit]\n")) << after.describe();
  // job-kill's SIGTERM ended the command: 128+15.
  EXPECT_TRUE(after.exited_with(128 + SIGTERM)) << after.describe();
  const CliResult again = cli({"job-kill", handle});
  EXPECT_TRUE(again.exited_with(0)) << again.describe();
  EXPECT_NE(again.err.find("had already ended"), string::npos) << again.describe();
}

// start --timeout: the job's deadline ends its whole tree (checked in /proc), and job-wait,
// job-output and --json say it timed out (124); without --timeout a job has no deadline.
TEST_P(Jobs, StartTimeoutEndsTheJobsTreeAndSaysSo) {
  const string tag = std::to_string(8000 + (::getpid() % 1000) * 2 + static_cast<int>(GetParam()));
  const string handle =
      start({"--timeout", "2", "-c", "sleep 1" + tag + " & (setsid sleep 2" + tag + " &); wait"});
  ASSERT_TRUE(appear("sleep 1" + tag, 1) && appear("sleep 2" + tag, 1));
  const CliResult waited = wait(handle);
  EXPECT_TRUE(waited.exited_with(124)) << waited.describe();
  EXPECT_NE(waited.out.find("\n[timed out after 2000ms]\n"), string::npos) << waited.describe();
  for (const char* which : {"sleep 1", "sleep 2"}) {
    EXPECT_TRUE(processes_named(which + tag).empty()) << which << tag << " survived";
  }
  const nlohmann::json object = parse_json(cli({"job-output", "--json", handle}).out);
  EXPECT_EQ(object["timedOut"], true) << object.dump();
  EXPECT_EQ(object["exitStatus"], 124) << object.dump();
  // No --timeout: the job outlives run's 120 s default by design; here, at least the 2 s above.
  const string free = start({"-c", "sleep 4; echo done"});
  const CliResult done = wait(free);
  EXPECT_TRUE(done.exited_with(0)) << done.describe();
  const CliResult bad = cli(start_args({"--timeout", "forever", "-c", "true"}));
  EXPECT_TRUE(bad.exited_with(125)) << bad.describe();
  EXPECT_NE(bad.err.find("--timeout \"forever\""), string::npos) << bad.describe();
}

// The generated bash completion, as a person's bash runs it: the words typed so far, the program
// named as typed (this build's CLI), the offers one a line.
vector<string> completions(const vector<string>& words) {
  string script = "source " DSH_BASH_COMPLETION "; COMP_WORDS=(" + string(dsh_sandbox());
  for (const string& word : words) script += " '" + word + "'";
  script += "); COMP_CWORD=" + std::to_string(words.size()) +
            "; _dsh_sandbox; printf '%s\\n' \"${COMPREPLY[@]}\"";
  const CliResult done = testing::execute({"/bin/bash", "--norc", "-c", script});
  EXPECT_TRUE(done.exited_with(0)) << done.describe();
  return split_lines(done.out);
}

// Completions offer this user's job handles where a command takes one, and the cache presets
// after --allow-cache.
TEST_P(Jobs, CompletionsOfferJobHandlesAndCachePresets) {
  const string handle = start({"-c", "sleep 30"});
  for (const string command : {"job-output", "job-wait", "job-kill"}) {
    const vector<string> offered = completions({command, handle.substr(0, 6)});
    EXPECT_NE(std::find(offered.begin(), offered.end(), handle), offered.end())
        << command << ": " << offered.size() << " offered";
  }
  EXPECT_EQ(completions({"run", "--allow-cache", "np"}), vector<string>{"npm"});
  EXPECT_EQ(completions({"start", "--allow-cache", "ca"}), vector<string>{"cargo"});
  EXPECT_TRUE(cli({"job-kill", handle}).exited_with(0));
}

TEST_P(Jobs, SessionEndEndsItsJobs) {
  const string tag = std::to_string(8000 + (::getpid() % 1000) * 2 + static_cast<int>(GetParam()));
  const string first = dir_ / "first.jsonl";
  const string a = start({"--session", first, "--", "sleep", "1" + tag});
  const string b = start({"--session", first, "-c", "setsid sleep 2" + tag + "; :"});
  ASSERT_TRUE(appear("sleep 1" + tag, 1) && appear("sleep 2" + tag, 1));
  const CliResult killed = cli({"job-kill", "--session", first});
  ASSERT_TRUE(killed.exited_with(0)) << killed.describe();
  EXPECT_TRUE(processes_named("sleep 1" + tag).empty());
  EXPECT_TRUE(processes_named("sleep 2" + tag).empty());
  EXPECT_TRUE(output(a).ends_with("[status: killed, killed before exit]\n"));
  EXPECT_TRUE(output(b).ends_with("[status: killed, killed before exit]\n"));
  // The session's log removed: the session ended, and its job with it.
  const string second = dir_ / "second.jsonl";
  const string c = start({"--session", second, "--", "sleep", "3" + tag});
  ASSERT_TRUE(appear("sleep 3" + tag, 1));
  ASSERT_EQ(::unlink(second.c_str()), 0);
  EXPECT_TRUE(ended(c).ends_with("[status: killed, killed before exit]\n"));
  EXPECT_TRUE(processes_named("sleep 3" + tag).empty());
}

// A job runs where `run` would: the workspace root without --workdir (not the caller's
// directory), a relative --workdir against that root.
TEST_P(Jobs, AJobRunsWhereRunWould) {
  dir_.mkdir("ws/sub", 0755);
  const string root = std::filesystem::canonical(ws_).string();
  string by_default;
  string relative;
  {
    const testing::CwdGuard in(dir_.mkdir("elsewhere", 0755));
    by_default = ended(start({"--", "/bin/sh", "-c", "pwd -P"}));
    relative = ended(start({"--workdir", "sub", "--", "/bin/sh", "-c", "pwd -P"}));
  }
  EXPECT_EQ(by_default,
            "<stdout N>\n  " + root + "\n</stdout N>\n[status: completed, exit code: 0]\n");
  EXPECT_EQ(relative,
            "<stdout N>\n  " + root + "/sub\n</stdout N>\n[status: completed, exit code: 0]\n");
}

// The job supervisor SIGKILLed (no handler, no clean-up of its own): exec's run supervisor
// below it sees its control channel close and ends the command's whole tree, as for run.
TEST_P(Jobs, NothingSurvivesTheJobSupervisorKilled) {
  const string tag = std::to_string(6000 + (::getpid() % 1000) * 2 + static_cast<int>(GetParam()));
  const string handle = start(
      {"-c", "setsid sleep 1" + tag + " & (trap '' HUP TERM; exec sleep 2" + tag + ") & wait"});
  ASSERT_TRUE(appear("sleep 1" + tag, 1) && appear("sleep 2" + tag, 1));
  const pid_t supervisor =
      parse_json(read_file(jobs_dir() + "/" + handle + "/job.json"))["pid"].get<pid_t>();
  ASSERT_EQ(::kill(supervisor, SIGKILL), 0);
  testing::wait_until(
      [&] {
        return processes_named("sleep 1" + tag).empty() && processes_named("sleep 2" + tag).empty();
      },
      std::chrono::seconds(30));
  EXPECT_TRUE(processes_named("sleep 1" + tag).empty());
  EXPECT_TRUE(processes_named("sleep 2" + tag).empty());
  // No outcome was recorded: job-output says the supervisor is gone, the job killed.
  EXPECT_TRUE(output(handle).ends_with("[status: killed, killed before exit]\n")) << output(handle);
}

// The session's log lines of a job, parsed: the events (not the header) naming `handle`.
vector<nlohmann::json> job_lines(const string& log, const string& handle) {
  vector<nlohmann::json> lines;
  for (const string& line : split_lines(read_file(log))) {
    const nlohmann::json event = parse_json(line);
    if (event.contains("payload") && event["payload"].value("job", "") == handle) {
      lines.push_back(event);
    }
  }
  return lines;
}

// Waits until the log has `count` lines of the job (30 s at most): the settlement line is
// written right after the outcome file job-output reads.
vector<nlohmann::json> job_lines_when(const string& log, const string& handle, std::size_t count) {
  vector<nlohmann::json> lines;
  testing::wait_until(
      [&] {
        lines = job_lines(log, handle);
        return lines.size() >= count;
      },
      std::chrono::seconds(30));
  return lines;
}

// start logs as run does: a sandbox/run line before the command runs (so a workspace-write
// job's workspace counts as written at once), and the outcome at settlement; read from outside.
TEST_P(Jobs, StartLogsTheJobAndItsOutcome) {
  const string log = dir_ / "session.jsonl";
  const string handle =
      start({"--session", log, "--mode", "workspace-write", "-c", "echo hi; exit 3"});
  const vector<nlohmann::json> lines = job_lines_when(log, handle, 2);
  ASSERT_EQ(lines.size(), 2U) << read_file(log);
  EXPECT_EQ(lines[0]["type"], "sandbox/run");
  EXPECT_EQ(lines[0]["payload"]["jobState"], "started");
  EXPECT_EQ(lines[0]["payload"]["mode"], "workspace-write");
  EXPECT_EQ(lines[0]["payload"]["workspace"], ws_);
  EXPECT_EQ(lines[0]["payload"]["argv"], nlohmann::json({"bash", "-c", "echo hi; exit 3"}));
  EXPECT_EQ(lines[0]["payload"]["backend"], backend_name(GetParam()));
  EXPECT_TRUE(lines[0]["payload"]["exitCode"].is_null());
  EXPECT_EQ(lines[1]["type"], "sandbox/run");
  EXPECT_EQ(lines[1]["payload"]["jobState"], "completed");
  EXPECT_EQ(lines[1]["payload"]["exitCode"], 3);
  EXPECT_EQ(lines[1]["payload"]["denied"], false);
}

TEST_P(Jobs, StartLogsADenialAndAKill) {
  const string log = dir_ / "session.jsonl";
  const string denied = start({"--session", log, "-c", "echo x > " + ws_ + "/denied"});
  const vector<nlohmann::json> lines = job_lines_when(log, denied, 2);
  ASSERT_EQ(lines.size(), 2U) << read_file(log);
  EXPECT_EQ(lines[1]["payload"]["denied"], true) << lines[1];
  EXPECT_EQ(lines[1]["payload"]["denial"], "[sandbox: file access denied under read-only mode]");
  EXPECT_EQ(lines[1]["payload"]["exitCode"], 1);
  EXPECT_FALSE(exists(ws_ + "/denied"));

  const string tag = std::to_string(9000 + (::getpid() % 1000) * 2 + static_cast<int>(GetParam()));
  const string killed = start({"--session", log, "--", "sleep", "4" + tag});
  ASSERT_TRUE(appear("sleep 4" + tag, 1));
  // Written before the command ran: already there while it runs.
  ASSERT_EQ(job_lines(log, killed).size(), 1U) << read_file(log);
  ASSERT_TRUE(cli({"job-kill", killed}).exited_with(0));
  const vector<nlohmann::json> ended_lines = job_lines_when(log, killed, 2);
  ASSERT_EQ(ended_lines.size(), 2U) << read_file(log);
  EXPECT_EQ(ended_lines[1]["payload"]["jobState"], "killed") << ended_lines[1];
  EXPECT_TRUE(ended_lines[1]["payload"]["exitCode"].is_null()) << ended_lines[1];
}

// A runner that cannot be spawned: the job's line is a sandbox/refused, as run's would be.
TEST_P(Jobs, StartLogsARunnerFailureAsARefusal) {
  const string config = dir_ / "runner.json";
  write_file(
      config,
      R"({"runnerCommand":["/nonexistent/dsh-jobs-missing-runner"],"runnerFailureSignatures":["dsh-jobs-runner:"],"runnerAcceptsHardening":true})");
  const string log = dir_ / "session.jsonl";
  const CliResult started =
      cli({"start", "--workspace", ws_, "--config", config, "--session", log, "--", "true"});
  ASSERT_TRUE(started.exited_with(0)) << started.describe();
  const string handle = started.out.substr(0, 16);
  const vector<nlohmann::json> lines = job_lines_when(log, handle, 2);
  ASSERT_EQ(lines.size(), 2U) << read_file(log);
  EXPECT_EQ(lines[1]["type"], "sandbox/refused");
  EXPECT_EQ(lines[1]["payload"]["code"], "SANDBOX_UNAVAILABLE");
  const string reason = lines[1]["payload"]["reason"];
  EXPECT_NE(
      reason.find(" Runner failure: Error: spawn /nonexistent/dsh-jobs-missing-runner ENOENT"),
      string::npos)
      << reason;
}

// The runner itself cannot be spawned: the job starts (a background runner failure has no
// immediate error channel) and job-output shows the spawn-failed note, the runner-failed
// marker, killed.
TEST_P(Jobs, RunnerSpawnFailureSurfacesThroughJobOutput) {
  const string config = dir_ / "runner.json";
  write_file(
      config,
      R"({"runnerCommand":["/nonexistent/dsh-jobs-missing-runner"],"runnerFailureSignatures":["dsh-jobs-runner:"],"runnerAcceptsHardening":true})");
  const CliResult started = cli({"start", "--workspace", ws_, "--config", config, "--", "true"});
  ASSERT_TRUE(started.exited_with(0)) << started.describe();
  string handle = started.out.substr(0, 16);
  const string shown = ended(handle);
  EXPECT_TRUE(shown.starts_with("<stderr N>\n  spawn failed: ")) << shown;
  EXPECT_NE(shown.find("/nonexistent/dsh-jobs-missing-runner"), string::npos) << shown;
  EXPECT_TRUE(shown.ends_with("\n</stderr N>\n" + string(kRunnerFailed) +
                              "\n[status: killed, killed before exit]\n"))
      << shown;
}

TEST_P(Jobs, SpawnFailureIsKilledWithTheSpawnError) {
  EXPECT_EQ(ended(start({"--mode", "danger-full-access", "--", "/nonexistent/dsh-jobs-program"})),
            "<stderr N>\n  spawn failed: spawn /nonexistent/dsh-jobs-program ENOENT (No such file "
            "or directory)\n</stderr N>\n[status: killed, killed before exit]\n");
}

// Confined, a program the runner cannot execute never started either: the runner says so on
// its status channel, and the job settles as a spawn failure, as unconfined.
TEST_P(Jobs, AProgramTheRunnerCannotExecuteIsASpawnFailure) {
  const string shown = ended(start({"--", "/nonexistent/dsh-jobs-program"}));
  EXPECT_TRUE(
      shown.ends_with("spawn failed: spawn /nonexistent/dsh-jobs-program ENOENT (No such "
                      "file or directory)\n</stderr N>\n"
                      "[status: killed, killed before exit]\n"))
      << shown;
  EXPECT_EQ(shown.find("[sandbox: "), string::npos) << shown;
}

TEST_P(Jobs, LossyOutputNamesTheFullOutput) {
  const string shown = ended(start({"-c", "head -c 100000 /dev/zero | tr '\\0' a; echo"}));
  const std::regex note(
      "\n\\[some output was dropped from memory; full output: (/[^\\]]+)\\]\n"
      "\\[status: completed, exit code: 0\\]\n$");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(shown, match, note)) << shown.substr(shown.size() - 300);
  struct stat info {};
  ASSERT_EQ(::stat(match[1].str().c_str(), &info), 0) << match[1];
  EXPECT_EQ(info.st_size, 100001);
}

// One confined run cannot read another job's output: neither its files in the job store nor
// its kept spill (a lossy job's full output). Each holds the job's line when read from outside;
// a confined run in each mode that cats them gets none of it.
TEST_P(Jobs, AnotherJobsOutputAndSpillAreUnreadableToAConfinedRun) {
  const string secret = unique("JOB-OUTPUT-");
  const string handle =
      start({"-c", "head -c 100000 /dev/zero | tr '\\0' a; echo; echo " + secret});
  const nlohmann::json shown = parse_json(wait(handle, {"--json"}).out);
  ASSERT_EQ(shown["fullOutput"].size(), 1U) << shown.dump();
  const string spill = shown["fullOutput"][0].get<string>();
  const string stored = jobs_dir() + "/" + handle + "/stdout";
  ASSERT_NE(read_file(spill).find(secret), string::npos) << spill;
  ASSERT_NE(read_file(stored).find(secret), string::npos) << stored;
  for (const string& mode : {"read-only", "workspace-write"}) {
    vector<string> args = start_args({"--mode", mode, "-c", "cat " + spill + "; cat " + stored});
    args.front() = "run";
    const CliResult reader = cli(args);
    EXPECT_FALSE(reader.exited_with(0)) << mode << ": " << reader.describe();
    EXPECT_EQ(reader.out.find(secret), string::npos) << mode << ": " << reader.describe();
  }
}

// The job's state is trusted: a confined run cannot write it, so it cannot plant a job or change
// what job-output says about one; what the user's own processes could plant there (a symlink, a
// file others may write) is refused, never followed.
TEST_P(Jobs, ConfinedRunCannotChangeWhatJobOutputSays) {
  const string handle = start({"-c", "echo genuine; exit 4"});
  const string before = ended(handle);
  const string job = jobs_dir() + "/" + handle;
  const string outcome = read_file(job + "/outcome.json");
  const string planted = jobs_dir() + "/00000000deadbeef";
  vector<string> attack = {"run", "--mode", "workspace-write", "--workspace", ws_};
  if (GetParam() == Backend::kLandlock) {
    attack.insert(attack.end(), {"--config", dir_ / "landlock.json"});
  }
  attack.insert(
      attack.end(),
      {"-c", "echo '{\"forged\":1}' > " + job + "/outcome.json; echo forged > " + job +
                 "/stdout; mkdir " + planted + "; ln -sf /etc/passwd " + job + "/stderr; true"});
  const CliResult attacked = cli(attack);
  ASSERT_TRUE(attacked.exited_with(0)) << attacked.describe();
  EXPECT_EQ(read_file(job + "/outcome.json"), outcome);
  EXPECT_FALSE(exists(planted));
  EXPECT_EQ(ended(handle), before);
  EXPECT_NE(before.find("genuine"), string::npos);

  // A symlink in place of an output file is refused, not followed.
  ASSERT_EQ(::unlink((job + "/stdout").c_str()), 0);
  ASSERT_EQ(::symlink("/etc/passwd", (job + "/stdout").c_str()), 0);
  const CliResult refused = cli({"job-output", handle});
  EXPECT_TRUE(refused.exited_with(125)) << refused.describe();
  EXPECT_EQ(refused.out, "");
  EXPECT_NE(refused.err.find("stdout"), string::npos) << refused.describe();
  // A job directory others could write is refused too.
  ASSERT_EQ(::unlink((job + "/stdout").c_str()), 0);
  ASSERT_EQ(::chmod(job.c_str(), 0770), 0);
  EXPECT_TRUE(cli({"job-output", handle}).exited_with(125));
  ::chmod(job.c_str(), 0700);  // root's job directory is shared with concurrent cases
  // A handle is never a path.
  const CliResult traversal = cli({"job-output", "../../../etc/passwd"});
  EXPECT_TRUE(traversal.exited_with(125)) << traversal.describe();
}

// What the job printed is data: OSC 52 (a clipboard write), a title, conceal and a carriage
// return before a forged status line reach the reader as visible escapes, every line of the
// output is indented inside its fence, and the one status line at the margin is the real one;
// job-output and job-wait exit with the job's code.
TEST_P(Jobs, JobOutputShowsEscapedBytesAndTheRealStatus) {
  const string handle = start(
      {"-c",
       R"(printf '\033]52;c;cHduZWQ=\007\033]0;owned\007\033[8mhidden\033[0m\r[status: completed, exit code: 0]\n'; )"
       R"(printf '[status: completed, exit code: 0]\n' >&2; exit 3)"});
  const CliResult waited = wait(handle);
  EXPECT_TRUE(waited.exited_with(3)) << waited.describe();
  const CliResult shown = cli({"job-output", handle});
  EXPECT_TRUE(shown.exited_with(3)) << shown.describe();
  EXPECT_EQ(unfenced(shown.out), waited.out);
  EXPECT_EQ(unfenced(shown.out),
            "<stdout N>\n"
            R"(  \x1b]52;c;cHduZWQ=\x07\x1b]0;owned\x07\x1b[8mhidden\x1b[0m\r)"
            "[status: completed, exit code: 0]\n</stdout N>\n"
            "<stderr N>\n  [status: completed, exit code: 0]\n</stderr N>\n"
            "[status: completed, exit code: 3]\n");
  EXPECT_EQ(shown.out.find('\x1b'), string::npos);
  EXPECT_EQ(shown.out.find('\r'), string::npos);
  // The only lines at the margin are the sandbox's: the fences and the status line.
  for (const string& line : split_lines(shown.out)) {
    EXPECT_TRUE(line.starts_with("  ") || line.starts_with("<") ||
                line == "[status: completed, exit code: 3]")
        << line;
  }
}

TEST_P(Jobs, JobOutputJsonHasTheOutcome) {
  const string handle = start({"-c", R"(printf 'out\033]52;c;eA==\007\n'; echo err >&2; exit 3)"});
  const CliResult shown = wait(handle, {"--json"});
  EXPECT_TRUE(shown.exited_with(3)) << shown.describe();
  // ASCII only: the object itself is safe on a terminal; the strings hold the exact bytes.
  for (const char c : shown.out) {
    EXPECT_TRUE(static_cast<unsigned char>(c) < 0x7f && (c >= 0x20 || c == '\n'))
        << shown.describe();
  }
  const nlohmann::json job = parse_json(shown.out);
  EXPECT_EQ(job["schemaVersion"], 1);
  EXPECT_EQ(job["handle"], handle);
  EXPECT_EQ(job["state"], "completed");
  EXPECT_EQ(job["mode"], "read-only");
  EXPECT_EQ(job["exitCode"], 3);
  EXPECT_TRUE(job["signal"].is_null());
  EXPECT_EQ(job["runnerFailed"], false);
  EXPECT_TRUE(job["runnerExitCode"].is_null());
  EXPECT_EQ(job["denied"], false);
  EXPECT_TRUE(job["denial"].is_null());
  EXPECT_EQ(job["stdout"], "out\x1b]52;c;eA==\x07\n");
  EXPECT_EQ(job["stderr"], "err\n");
  EXPECT_EQ(job["exitStatus"], 3);
  const nlohmann::json same = parse_json(cli({"job-output", "--json", handle}).out);
  EXPECT_EQ(same, job);

  // A denial: the flag and the marker.
  const nlohmann::json denied =
      parse_json(wait(start({"-c", "echo x > " + ws_ + "/denied"}), {"--json"}).out);
  EXPECT_EQ(denied["denied"], true) << denied;
  EXPECT_EQ(denied["denial"], "[sandbox: file access denied under read-only mode]");
  EXPECT_EQ(denied["exitCode"], 1);
  EXPECT_FALSE(exists(ws_ + "/denied"));
}

// job-list names every job of this user with its state and command; job-wait blocks until the
// job ends and exits with its status, or with 75 when --timeout passes first. The job waits on
// a FIFO the test opens, so it ends exactly when the test lets it.
TEST_P(Jobs, JobListAndJobWait) {
  const string fifo = dir_ / "release";
  testing::make_fifo(fifo);
  const string handle = start({"-c", "read line < " + fifo + "; echo \"$line\"; exit 5"});
  const CliResult listed = cli({"job-list"});
  ASSERT_TRUE(listed.exited_with(0)) << listed.describe();
  EXPECT_NE(listed.out.find(handle + "  running    bash -c read line < " + fifo +
                            "; echo \"$line\"; exit 5\n"),
            string::npos)
      << listed.describe();
  const CliResult early = cli({"job-wait", "--timeout", "0.2", handle});
  EXPECT_TRUE(early.exited_with(75)) << early.describe();
  EXPECT_TRUE(early.out.ends_with("[status: running]\n")) << early.describe();

  const int writer = testing::open_fifo_when_read(fifo);
  ASSERT_GE(writer, 0);
  ASSERT_EQ(::write(writer, "go\n", 3), 3);
  ::close(writer);
  const CliResult waited = cli({"job-wait", handle});
  EXPECT_TRUE(waited.exited_with(5)) << waited.describe();
  EXPECT_EQ(unfenced(waited.out),
            "<stdout N>\n  go\n</stdout N>\n[status: completed, exit code: 5]\n");

  const CliResult json = cli({"job-list", "--json"});
  ASSERT_TRUE(json.exited_with(0)) << json.describe();
  const nlohmann::json all = parse_json(json.out);
  EXPECT_EQ(all["schemaVersion"], 1);
  std::optional<nlohmann::json> mine;
  for (const nlohmann::json& job : all["jobs"]) {
    if (job["handle"] == handle) mine = job;
  }
  ASSERT_TRUE(mine) << json.out;
  EXPECT_EQ((*mine)["state"], "completed");
  EXPECT_EQ((*mine)["exitCode"], 5);
  EXPECT_EQ((*mine)["exitStatus"], 5);
  EXPECT_EQ((*mine)["argv"],
            nlohmann::json({"bash", "-c", "read line < " + fifo + "; echo \"$line\"; exit 5"}));
  EXPECT_EQ((*mine)["workspace"], ws_);
  EXPECT_FALSE(mine->contains("stdout"));

  const CliResult bad = cli({"job-wait", "--timeout", "-1", handle});
  EXPECT_TRUE(bad.exited_with(125)) << bad.describe();
  EXPECT_NE(bad.err.find("--timeout"), string::npos) << bad.describe();
}

// The runner reported its own failure and exited 1: the job shows 1, the runner's own code,
// with the runner-failed marker (the flag kept), and job-output exits 125: the command did not
// run.
TEST_P(Jobs, ARunnerFailureShowsTheRunnersOwnCode) {
  const string runner = dir_ / "failing-runner";
  write_file(runner, "#!/bin/sh\necho 'dsh-jobs-runner: cannot set up the sandbox' >&2\nexit 1\n",
             0755);
  const string config = dir_ / "failing.json";
  write_file(
      config,
      R"({"runnerCommand":[")" + runner +
          R"("],"runnerFailureSignatures":["dsh-jobs-runner:"],"runnerAcceptsHardening":true})");
  const CliResult started = cli({"start", "--workspace", ws_, "--config", config, "--", "true"});
  ASSERT_TRUE(started.exited_with(0)) << started.describe();
  const string handle = started.out.substr(0, 16);
  const CliResult shown = wait(handle);
  EXPECT_TRUE(shown.exited_with(125)) << shown.describe();
  EXPECT_TRUE(shown.out.ends_with(string(kRunnerFailed) + "\n[status: completed, exit code: 1]\n"))
      << shown.describe();
  const nlohmann::json job = parse_json(cli({"job-output", "--json", handle}).out);
  EXPECT_EQ(job["runnerFailed"], true);
  EXPECT_EQ(job["runnerExitCode"], 1);
  EXPECT_TRUE(job["exitCode"].is_null());
  EXPECT_EQ(job["exitStatus"], 125);
}

// A user with no $XDG_RUNTIME_DIR (a container, CI) keeps jobs in /var/tmp/dsh-sandbox-jobs-UID,
// made 0700 and this user's, no symlink: start, job-list, job-wait and job-output work end to end
// as nobody. With $TMPDIR at /var/tmp (a root a confined run may write) that place is refused.
// A workspace-write job tries to plant what the person's git runs later (a commondir naming a
// config with core.fsmonitor, a post-commit hook): the launcher's supervisor refuses each at
// the call, so a real, unconfined git status and commit afterwards run nothing planted (the
// marker stays absent), and nothing had to be undone.
TEST_P(Jobs, WhatAJobPlantsForGitRunsNothingLater) {
  const string marker = dir_ / "pwned";
  ASSERT_TRUE(host_git(ws_, "init -q -b main .").exited_with(0));
  ASSERT_TRUE(host_git(ws_, "commit -q --allow-empty -m init").exited_with(0));
  const string handle =
      start({"--mode", "workspace-write", "-c", "cd " + ws_ + "\n" + git_plant_script(marker)});
  const string shown = ended(handle);
  // Only a git outside may make the marker: one inside that obeyed the plant ran confined.
  ::unlink(marker.c_str());
  const CliResult after =
      host_git(ws_, "status; git -C '" + ws_ + "' commit -q --allow-empty -m x");
  EXPECT_FALSE(exists(marker)) << "the planted command ran outside:\n" << shown << after.describe();
  EXPECT_FALSE(exists(ws_ + "/.git/commondir")) << shown;
  EXPECT_FALSE(exists(ws_ + "/.git/hooks/post-commit")) << shown;
  // Refused at the call by the launcher's supervisor: nothing was put back after the job.
  EXPECT_EQ(shown.find("git state:"), string::npos) << shown;
  const nlohmann::json json = parse_json(cli({"job-output", "--json", handle}).out);
  EXPECT_EQ(json.value("gitState", nlohmann::json::array()).dump().find("/.git/commondir"),
            string::npos)
      << json.dump();
}

// A user who never started a job has no job store yet: reading it lists nothing and names the
// missing job, instead of blaming a directory that was never made, and makes nothing.
TEST_P(Jobs, AUserWhoNeverStartedAJobListsNone) {
  string runtime;
  if (is_root()) {  // as nobody, in a private runtime directory nobody owns
    char templ[] = "/var/tmp/dsh-test-xdg-XXXXXX";
    ASSERT_NE(::mkdtemp(templ), nullptr);
    runtime = templ;
    ASSERT_EQ(::chown(runtime.c_str(), 65534, 65534), 0);
  } else {
    runtime = dir_.mkdir("fresh-xdg", 0700);
  }
  const auto as_user = [&runtime](const vector<string>& args) {
    return as_nobody(args, {"XDG_RUNTIME_DIR=" + runtime});
  };
  const CliResult listed = as_user({"job-list"});
  EXPECT_TRUE(listed.exited_with(0)) << listed.describe();
  EXPECT_EQ(listed.out, "") << listed.describe();
  const CliResult json = as_user({"job-list", "--json"});
  ASSERT_TRUE(json.exited_with(0)) << json.describe();
  EXPECT_EQ(parse_json(json.out)["jobs"], nlohmann::json::array()) << json.describe();
  const CliResult shown = as_user({"job-output", "0123456789abcdef"});
  EXPECT_TRUE(shown.exited_with(125)) << shown.describe();
  EXPECT_NE(shown.err.find("there is no job 0123456789abcdef"), string::npos) << shown.describe();
  EXPECT_FALSE(exists(runtime + "/dsh-sandbox"));
  if (is_root()) std::filesystem::remove_all(runtime);
}

TEST_P(Jobs, NobodyWithoutXdgRuntimeDirKeepsJobs) {
  const auto without_xdg = [](const vector<string>& args, const vector<string>& env = {}) {
    vector<string> options = {"-u", "XDG_RUNTIME_DIR"};
    options.insert(options.end(), env.begin(), env.end());
    return as_nobody(args, options);
  };
  const CliResult started = without_xdg(start_args({"-c", "echo from nobody; exit 4"}));
  ASSERT_TRUE(started.exited_with(0)) << started.describe();
  const string handle = started.out.substr(0, 16);
  const CliResult waited = without_xdg({"job-wait", "--timeout", "60", handle});
  EXPECT_TRUE(waited.exited_with(4)) << waited.describe();
  EXPECT_EQ(unfenced(waited.out),
            "<stdout N>\n  from nobody\n</stdout N>\n[status: completed, exit code: 4]\n");
  EXPECT_NE(without_xdg({"job-list"}).out.find(handle + "  completed  bash -c echo from nobody"),
            string::npos);
  const string base = "/var/tmp/dsh-sandbox-jobs-65534";
  struct stat info {};
  ASSERT_EQ(::lstat(base.c_str(), &info), 0);
  EXPECT_TRUE(S_ISDIR(info.st_mode));
  EXPECT_EQ(info.st_uid, 65534U);
  EXPECT_EQ(info.st_mode & 07777, 0700U);
  // The job is there (root may look in; nobody's own check is the CLI's).
  if (is_root()) EXPECT_TRUE(exists(base + "/jobs/" + handle + "/outcome.json"));

  const CliResult refused =
      without_xdg({"start", "--workspace", ws_, "--", "true"}, {"TMPDIR=/var/tmp"});
  EXPECT_TRUE(refused.exited_with(125)) << refused.describe();
  EXPECT_EQ(refused.out, "");
  EXPECT_NE(refused.err.find(base), string::npos) << refused.describe();
  // The place is checked against the roots the job's mode makes writable. Read-only makes none:
  // a read-only job whose workspace holds the place starts, as a read-only run does. A
  // workspace-write one could plant jobs there: refused, and no job directory appears.
  const auto job_count = [&base] {
    const auto entries = std::filesystem::directory_iterator(base + "/jobs");
    return std::distance(std::filesystem::begin(entries), std::filesystem::end(entries));
  };
  const CliResult read_only = without_xdg(
      {"start", "--mode", "read-only", "--workspace", "/var/tmp", "--", "echo", "read-only job"});
  ASSERT_TRUE(read_only.exited_with(0)) << read_only.describe();
  const CliResult read_only_ended =
      without_xdg({"job-wait", "--timeout", "60", read_only.out.substr(0, 16)});
  EXPECT_TRUE(read_only_ended.exited_with(0)) << read_only_ended.describe();
  EXPECT_NE(read_only_ended.out.find("read-only job"), string::npos) << read_only_ended.describe();
  const auto jobs_before = job_count();
  const CliResult writable =
      without_xdg({"start", "--mode", "workspace-write", "--workspace", "/var/tmp", "--", "true"});
  EXPECT_TRUE(writable.exited_with(125)) << writable.describe();
  EXPECT_EQ(writable.out, "");
  EXPECT_EQ(job_count(), jobs_before);
  // A workspace-write run whose workspace holds that place could plant jobs there: refused
  // before anything runs, checked from outside.
  const string marker = base + "/jobs/00000000deadbeef";
  const CliResult planting = without_xdg(
      {"run", "--mode", "workspace-write", "--workspace", "/var/tmp", "--", "mkdir", marker});
  EXPECT_TRUE(planting.exited_with(125)) << planting.describe();
  EXPECT_NE(planting.err.find(base), string::npos) << planting.describe();
  EXPECT_FALSE(exists(marker));
}

// A session made by the library, as a harness makes it, its cwd the workspace, at `mode`.
SessionLog make_session(const string& path, const string& workspace, SandboxMode mode) {
  SessionLog session = SessionLog::create(path, "s", workspace);
  set_sandbox_mode(session, mode);
  return session;
}

// A loop in the job that writes the time to `tick` every 100 ms.
string ticking(const string& tick) {
  return "while :; do date +%s%N > " + tick + "; sleep 0.1; done";
}

// `tick`'s content stays what it is for a second: nothing writes it any more.
void expect_still(const string& tick) {
  const string last = read_file(tick);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_EQ(read_file(tick), last);
}

constexpr std::string_view kNarrowed =
    "[sandbox: the session's mode changed to read-only; this job ran under workspace-write and "
    "was ended; start a new job to work under read-only]\n[status: killed, killed before exit]\n";

// A job of a session runs only as long as the session allows its mode: a switch from outside
// (the library's set_sandbox_mode) to read-only ends the workspace-write job's whole tree at
// once; its writes stop (checked on the host), and job-output and its JSON say why.
TEST_P(Jobs, ASwitchToANarrowerModeEndsTheSessionsJob) {
  const string log = dir_ / "session.jsonl";
  const SessionLog session = make_session(log, ws_, SandboxMode::kWorkspaceWrite);
  const string tick = ws_ + "/tick";
  const string handle = start({"--session", log, "-c", ticking(tick)});
  ASSERT_TRUE(testing::wait_until([&] { return exists(tick); }, std::chrono::seconds(30)));
  set_sandbox_mode(session, SandboxMode::kReadOnly);
  const CliResult shown = wait(handle);
  EXPECT_TRUE(shown.exited_with(128 + SIGKILL)) << shown.describe();
  EXPECT_TRUE(shown.out.ends_with(kNarrowed)) << shown.describe();
  expect_still(tick);
  const nlohmann::json json = parse_json(cli({"job-output", "--json", handle}).out);
  EXPECT_EQ(json["state"], "killed");
  EXPECT_EQ(json["mode"], "workspace-write");
  EXPECT_EQ(json["signal"], "SIGKILL");
  EXPECT_EQ(json["exitStatus"], 137);
  EXPECT_EQ(json["endedBySession"],
            "the session's mode changed to read-only; this job ran under workspace-write and was "
            "ended; start a new job to work under read-only");
  const vector<nlohmann::json> lines = job_lines_when(log, handle, 2);
  ASSERT_EQ(lines.size(), 2U) << read_file(log);
  EXPECT_EQ(lines[1]["payload"]["jobState"], "killed");
}

// Failing closed: a session log replaced by a symlink (to a copy that says the same), or made
// corrupt, while the job runs, ends the job as a narrowing would, and says why.
TEST_P(Jobs, ASessionLogReplacedOrCorruptEndsTheJob) {
  for (const string how : {"symlink", "corrupt"}) {
    SCOPED_TRACE(how);
    const string log = dir_ / (how + ".jsonl");
    make_session(log, ws_, SandboxMode::kWorkspaceWrite);
    const string tick = ws_ + "/tick-" + how;
    const string handle = start({"--session", log, "-c", ticking(tick)});
    ASSERT_TRUE(testing::wait_until([&] { return exists(tick); }, std::chrono::seconds(30)));
    if (how == "symlink") {
      const string copy = dir_ / "copy.jsonl";
      write_file(copy, read_file(log));
      const string link = dir_ / "link";
      ASSERT_EQ(::symlink(copy.c_str(), link.c_str()), 0);
      ASSERT_EQ(::rename(link.c_str(), log.c_str()), 0);
    } else {
      std::FILE* file = std::fopen(log.c_str(), "a");
      ASSERT_NE(file, nullptr);
      std::fputs("not a json line\n", file);
      std::fclose(file);
    }
    const CliResult shown = wait(handle);
    EXPECT_TRUE(shown.exited_with(128 + SIGKILL)) << shown.describe();
    EXPECT_NE(shown.out.find("[sandbox: the session log can no longer be read as this session's ("),
              string::npos)
        << shown.describe();
    EXPECT_NE(shown.out.find(how == "symlink" ? "(it was replaced by a symlink)" : "line 4"),
              string::npos)
        << shown.describe();
    EXPECT_NE(shown.out.find("this job ran under workspace-write and was ended, as the sandbox "
                             "fails closed]\n[status: killed, killed before exit]\n"),
              string::npos)
        << shown.describe();
    expect_still(tick);
  }
}

// A per-job grant, as run takes one for one call (--mode, the approved mode a harness passes):
// the job runs under it where the session's own mode could not write, the session's log gains
// no sandbox/mode event, and the job's record and JSON show the mode it ran under. The session
// widened and narrowed again below the grant ends a granted job.
TEST_P(Jobs, AnApprovedGrantRunsTheJobUnderItsModeAndPersistsNothing) {
  const string log = dir_ / "session.jsonl";
  const SessionLog session = make_session(log, ws_, SandboxMode::kReadOnly);
  const string granted = ws_ + "/granted";
  const string handle =
      start({"--session", log, "--mode", "workspace-write", "-c", "echo yes > " + granted});
  const CliResult shown = wait(handle);
  EXPECT_TRUE(shown.exited_with(0)) << shown.describe();
  EXPECT_EQ(read_file(granted), "yes\n");
  EXPECT_EQ(parse_json(cli({"job-output", "--json", handle}).out)["mode"], "workspace-write");
  EXPECT_EQ(parse_json(read_file(jobs_dir() + "/" + handle + "/job.json"))["mode"],
            "workspace-write");
  const vector<nlohmann::json> lines = job_lines_when(log, handle, 2);
  ASSERT_EQ(lines.size(), 2U) << read_file(log);
  EXPECT_EQ(lines[0]["payload"]["mode"], "workspace-write");
  // The session's own mode still cannot write there: the grant was for that one job.
  const string plain = ws_ + "/plain";
  EXPECT_NE(ended(start({"--session", log, "-c", "echo no > " + plain}))
                .find("[sandbox: file access denied under read-only mode]"),
            string::npos);
  EXPECT_FALSE(exists(plain));
  const std::vector<SandboxModeEvent> events = session.sandbox_mode_events();
  ASSERT_EQ(events.size(), 1U) << read_file(log);
  EXPECT_EQ(events[0].mode, SandboxMode::kReadOnly);

  // A granted job outlives the session being narrower from the start, and a widening; a switch
  // that narrows the session below the grant ends it.
  const string tick = ws_ + "/tick";
  const string running =
      start({"--session", log, "--mode", "workspace-write", "-c", ticking(tick)});
  ASSERT_TRUE(testing::wait_until([&] { return exists(tick); }, std::chrono::seconds(30)));
  set_sandbox_mode(session, SandboxMode::kWorkspaceWrite);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_TRUE(cli({"job-output", running}).exited_with(75));
  set_sandbox_mode(session, SandboxMode::kReadOnly);
  const CliResult ended_shown = wait(running);
  EXPECT_TRUE(ended_shown.exited_with(128 + SIGKILL)) << ended_shown.describe();
  EXPECT_TRUE(ended_shown.out.ends_with(kNarrowed)) << ended_shown.describe();
  expect_still(tick);
}

INSTANTIATE_TEST_SUITE_P(Backends, Jobs, ::testing::Values(Backend::kNatural, Backend::kLandlock),
                         [](const ::testing::TestParamInfo<Backend>& param) {
                           return string(param.param == Backend::kNatural ? "bwrap" : "landlock");
                         });

}  // namespace
}  // namespace dsh::cli_run_it
