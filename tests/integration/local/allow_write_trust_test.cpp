// SPDX-License-Identifier: Apache-2.0
// An extra writable root (--allow-write, or allowWrite in the config) must never reach a file
// that decides a later run: the config, the session log, the per-user cache directory (verdicts,
// the record of writable workspaces, jobs), the runners, the CLI itself, or the directory of the
// probe's `true`. Each attack is one confined run given such a root that tries to plant or rewrite
// the file; the verdict is read from outside: the call is refused before anything runs (exit 125,
// one line naming the file), the file is byte for byte what it was, the planted marker is absent,
// and a later run still gets the same backend in the same mode. On the natural chain
// (bwrap+landlock) and on Landlock alone, as root and as nobody.
#include <sys/stat.h>
#include <unistd.h>

#include <map>

#include "local_harness.h"

namespace dsh::local_it {
namespace {

using std::string;
using std::vector;

class AllowWriteTrust : public LocalBackendTest {
 protected:
  void SetUp() override {
    LocalTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ::chmod(dir_.path().c_str(), 0755);
    workspace_ = dir_.mkdir("ws");
    config_dir_ = dir_.mkdir("conf");
    config_ = config_dir_ + "/config.json";
    set_config("");
    // Root's cache directory is /run/dsh-sandbox (private to each test: scripts/test-leg.sh);
    // everyone else's is under $XDG_RUNTIME_DIR, one per test here.
    if (!is_root()) xdg_ = dir_.mkdir("xdg", 0700);
  }

  // The config: the backend's selection (a missing bwrap for Landlock alone) plus `extra`
  // members ("\"allowWrite\": [...]").
  void set_config(const string& extra) {
    string members;
    if (GetParam() == Backend::kLandlock) {
      members = R"("bwrapPath": ")" + missing_bwrap_path() + "\"";
    }
    if (!extra.empty()) members += (members.empty() ? "" : ", ") + extra;
    llrt::write_file(config_, "{" + members + "}", 0644);
  }

  string cache_dir() const {
    return is_root() ? string("/run/dsh-sandbox") : xdg_ + "/dsh-sandbox";
  }

  vector<string> env() const {
    vector<string> out = {"HOME=" + dir_.path(), "PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
    if (!xdg_.empty()) out.push_back("XDG_RUNTIME_DIR=" + xdg_);
    return out;
  }

  // `PROGRAM run --mode workspace-write --workspace WS --config CONFIG OPTIONS... -c SCRIPT`.
  RunResult run(const vector<string>& options, const string& script,
                const string& program = DSH_SANDBOX_PATH) {
    vector<string> argv = {program,       "run",      "--mode",   "workspace-write",
                           "--workspace", workspace_, "--config", config_};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {"-c", script});
    testing::SpawnOptions spawn;
    spawn.env = env();
    return llrt::execute(argv, spawn);
  }

  // Refused before anything ran: exit 125, one error line naming `path`, the marker the
  // script would have left absent.
  void expect_refused(const RunResult& result, const string& path, const string& marker) {
    EXPECT_TRUE(result.exited_with(125)) << result.describe();
    expect_one_cli_error_line(result);
    EXPECT_NE(result.err.find(path), string::npos)
        << "the refusal names " << path << ": " << result.err;
    EXPECT_FALSE(llrt::exists(marker)) << "the command ran: " << marker;
  }

  // A later run, from a clean call: the same backend, workspace-write, and (on the natural
  // chain) full enforcement; the command's write lands in the workspace.
  void expect_later_run_unweakened(const string& program = DSH_SANDBOX_PATH) {
    const RunResult later = run({"--json"}, "echo later > " + workspace_ + "/later", program);
    ASSERT_TRUE(later.exited_with(0)) << later.describe();
    const nlohmann::json object = parse_json(later.out);
    EXPECT_EQ(object.value("backend", ""), expected_backend_name(GetParam())) << later.out;
    EXPECT_EQ(object.value("mode", ""), "workspace-write") << later.out;
    if (GetParam() == Backend::kNatural) {
      EXPECT_EQ(object.value("enforcement", ""), "full") << later.out;
    }
    EXPECT_EQ(llrt::read_file(workspace_ + "/later"), "later\n");
  }

  // name -> content of each entry of `dir` (a directory reads as empty).
  static std::map<string, string> snapshot(const string& dir) {
    std::map<string, string> files;
    for (const string& name : testing::list_dir(dir)) {
      files[name] = llrt::read_file(dir + "/" + name);
    }
    return files;
  }

  string marker(const string& name) const { return dir_ / ("planted-" + name); }

  string workspace_, config_dir_, config_, xdg_;
};

TEST_P(AllowWriteTrust, ConfigDirectoryAsWritableRootIsRefusedAndTheConfigKeepsItsBytes) {
  const string before = llrt::read_file(config_);
  const string mark = marker("config");
  const RunResult result =
      run({"--allow-write", config_dir_},
          "echo '{\"bwrapPath\":\"/nonexistent\"}' > " + config_ + "; touch " + mark);
  expect_refused(result, config_dir_, mark);
  EXPECT_EQ(llrt::read_file(config_), before);
  expect_later_run_unweakened();
}

TEST_P(AllowWriteTrust, ConfigNamingItsOwnDirectoryIsRefusedAndTheConfigKeepsItsBytes) {
  set_config(R"("allowWrite": [")" + config_dir_ + "\"]");
  const string before = llrt::read_file(config_);
  const string mark = marker("config-names-itself");
  const RunResult result = run({}, "echo '{}' > " + config_ + "; touch " + mark);
  expect_refused(result, config_dir_, mark);
  EXPECT_EQ(llrt::read_file(config_), before);
  set_config("");
  expect_later_run_unweakened();
}

TEST_P(AllowWriteTrust, SessionDirectoryAsWritableRootIsRefusedAndTheLogGainsNoModeEvent) {
  const string sessions = dir_.mkdir("sessions", 0700);
  const string log = sessions + "/s.jsonl";
  // The session exists (a first, honest run created it).
  const RunResult first = run({"--session", log}, "true");
  ASSERT_TRUE(first.exited_with(0)) << first.describe();
  const string before = llrt::read_file(log);
  const string mark = marker("session");
  const string planted =
      R"({"type":"sandbox/mode","payload":{"mode":"danger-full-access","planted":true}})";
  const RunResult result = run({"--session", log, "--allow-write", sessions},
                               "echo '" + planted + "' >> " + log + "; touch " + mark);
  expect_refused(result, log, mark);
  // The log is what the first run left plus the refusal's own audit line, nothing more.
  const string after = llrt::read_file(log);
  ASSERT_EQ(after.rfind(before, 0), 0U) << after;
  const vector<string> added = split_lines(after.substr(before.size()));
  ASSERT_EQ(added.size(), 1U) << after;
  EXPECT_EQ(parse_json(added.front()).value("type", ""), "sandbox/refused") << after;
  expect_later_run_unweakened();
}

TEST_P(AllowWriteTrust, CacheDirectoryAncestorIsRefusedAndVerdictsRecordAndJobsStayAsTheyWere) {
  // A first run leaves a verdict and the record of writable workspaces.
  const RunResult first = run({}, "true");
  ASSERT_TRUE(first.exited_with(0)) << first.describe();
  const string cache = cache_dir();
  const auto before = snapshot(cache);
  ASSERT_FALSE(before.empty()) << "no verdict or record in " << cache;
  const string ancestor = cache.substr(0, cache.rfind('/'));  // /run, or $XDG_RUNTIME_DIR
  const string mark = marker("cache");
  const string script = "for f in " + cache + "/*.json; do echo '{}' > \"$f\"; done; mkdir -p " +
                        cache + "/jobs/planted; echo x > " + cache + "/verdict-planted.json; " +
                        "touch " + mark;
  expect_refused(run({"--allow-write", ancestor}, script), cache, mark);
  expect_refused(run({"--allow-write", cache}, script), cache, mark);
  EXPECT_EQ(snapshot(cache), before);
  EXPECT_FALSE(llrt::exists(cache + "/verdict-planted.json"));
  expect_later_run_unweakened();
}

TEST_P(AllowWriteTrust, WritableRootBeneathTheCacheDirectoryIsRefused) {
  const RunResult first = run({}, "true");
  ASSERT_TRUE(first.exited_with(0)) << first.describe();
  const string cache = cache_dir();
  const string jobs = cache + "/jobs";
  if (!llrt::exists(jobs)) {
    ASSERT_EQ(::mkdir(jobs.c_str(), 0700), 0) << jobs;
  }
  const auto before = snapshot(jobs);
  const string mark = marker("jobs");
  const RunResult result =
      run({"--allow-write", jobs}, "mkdir " + jobs + "/planted; touch " + mark);
  expect_refused(result, cache, mark);
  EXPECT_EQ(snapshot(jobs), before);
  expect_later_run_unweakened();
}

TEST_P(AllowWriteTrust, DirectoryOfTheCliAndLauncherIsRefusedAndBothKeepTheirBytes) {
  // A copy of the CLI with its launcher beside it, as installed: the launcher is found there.
  const string bin = dir_.mkdir("bin");
  copy_program(DSH_SANDBOX_PATH, bin + "/dsh-sandbox");
  copy_program(llrt::launcher(), bin + "/landlock-run");
  const string cli_before = llrt::read_file(bin + "/dsh-sandbox");
  const string launcher_before = llrt::read_file(bin + "/landlock-run");
  const string mark = marker("runners");
  const string script = "printf '#!/bin/sh\\nshift; exec \"$@\"\\n' > " + bin +
                        "/landlock-run; cp /bin/true " + bin + "/dsh-sandbox; touch " + mark;
  expect_refused(run({"--allow-write", bin}, script, bin + "/dsh-sandbox"), bin, mark);
  EXPECT_TRUE(llrt::read_file(bin + "/landlock-run") == launcher_before);
  EXPECT_TRUE(llrt::read_file(bin + "/dsh-sandbox") == cli_before);
  expect_later_run_unweakened(bin + "/dsh-sandbox");
}

TEST_P(AllowWriteTrust, ProbePathDirectoryIsRefusedAndNothingIsPlantedThere) {
  // The bwrap probe runs /usr/bin/true (else /bin/true) with PATH=/usr/bin:/bin.
  for (const string dir : {"/usr/bin", "/bin"}) {
    const string planted = dir + "/" + unique("dsh-planted-true");
    const string mark = marker("path");
    const RunResult result =
        run({"--allow-write", dir}, "echo 'exit 1' > " + planted + "; touch " + mark);
    expect_refused(result, "/usr/bin/true", mark);
    EXPECT_FALSE(llrt::exists(planted)) << planted;
    ::unlink(planted.c_str());  // should the check ever fail, leave the host clean
  }
  expect_later_run_unweakened();
}

INSTANTIATE_TEST_SUITE_P(Backends, AllowWriteTrust,
                         ::testing::Values(Backend::kNatural, Backend::kLandlock), param_label);

// bwrap is the natural chain's runner only: a copy named by bwrapPath in a directory handed to
// the run as a writable root.
TEST(AllowWriteTrustBwrap, BwrapDirectoryAsWritableRootIsRefusedAndBwrapKeepsItsBytes) {
  if (const string missing = missing_host_feature(); !missing.empty()) DSH_SKIP_OR_FAIL(missing);
  TempDir root;
  ::chmod(root.path().c_str(), 0755);
  const string workspace = root.mkdir("ws");
  const string runner_dir = root.mkdir("runner");
  const string bwrap = runner_dir + "/bwrap";
  copy_program("/usr/bin/bwrap", bwrap);
  const string config = root.mkdir("conf") + "/config.json";
  llrt::write_file(config, R"({"bwrapPath": ")" + bwrap + "\"}", 0644);
  const string before = llrt::read_file(bwrap);
  const string mark = root / "planted";
  vector<string> env = {"HOME=" + root.path(), "PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
  if (!is_root()) env.push_back("XDG_RUNTIME_DIR=" + root.mkdir("xdg", 0700));
  testing::SpawnOptions spawn;
  spawn.env = env;
  const RunResult result =
      llrt::execute({DSH_SANDBOX_PATH, "run", "--mode", "workspace-write", "--workspace", workspace,
                     "--config", config, "--allow-write", runner_dir, "-c",
                     "printf '#!/bin/sh\\nexit 1\\n' > " + bwrap + "; touch " + mark},
                    spawn);
  EXPECT_TRUE(result.exited_with(125)) << result.describe();
  expect_one_cli_error_line(result);
  EXPECT_NE(result.err.find(bwrap), string::npos) << result.err;
  EXPECT_FALSE(llrt::exists(mark));
  EXPECT_TRUE(llrt::read_file(bwrap) == before);
  // The directory was recorded as one a confined run could write (before the provider refused
  // the call), so a later run without the writable root refuses that bwrap too: never weaker.
  const string later_mark = root / "later";
  const RunResult later =
      llrt::execute({DSH_SANDBOX_PATH, "run", "--mode", "workspace-write", "--workspace", workspace,
                     "--config", config, "-c", "touch " + later_mark},
                    spawn);
  EXPECT_TRUE(later.exited_with(125)) << later.describe();
  EXPECT_NE(later.err.find(bwrap), string::npos) << later.err;
  EXPECT_FALSE(llrt::exists(later_mark));
}

}  // namespace
}  // namespace dsh::local_it
