// SPDX-License-Identifier: Apache-2.0
// Nothing a confined run can write decides a later run. Each attack is a sequence: a confined
// run plants (a session, a config, a symlink, a `true` on PATH), then a later run is checked
// from outside: the host file it would have written is absent, the backend unchanged, the
// refusal says what to fix. Each on the host's natural chain (bwrap+landlock) and on Landlock
// alone, as root and as nobody; the legitimate spellings keep working.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>

#include "cli_run_harness.h"
#include "must_run.h"
#include "paths.h"
#include "temp_dir.h"

namespace dsh::cli_run_it {
namespace {

using std::string;
using std::vector;

class Trust : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (!host_problem().empty()) DSH_SKIP_OR_FAIL(host_problem());
    ::chmod(dir_.path().c_str(), 0755);
    ws_ = dir_.mkdir("ws", 0755);
    outside_ = dir_ / "outside";  // beside the workspace: no confined run may create it
    // A private per-user directory (the record of writable workspaces, the verdict cache) for
    // each test, so runs share no state; root's is always /run/dsh-sandbox.
    if (!is_root()) xdg_.emplace("XDG_RUNTIME_DIR", dir_.mkdir("xdg", 0700).c_str());
  }

  static string record_path() {
    if (is_root()) return "/run/dsh-sandbox/workspaces.json";
    return string(std::getenv("XDG_RUNTIME_DIR")) + "/dsh-sandbox/workspaces.json";
  }

  // `run` and the options that select the backend: a config outside every workspace naming a
  // missing bwrap for Landlock alone.
  vector<string> Run() {
    if (GetParam() == Backend::kNatural) return {"run"};
    const string config = dir_ / "landlock.json";
    if (!exists(config)) write_file(config, R"({"bwrapPath":"/nonexistent/dsh-trust/bwrap"})");
    return {"run", "--config", config};
  }
  vector<string> Run(const vector<string>& tail) {
    vector<string> args = Run();
    args.insert(args.end(), tail.begin(), tail.end());
    return args;
  }

  // A confined workspace-write run that plants `script`'s effects in the workspace.
  void plant(const string& script) {
    const CliResult planted =
        cli(Run({"--mode", "workspace-write", "--workspace", ws_, "-c", script}));
    ASSERT_TRUE(planted.exited_with(0)) << planted.describe();
  }

  static void expect_refusal(const CliResult& result, const string& needle) {
    EXPECT_TRUE(result.exited_with(125)) << result.describe();
    EXPECT_EQ(result.out, "") << result.describe();
    ASSERT_EQ(split_lines(result.err).size(), 1U) << result.describe();
    EXPECT_EQ(result.err.rfind("dsh-sandbox: ", 0), 0U) << result.describe();
    EXPECT_NE(result.err.find(needle), string::npos) << result.describe();
  }

  TempDir dir_;
  string ws_;
  string outside_;
  std::optional<dsh::testing::ScopedEnv> xdg_;
};

// Keeps the per-user record as it was: a test that corrupts root's shared record restores it.
class RecordGuard {
 public:
  explicit RecordGuard(string path) : path_(std::move(path)) {
    if (exists(path_)) saved_ = read_file(path_);
  }
  ~RecordGuard() {
    if (saved_) {
      write_file(path_, *saved_, 0600);
      ::chmod(path_.c_str(), 0600);
    } else {
      ::unlink(path_.c_str());
    }
  }
  RecordGuard(const RecordGuard&) = delete;
  RecordGuard& operator=(const RecordGuard&) = delete;

 private:
  string path_;
  std::optional<string> saved_;
};

INSTANTIATE_TEST_SUITE_P(Backends, Trust, ::testing::Values(Backend::kNatural, Backend::kLandlock),
                         [](const ::testing::TestParamInfo<Backend>& param) {
                           return string(param.param == Backend::kNatural ? "bwrap" : "landlock");
                         });

// A session log the command could write: it switches the session to danger-full-access, and
// the next run with that session would run unconfined. The session is refused instead.
TEST_P(Trust, SessionPlantedInTheWorkspaceIsRefused) {
  const string session = ws_ + "/session.jsonl";
  plant("printf '%s\\n' '{\"type\":\"session\",\"version\":1,\"id\":\"s\",\"cwd\":\"" + ws_ +
        "\"}' '{\"type\":\"sandbox/mode\",\"payload\":{\"mode\":\"danger-full-access\"}}' > " +
        session);
  const CliResult later =
      cli(Run({"--session", session, "--workspace", ws_, "-c", "echo x > " + outside_}));
  expect_refusal(later, "Keep the session log outside the workspace, /tmp and $TMPDIR");
  EXPECT_FALSE(exists(outside_));
  // Nor may a new session be created there by a caller who names it.
  const CliResult fresh =
      cli(Run({"--session", ws_ + "/new.jsonl", "--workspace", ws_, "-c", "echo x > " + outside_}));
  expect_refusal(fresh, "cannot be trusted");
  EXPECT_FALSE(exists(ws_ + "/new.jsonl"));
  EXPECT_FALSE(exists(outside_));
}

// The session's recorded cwd never overrides an explicit --workspace, and a session kept
// outside the workspace (the legitimate place) records each run as an audit line.
TEST_P(Trust, ExplicitWorkspaceWinsOverTheSessionsCwd) {
  const string session = dir_ / "session.jsonl";
  const string other = dir_.mkdir("other", 0755);
  const CliResult first = cli(Run({"--session", session, "--mode", "workspace-write", "--workspace",
                                   other, "-c", "echo a > " + other + "/a"}));
  ASSERT_TRUE(first.exited_with(0)) << first.describe();
  // The session now records `other` as its cwd; this call names ws_.
  const CliResult second =
      cli(Run({"--session", session, "--mode", "workspace-write", "--workspace", ws_, "-c",
               "echo b > " + ws_ + "/b; echo c > " + other + "/c"}));
  EXPECT_FALSE(second.exited_with(0)) << second.describe();
  EXPECT_EQ(read_file(ws_ + "/b"), "b\n");
  EXPECT_FALSE(exists(other + "/c"));
  const vector<string> lines = split_lines(read_file(session));
  ASSERT_EQ(lines.size(), 3U) << read_file(session);
  EXPECT_NE(lines[1].find("\"workspace\":\"" + other + "\""), string::npos) << lines[1];
  EXPECT_NE(lines[2].find("\"workspace\":\"" + ws_ + "\""), string::npos) << lines[2];
  EXPECT_NE(lines[2].find("\"denied\":true"), string::npos) << lines[2];
  EXPECT_NE(lines[2].find("\"backend\":\"" + backend_name(GetParam()) + "\""), string::npos)
      << lines[2];
}

// A config the command could write: it sets the default mode to danger-full-access, or names a
// runner of its own. The next run refuses the config, even with an explicit mode.
TEST_P(Trust, ConfigPlantedInTheWorkspaceIsRefused) {
  const string config = ws_ + "/config.json";
  const string runner = ws_ + "/runner";
  plant("printf '#!/bin/sh\\nshift 99; exec \"$@\"\\n' > " + runner + "; chmod 755 " + runner +
        "; printf '{\"mode\":\"danger-full-access\"}' > " + config);
  for (const vector<string>& mode : {vector<string>{}, vector<string>{"--mode", "read-only"}}) {
    vector<string> args = {"run", "--config", config, "--workspace", ws_};
    args.insert(args.end(), mode.begin(), mode.end());
    args.insert(args.end(), {"-c", "echo x > " + outside_});
    expect_refusal(cli(args), "Keep the config outside the workspace, /tmp and $TMPDIR");
    EXPECT_FALSE(exists(outside_));
  }
  plant("printf '{\"runnerCommand\":[\"" + runner +
        "\"],\"runnerFailureSignatures\":[\"x: \"]}' > " + config);
  expect_refusal(cli({"run", "--config", config, "--mode", "read-only", "--workspace", ws_, "-c",
                      "echo x > " + outside_}),
                 "cannot be trusted");
  EXPECT_FALSE(exists(outside_));
  // confine refuses it the same way.
  const CliResult confine =
      cli({"confine", "--config", config, "--workspace", ws_, "--", "/bin/true"});
  expect_refusal(confine, "cannot be trusted");
}

// The legitimate place: a config beside the workspace, owned by the caller, is read.
TEST_P(Trust, ConfigOutsideTheWorkspaceIsUsed) {
  const string config = dir_ / "mode.json";
  write_file(config, R"({"mode":"workspace-write"})");
  vector<string> args = Run({"--workspace", ws_, "--json", "-c", "echo in > " + ws_ + "/in"});
  args.insert(args.begin() + 1, {"--config", config});
  if (GetParam() == Backend::kLandlock) {
    // One config only: merge the backend choice into it.
    write_file(config, R"({"mode":"workspace-write","bwrapPath":"/nonexistent/dsh-trust/bwrap"})");
    args = {"run", "--config", config, "--workspace",
            ws_,   "--json",   "-c",   "echo in > " + ws_ + "/in"};
  }
  const CliResult result = cli(args);
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(read_file(ws_ + "/in"), "in\n");
  EXPECT_NE(result.out.find("\"backend\":\"" + backend_name(GetParam()) + "\""), string::npos)
      << result.out;
}

// The user's config ($XDG_CONFIG_HOME/dsh-sandbox/config.json), outside every workspace, sets
// the defaults of every call; `config` names the file each key came from; --config's file comes
// over it key by key.
TEST_P(Trust, TheUsersConfigSetsTheDefaultsAndConfigSaysWhere) {
  const string home = dir_.mkdir("config-home", 0755);
  const dsh::testing::ScopedEnv config_home("XDG_CONFIG_HOME", home.c_str());
  const string user = dir_.mkdir("config-home/dsh-sandbox", 0755) + "/config.json";
  write_file(user, R"({"mode":"workspace-write"})");
  const CliResult result = cli(Run({"--workspace", ws_, "--json", "-c", "echo in > in"}));
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(read_file(ws_ + "/in"), "in\n");
  EXPECT_NE(result.out.find("\"backend\":\"" + backend_name(GetParam()) + "\""), string::npos)
      << result.out;
  vector<string> config = Run({"--workspace", ws_, "--json"});
  config[0] = "config";
  const CliResult shown = cli(config);
  ASSERT_TRUE(shown.exited_with(0)) << shown.describe();
  EXPECT_NE(shown.out.find("\"mode\":{\"value\":\"workspace-write\",\"from\":\"" + user + "\"}"),
            string::npos)
      << shown.out;
  const string named = dir_ / "read-only.json";
  write_file(named, R"({"mode":"read-only"})");
  const CliResult narrowed =
      cli({"run", "--config", named, "--workspace", ws_, "-c", "echo x > narrowed"});
  EXPECT_FALSE(narrowed.exited_with(0)) << narrowed.describe();
  EXPECT_FALSE(exists(ws_ + "/narrowed"));
}

// A user config a confined run could have written (its directory inside the workspace): the run
// that plants it succeeds, and every later call is refused rather than weaker or blind to it.
TEST_P(Trust, AUsersConfigPlantedInTheWorkspaceIsRefused) {
  const dsh::testing::ScopedEnv config_home("XDG_CONFIG_HOME", (ws_ + "/conf").c_str());
  plant(
      "mkdir -p conf/dsh-sandbox && printf '{\"mode\":\"danger-full-access\"}' > "
      "conf/dsh-sandbox/config.json");
  expect_refusal(cli(Run({"--workspace", ws_, "-c", "echo x > " + outside_})),
                 "user config file \"" + ws_ + "/conf/dsh-sandbox/config.json\" cannot be trusted");
  EXPECT_FALSE(exists(outside_));
}

// An earlier run turns WS/sub into a symlink to a directory outside; a later run asked for
// WS/sub must not write there. The session knows WS was writable, so the symlink is refused.
TEST_P(Trust, SymlinkPlantedInAnEarlierWorkspaceNeverRedirectsALaterOne) {
  const string session = dir_ / "session.jsonl";
  const string target = dir_.mkdir("home", 0755);
  const CliResult planted =
      cli(Run({"--session", session, "--mode", "workspace-write", "--workspace", ws_, "-c",
               "ln -s " + target + " " + ws_ + "/sub"}));
  ASSERT_TRUE(planted.exited_with(0)) << planted.describe();
  const CliResult later = cli(Run({"--session", session, "--mode", "workspace-write", "--workspace",
                                   ws_ + "/sub", "-c", "echo x > " + ws_ + "/sub/f"}));
  expect_refusal(later, "the symlink \"" + ws_ + "/sub\" lies beneath \"" + ws_ + "\"");
  EXPECT_FALSE(exists(target + "/f"));
  // A symlink under /tmp (writable by every Landlock run) is refused without any session.
  dsh::testing::TempDir tmp(std::filesystem::temp_directory_path());
  const string link = tmp / "link";
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  const CliResult through_tmp =
      cli(Run({"--mode", "workspace-write", "--workspace", link, "-c", "echo y > " + link + "/g"}));
  expect_refusal(through_tmp, "lies beneath");
  EXPECT_FALSE(exists(target + "/g"));
}

// The same attack with no session: the first run's workspace is in the per-user record of the
// directories confined runs could write, written before its command started, so the symlink it
// planted is refused by a later call that knows nothing else about it.
TEST_P(Trust, SymlinkPlantedWithoutASessionNeverRedirectsALaterRun) {
  const string target = dir_.mkdir("home", 0755);
  plant("ln -s " + target + " " + ws_ + "/sub");
  const CliResult later = cli(Run({"--mode", "workspace-write", "--workspace", ws_ + "/sub", "-c",
                                   "echo x > " + ws_ + "/sub/f"}));
  expect_refusal(later, "the symlink \"" + ws_ + "/sub\" lies beneath \"" + ws_ + "\"");
  EXPECT_TRUE(list_dir(target).empty());
  // A read-only call on it is refused too: the symlink is not followed whatever the mode.
  const CliResult read_only =
      cli(Run({"--mode", "read-only", "--workspace", ws_ + "/sub", "--", "/bin/true"}));
  expect_refusal(read_only, "lies beneath");
  // A command killed by its deadline still counts: the record is written before it starts.
  const string killed = dir_.mkdir("killed", 0755);
  const CliResult slow = cli(Run({"--mode", "workspace-write", "--workspace", killed, "--timeout",
                                  "2", "-c", "ln -s " + target + " " + killed + "/sub; sleep 30"}));
  ASSERT_TRUE(slow.exited_with(124)) << slow.describe();
  const CliResult after_kill = cli(Run({"--mode", "workspace-write", "--workspace", killed + "/sub",
                                        "-c", "echo x > " + killed + "/sub/k"}));
  expect_refusal(after_kill, "lies beneath");
  EXPECT_TRUE(list_dir(target).empty());
}

// `confine` starts nothing itself, but its caller runs the argv it prints: a workspace-write
// confine records its workspace as well.
TEST_P(Trust, ConfineRecordsItsWorkspace) {
  const string target = dir_.mkdir("home", 0755);
  vector<string> confine = Run();
  confine[0] = "confine";
  confine.insert(confine.end(), {"--mode", "workspace-write", "--workspace", ws_, "--", "true"});
  const CliResult confined = cli(confine);
  ASSERT_TRUE(confined.exited_with(0)) << confined.describe();
  // What the caller's spawned argv could have done: plant a symlink in the workspace.
  ASSERT_EQ(::symlink(target.c_str(), (ws_ + "/sub").c_str()), 0);
  const CliResult later = cli(Run({"--mode", "workspace-write", "--workspace", ws_ + "/sub", "-c",
                                   "echo x > " + ws_ + "/sub/f"}));
  expect_refusal(later, "lies beneath \"" + ws_ + "\"");
  EXPECT_TRUE(list_dir(target).empty());
}

// A corrupt record is never read as empty: every symlinked workspace is refused, naming the
// record, until it is fixed; a workspace spelled by its real path still works.
TEST_P(Trust, CorruptRecordRefusesSymlinkedWorkspaces) {
  const string real = dir_.mkdir("data", 0755);
  const string link = dir_ / "work";
  ASSERT_EQ(::symlink(real.c_str(), link.c_str()), 0);
  plant("true");  // the record exists
  const string record = record_path();
  ASSERT_TRUE(exists(record));
  const RecordGuard guard(record);
  write_file(record, "{\"version\":1,\"workspaces\":[\"relative\"]}", 0600);
  ::chmod(record.c_str(), 0600);
  const CliResult refused = cli(
      Run({"--mode", "workspace-write", "--workspace", link, "-c", "echo in > " + link + "/in"}));
  expect_refusal(refused, "the record \"" + record + "\" is corrupt");
  EXPECT_FALSE(exists(real + "/in"));
  const CliResult by_real_path =
      cli(Run({"--mode", "read-only", "--workspace", real, "--", "/bin/true"}));
  EXPECT_TRUE(by_real_path.exited_with(0)) << by_real_path.describe();
  // A record others could write is refused the same way.
  ::unlink(record.c_str());
  write_file(record, "{\"version\":1,\"workspaces\":[]}", 0600);
  ::chmod(record.c_str(), 0622);
  const CliResult writable =
      cli(Run({"--mode", "read-only", "--workspace", link, "--", "/bin/true"}));
  expect_refusal(writable, "is not a regular 0600 file");
}

// `~/work -> /data/work`: a symlink in a directory of the caller's, outside every writable
// root, names the workspace, and the run writes the real directory.
TEST_P(Trust, SymlinkedWorkspaceOutsideEveryWritableRootWorks) {
  const string real = dir_.mkdir("data", 0755);
  const string link = dir_ / "work";
  ASSERT_EQ(::symlink(real.c_str(), link.c_str()), 0);
  const CliResult result = cli(Run({"--mode", "workspace-write", "--workspace", link, "-c",
                                    "echo in > " + link + "/in; echo out > " + outside_}));
  EXPECT_FALSE(result.exited_with(0)) << result.describe();  // the write beside was denied
  EXPECT_EQ(read_file(real + "/in"), "in\n");
  EXPECT_FALSE(exists(outside_));
}

// A `true` planted by a confined run in the workspace's .venv/bin, first on the caller's PATH
// and in its working directory, would mark bwrap unusable if the probe ran it. The probe runs
// an absolute true in /, with a fixed PATH: the verdict is unchanged and the plant never ran.
TEST_P(Trust, TruePlantedOnPathAndInTheWorkingDirectoryDoesNotChangeTheVerdict) {
  const string marker = ws_ + "/planted-true-ran";
  const string bin = ws_ + "/.venv/bin";
  const string body = "#!/bin/sh\\necho planted > " + marker + "\\nexit 1\\n";
  plant("mkdir -p " + bin + " && printf '" + body + "' > " + bin + "/true && cp " + bin + "/true " +
        ws_ + "/true && chmod 755 " + bin + "/true " + ws_ + "/true");
  ASSERT_TRUE(exists(bin + "/true"));
  const dsh::testing::ScopedEnv path("PATH", (bin + ":.:/usr/bin:/bin").c_str());
  const dsh::testing::CwdGuard cwd(ws_);
  vector<string> probe = {"probe", "--json"};
  if (GetParam() == Backend::kLandlock) {
    probe.insert(probe.end(), {"--config", dir_ / "landlock.json"});
    (void)Run();  // writes the config
  }
  const CliResult result = cli(probe);
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_NE(result.out.find("\"selected\":\"" + backend_name(GetParam()) + "\""), string::npos)
      << result.out;
  EXPECT_FALSE(exists(marker));
  const CliResult ran = cli(Run({"--json", "--workspace", ws_, "--", "/bin/true"}));
  EXPECT_TRUE(ran.exited_with(0)) << ran.describe();
  EXPECT_NE(ran.out.find("\"backend\":\"" + backend_name(GetParam()) + "\""), string::npos)
      << ran.out;
  EXPECT_FALSE(exists(marker));
}

// The CLI's verdict cache: root's lives in /run/dsh-sandbox; another user's in
// $XDG_RUNTIME_DIR/dsh-sandbox, only while no confined run of the call could write it. A cache
// a confined run did reach (it lay in that run's workspace) and rewrote to name windows-acl is
// decoded as no verdict: a fresh probe, the backend unchanged, and a cache inside the call's own
// workspace is neither read nor created.
TEST_P(Trust, VerdictCacheLivesOnlyWhereNoConfinedRunCanWrite) {
  const vector<string> run_true = Run({"--json", "--workspace", ws_, "--", "/bin/true"});
  if (is_root()) {
    const CliResult ran = cli(run_true);
    ASSERT_TRUE(ran.exited_with(0)) << ran.describe();
    struct stat info {};
    ASSERT_EQ(::lstat("/run/dsh-sandbox", &info), 0);
    EXPECT_TRUE(S_ISDIR(info.st_mode));
    EXPECT_EQ(info.st_uid, 0U);
    EXPECT_EQ(info.st_mode & 0077, 0U);
    return;
  }
  // A private runtime directory outside every root (the legitimate /run/user/UID case).
  const string runtime = dir_.mkdir("runtime", 0700);
  {
    const dsh::testing::ScopedEnv xdg("XDG_RUNTIME_DIR", runtime.c_str());
    const CliResult ran = cli(run_true);
    ASSERT_TRUE(ran.exited_with(0)) << ran.describe();
    ASSERT_EQ(list_dir(runtime + "/dsh-sandbox").size(), 1U);
  }
  // A runtime directory inside another workspace: a call on that other workspace keeps its
  // cache there, a confined run on it rewrites the entry, and the next call decodes nothing.
  const string other = dir_.mkdir("other", 0755);
  const string exposed = dir_.mkdir("other/runtime", 0700);
  const dsh::testing::ScopedEnv xdg("XDG_RUNTIME_DIR", exposed.c_str());
  const CliResult warm = cli(run_true);
  ASSERT_TRUE(warm.exited_with(0)) << warm.describe();
  const vector<string> entries = list_dir(exposed + "/dsh-sandbox");
  ASSERT_EQ(entries.size(), 1U);
  const string entry = exposed + "/dsh-sandbox/" + entries[0];
  // A workspace-write run on `other` with this runtime directory is refused: the record of
  // writable workspaces would lie in its own workspace.
  const CliResult unrecorded =
      cli(Run({"--mode", "workspace-write", "--workspace", other, "--", "/bin/true"}));
  expect_refusal(unrecorded, "cannot record the workspace");
  // A confined run on `other` (its own per-user directory elsewhere) rewrites the entry.
  std::optional<dsh::testing::ScopedEnv> planting;
  planting.emplace("XDG_RUNTIME_DIR", runtime.c_str());
  const CliResult planted = cli(Run(
      {"--mode", "workspace-write", "--workspace", other, "-c",
       "key=$(sed 's/.*\"key\":\\(\"[^}]*\"\\),\"verdict.*/\\1/' " + entry +
           "); printf '{\"key\":%s,\"verdict\":\"{\\\\\"backend\\\\\":\\\\\"windows-acl\\\\\"}\"}' "
           "\"$key\" > " +
           entry}));
  ASSERT_TRUE(planted.exited_with(0)) << planted.describe();
  ASSERT_NE(read_file(entry).find("windows-acl"), string::npos) << read_file(entry);
  planting.reset();
  const CliResult later = cli(run_true);
  ASSERT_TRUE(later.exited_with(0)) << later.describe();
  EXPECT_NE(later.out.find("\"backend\":\"" + backend_name(GetParam()) + "\""), string::npos)
      << later.out;
  // Probed afresh, and the entry left alone: the record's anchor lists `other`, so the cache
  // directory beneath it is neither read nor written.
  EXPECT_NE(read_file(entry).find("windows-acl"), string::npos);
  // On `other` itself the cache is neither read nor created.
  std::filesystem::remove_all(exposed + "/dsh-sandbox");
  const CliResult on_other = cli(Run({"--json", "--workspace", other, "--", "/bin/true"}));
  ASSERT_TRUE(on_other.exited_with(0)) << on_other.describe();
  EXPECT_FALSE(exists(exposed + "/dsh-sandbox"));
}

}  // namespace
}  // namespace dsh::cli_run_it
