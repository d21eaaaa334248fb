// SPDX-License-Identifier: Apache-2.0
// Nothing a confined run leaves behind runs later. A writable root that reaches a home directory
// leaves every startup file there (home_startup_files()) as it was: an existing one unchanged, a
// missing one still missing. A cache preset grants only what the tool copies before use, never
// what it executes in place (npx's _npx). And every writable root a call grants is recorded: a
// config, session log, runner script or symlink a run planted in an --allow-write root decides
// nothing in a later call. Each attack runs inside; each verdict is read from outside. On the
// natural chain (bwrap+landlock) and on Landlock alone, as root and as nobody.
#include <sys/stat.h>
#include <unistd.h>

#include <map>

#include "local_harness.h"
#include "policy/path_defaults.h"

namespace dsh::local_it {
namespace {

using std::string;
using std::vector;

class Leftovers : public LocalBackendTest {
 protected:
  void SetUp() override {
    LocalTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ::chmod(dir_.path().c_str(), 0755);
    home_ = dir_.mkdir("home", 0755);
    workspace_ = dir_.mkdir("ws");
    earlier_ = dir_.mkdir("earlier");
    config_ = dir_.mkdir("conf") + "/config.json";
    llrt::write_file(config_, config_text(""), 0644);
    // Root's record is /run/dsh-sandbox (private to each test: scripts/test-leg.sh); everyone
    // else's is under $XDG_RUNTIME_DIR, one per test here.
    if (!is_root()) xdg_ = dir_.mkdir("xdg", 0700);
  }

  // A config with the backend's selection (a missing bwrap for Landlock alone) and `extra`.
  string config_text(const string& extra) const {
    string members;
    if (GetParam() == Backend::kLandlock) {
      members = R"("bwrapPath": ")" + missing_bwrap_path() + "\"";
    }
    if (!extra.empty()) members += (members.empty() ? "" : ", ") + extra;
    return "{" + members + "}";
  }

  // dsh-sandbox run [--mode MODE] --workspace WS --config CONFIG OPTIONS... -c SCRIPT
  RunResult run(const vector<string>& options, const string& script,
                const string& mode = "workspace-write", const string& config = "") {
    vector<string> argv = {DSH_SANDBOX_PATH, "run"};
    if (!mode.empty()) argv.insert(argv.end(), {"--mode", mode});
    argv.insert(argv.end(),
                {"--workspace", workspace_, "--config", config.empty() ? config_ : config});
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {"-c", script});
    testing::SpawnOptions spawn;
    spawn.env = {"HOME=" + home_, "PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
    if (!xdg_.empty()) spawn.env.push_back("XDG_RUNTIME_DIR=" + xdg_);
    return llrt::execute(argv, spawn);
  }

  // Refused before anything ran: exit 125, one error line naming `named`, `marker` absent.
  static void expect_refused(const RunResult& result, const string& named, const string& marker) {
    EXPECT_TRUE(result.exited_with(125)) << result.describe();
    expect_one_cli_error_line(result);
    EXPECT_NE(result.err.find(named), string::npos) << "names " << named << ": " << result.err;
    EXPECT_FALSE(llrt::exists(marker)) << "the command ran: " << marker;
  }

  // A run given --allow-write `earlier_` that leaves `script`'s files there.
  void plant(const string& script) {
    const RunResult planted = run({"--allow-write", earlier_}, script + " && echo planted");
    ASSERT_TRUE(planted.exited_with(0)) << planted.describe();
    ASSERT_NE(planted.out.find("planted"), string::npos) << planted.describe();
  }

  string marker(const string& name) const { return dir_ / ("ran-" + name); }

  string home_, workspace_, earlier_, config_, xdg_;
};

// Writes each startup file from inside: appends to it, creates its directory and a file in it.
string attack_every_startup_file(const string& home) {
  string script;
  for (const std::string_view file : sandbox::policy::home_startup_files()) {
    const string path = home + "/" + string(file);
    script += "mkdir -p \"$(dirname " + path + ")\" 2>/dev/null; echo planted >> " + path +
              " 2>/dev/null; mkdir -p " + path + " 2>/dev/null; echo planted > " + path +
              "/planted 2>/dev/null; ";
  }
  return script;
}

TEST_P(Leftovers, StartupFilesInAWritableHomeCannotBeCreatedOrChanged) {
  llrt::write_file(home_ + "/.bashrc", "the person's bashrc\n", 0644);
  ASSERT_EQ(::mkdir((home_ + "/.config").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((home_ + "/.config/other").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((home_ + "/.local").c_str(), 0755), 0);
  llrt::write_file(home_ + "/notes.txt", "before\n", 0644);
  const string script = attack_every_startup_file(home_) + "echo after > " + home_ +
                        "/notes.txt; echo tool > " + home_ + "/.config/other/settings; echo end";
  // Landlock's grants cannot keep a missing name from being created; the launcher's supervisor
  // refuses it at the call, on both backends.
  const RunResult result = run({"--allow-write", home_}, script);
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_NE(result.out.find("end"), string::npos) << result.describe();
  EXPECT_EQ(llrt::read_file(home_ + "/.bashrc"), "the person's bashrc\n");
  for (const std::string_view file : sandbox::policy::home_startup_files()) {
    if (file == ".bashrc") continue;
    EXPECT_FALSE(llrt::exists(home_ + "/" + string(file))) << file << " was created";
  }
  // The rest of the home stays writable; every other dot-entry (another tool's settings) is
  // read-only too, unless it is on the data list.
  EXPECT_EQ(llrt::read_file(home_ + "/notes.txt"), "after\n");
  EXPECT_FALSE(llrt::exists(home_ + "/.config/other/settings"));
}

TEST_P(Leftovers, AStartupFileSymlinkedIntoTheHomeKeepsItsTargetAndAMissingTargetStaysMissing) {
  const string dotfiles = dir_.mkdir("home/dotfiles");
  llrt::write_file(dotfiles + "/bashrc", "kept\n", 0644);
  // .zshrc's missing target seals dotfiles/: what exists there stays writable.
  llrt::write_file(dotfiles + "/other", "before\n", 0644);
  ASSERT_EQ(::symlink((dotfiles + "/bashrc").c_str(), (home_ + "/.bashrc").c_str()), 0);
  ASSERT_EQ(::symlink("dotfiles/zshrc", (home_ + "/.zshrc").c_str()), 0);
  const RunResult result =
      run({"--allow-write", home_}, "echo planted >> " + home_ + "/.bashrc; echo planted > " +
                                        home_ + "/.zshrc; rm -f " + home_ + "/.bashrc; echo ok > " +
                                        dotfiles + "/other; echo end");
  if (GetParam() == Backend::kLandlock) {
    expect_refused(result, "startup files", dotfiles + "/zshrc");
    return;
  }
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(llrt::read_file(dotfiles + "/bashrc"), "kept\n");
  EXPECT_FALSE(llrt::exists(dotfiles + "/zshrc"));
  struct stat info {};
  EXPECT_EQ(::lstat((home_ + "/.bashrc").c_str(), &info), 0);
  EXPECT_TRUE(S_ISLNK(info.st_mode));
  EXPECT_EQ(llrt::read_file(dotfiles + "/other"), "ok\n");
}

TEST_P(Leftovers, TheNpmPresetGrantsTheContentStoreButNotWhatNpxRuns) {
  const string npx_tool = home_ + "/.npm/_npx/0123abcd/node_modules/.bin/planted-tool";
  const RunResult result =
      run({"--allow-cache", "npm"},
          "mkdir -p \"$(dirname " + npx_tool + ")\" && printf '#!/bin/sh\\ntouch " + marker("npx") +
              "\\n' > " + npx_tool + "; chmod +x " + npx_tool + "; echo data > " + home_ +
              "/.npm/_cacache/written; echo end");
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_NE(result.out.find("end"), string::npos) << result.describe();
  EXPECT_EQ(llrt::read_file(home_ + "/.npm/_cacache/written"), "data\n");
  EXPECT_FALSE(llrt::exists(home_ + "/.npm/_npx/0123abcd")) << "npx's next run would execute it";
  // What an unconfined npx would run from its cache: nothing is there, so nothing ran.
  const RunResult npx_style = llrt::execute({"/bin/sh", "-c", npx_tool + " || true"});
  EXPECT_FALSE(llrt::exists(marker("npx")));
  (void)npx_style;
}

TEST_P(Leftovers, CargoAndGoPresetsLeaveWhatTheToolBuildsInPlaceReadOnly) {
  const string cargo = home_ + "/.cargo";
  const string mod = home_ + "/go/pkg/mod";
  const RunResult result =
      run({"--allow-cache", "cargo,go"},
          "mkdir -p " + cargo + "/registry/src/index/evil-1.0 && echo planted > " + cargo +
              "/registry/src/index/evil-1.0/build.rs; mkdir -p " + cargo +
              "/git/checkouts/evil && echo planted > " + cargo + "/git/checkouts/evil/build.rs; " +
              "mkdir -p " + mod + "/example.com/evil@v1.0.0 && echo planted > " + mod +
              "/example.com/evil@v1.0.0/main.go; echo data > " + cargo +
              "/registry/cache/x.crate; echo data > " + mod + "/cache/download/x.zip; echo end");
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_FALSE(llrt::exists(cargo + "/registry/src/index/evil-1.0"));
  EXPECT_FALSE(llrt::exists(cargo + "/git/checkouts/evil"));
  EXPECT_FALSE(llrt::exists(mod + "/example.com/evil@v1.0.0"));
  EXPECT_EQ(llrt::read_file(cargo + "/registry/cache/x.crate"), "data\n");
  EXPECT_EQ(llrt::read_file(mod + "/cache/download/x.zip"), "data\n");
}

TEST_P(Leftovers, PresetsWhoseToolRunsItsCacheInPlaceAreRefused) {
  for (const string name : {"gradle", "maven", "pnpm", "bun", "uv"}) {
    const string mark = marker(name);
    expect_refused(run({"--allow-cache", name}, "touch " + mark), "cache preset is refused", mark);
  }
}

TEST_P(Leftovers, AConfigPlantedInAnEarlierWritableRootIsNotTrusted) {
  const string mark = marker("runner-command");
  plant(
      "printf '%s' '{\"runnerFailureSignatures\": [\"runner: \"], \"runnerCommand\": "
      "[\"/bin/sh\", \"" +
      earlier_ + "/runner.sh\"]}' > " + earlier_ + "/config.json && printf '#!/bin/sh\\ntouch " +
      mark + "\\n' > " + earlier_ + "/runner.sh");
  const RunResult result = run({}, "touch " + mark, "read-only", earlier_ + "/config.json");
  expect_refused(result, earlier_, mark);
  EXPECT_NE(result.err.find("cannot be trusted"), string::npos) << result.err;
}

TEST_P(Leftovers, ASessionPlantedInAnEarlierWritableRootCannotWidenTheMode) {
  const string log = earlier_ + "/s.jsonl";
  const RunResult honest = run({"--session", log}, "true");
  ASSERT_TRUE(honest.exited_with(0)) << honest.describe();
  plant(R"(echo '{"type":"sandbox/mode","payload":{"mode":"danger-full-access"}}' >> )" + log);
  const string mark = marker("session");
  // No --mode: the session's last mode event would decide, and it says danger-full-access.
  expect_refused(run({"--session", log}, "touch " + mark, ""), log, mark);
}

TEST_P(Leftovers, ARunnerScriptArgumentInAnEarlierWritableRootIsNotTrusted) {
  const string script = earlier_ + "/runner.sh";
  llrt::write_file(script, "#!/bin/sh\nexec /usr/bin/bwrap \"$@\"\n", 0755);
  const string config = dir_ / "conf/runner.json";
  llrt::write_file(config,
                   R"({"runnerFailureSignatures": ["runner: "], "runnerCommand": ["/bin/sh", ")" +
                       script + "\"]}",
                   0644);
  const string mark = marker("runner-script");
  plant("printf '#!/bin/sh\\ntouch " + mark + "\\n' > " + script);
  expect_refused(run({}, "true", "read-only", config), script, mark);
}

TEST_P(Leftovers, ASymlinkPlantedInAnEarlierWritableRootRedirectsNoLaterRoot) {
  const string victim = dir_.mkdir("victim");
  plant("ln -s " + victim + " " + earlier_ + "/link");
  const string mark = marker("symlink");
  for (const vector<string>& options : {vector<string>{"--allow-write", earlier_ + "/link"},
                                        vector<string>{"--deny-write", earlier_ + "/link"}}) {
    SCOPED_TRACE(options.front());
    expect_refused(run(options, "touch " + victim + "/written; touch " + mark), earlier_ + "/link",
                   mark);
  }
  EXPECT_FALSE(llrt::exists(victim + "/written"));
  // The workspace obeys the same rule.
  workspace_ = earlier_ + "/link";
  expect_refused(run({}, "touch written; touch " + mark), earlier_ + "/link", mark);
  EXPECT_FALSE(llrt::exists(victim + "/written"));
}

// The verdict cache decides which backend the next call uses. A workspace-write run with an
// extra writable root tries to plant a weaker verdict (the natural chain's "bwrap" made
// "landlock") over each entry of the real cache, under a new name there, and in cache-shaped
// places of what it may write (the workspace and the extra root). The cache lies where no
// confined mode can write: from outside, its entries keep their bytes and no new one appears,
// and the next call, in each mode, gets the backend and enforcement it got before the attack.
// Control: the same bytes written from outside do downgrade the next call on the natural chain.
TEST_P(Leftovers, AVerdictPlantedByAnEarlierRunCannotWeakenALaterCall) {
  const auto facts = [&](const string& mode) {
    const RunResult result = run({"--json"}, "true", mode);
    EXPECT_TRUE(result.exited_with(0)) << result.describe();
    const auto json = parse_json(result.out);
    return json.value("backend", "") + "/" + json.value("enforcement", "");
  };
  const vector<string> modes = {"read-only", "workspace-write"};
  vector<string> before;
  for (const string& mode : modes) before.push_back(facts(mode));
  const string cache = is_root() ? "/run/dsh-sandbox" : xdg_ + "/dsh-sandbox";
  std::map<string, string> entries;
  for (const string& name : testing::list_dir(cache)) {
    if (name.starts_with("verdict-")) entries[name] = llrt::read_file(cache + "/" + name);
  }
  ASSERT_FALSE(entries.empty()) << "no verdict cached in " << cache;
  const auto weaker = [](string bytes) {
    const string bwrap = R"(\"backend\":\"bwrap\")";
    const std::size_t at = bytes.find(bwrap);
    if (at != string::npos) bytes.replace(at, bwrap.size(), R"(\"backend\":\"landlock\")");
    return bytes;
  };
  string script = "cd " + workspace_ + "\n";
  for (const auto& [name, bytes] : entries) {
    llrt::write_file(workspace_ + "/" + name, weaker(bytes), 0600);
    script += "cat " + name + " > " + cache + "/" + name + "; cp " + name + " " + cache +
              "/verdict-0123456789abcdef.json\n";
    for (const string& root : {workspace_, earlier_}) {
      script +=
          "mkdir -p -m 700 " + root + "/dsh-sandbox; cp " + name + " " + root + "/dsh-sandbox/\n";
    }
  }
  plant(script + "true");
  EXPECT_TRUE(llrt::exists(earlier_ + "/dsh-sandbox/" + entries.begin()->first));
  for (const auto& [name, bytes] : entries) {
    EXPECT_EQ(llrt::read_file(cache + "/" + name), bytes) << name;
  }
  EXPECT_FALSE(llrt::exists(cache + "/verdict-0123456789abcdef.json"));
  for (std::size_t i = 0; i < modes.size(); ++i) {
    EXPECT_EQ(facts(modes[i]), before[i]) << modes[i];
  }
  if (GetParam() != Backend::kNatural) return;
  for (const auto& [name, bytes] : entries) {
    llrt::write_file(cache + "/" + name, weaker(bytes), 0600);
  }
  EXPECT_NE(facts("workspace-write"), before[1]) << "the planted verdict would not weaken a call";
}

// $XDG_RUNTIME_DIR chooses where a user other than root keeps the verdict cache, the record of
// writable roots and the jobs, and a caller may point it into a directory an earlier run could
// write. A workspace-write run (the caller's usual $XDG_RUNTIME_DIR) plants there, under the
// workspace's xdg/, a weaker verdict for every cached one, a record that forgets every workspace
// and a job directory; then the caller's $XDG_RUNTIME_DIR points at it. Every later call, on that
// workspace and on another, in each mode, is no weaker than before: the same mode, backend and
// enforcement, a write outside the workspace still refused; or the call is refused before
// anything runs, naming XDG_RUNTIME_DIR. The anchor of the record, where no variable points,
// still lists the workspace, so nothing beneath it is trusted. Root's state is /run/dsh-sandbox
// whatever the variable says. Control (nobody, natural chain): the planted verdicts in a private
// directory of the caller's do weaken the next call, so the test would see a plant that landed.
TEST_P(Leftovers, StatePlantedWhereXdgRuntimeDirLaterPointsWeakensNoCall) {
  const string outside = dir_.mkdir("outside", 0777);
  ::chmod(outside.c_str(), 0777);
  const string first = workspace_;
  const string second = dir_.mkdir("second");
  const auto facts = [&](const string& mode, const string& ws) {
    workspace_ = ws;
    const RunResult result = run({"--json"}, "echo x > " + outside + "/escaped; true", mode);
    EXPECT_TRUE(testing::list_dir(outside).empty()) << "a write outside the workspace landed";
    if (result.exited_with(125)) {  // refused before anything ran: --json says why
      const string why = parse_json(result.out)["refusal"].value("message", "");
      EXPECT_NE(why.find("XDG_RUNTIME_DIR"), string::npos) << result.describe();
      return string("refused");
    }
    EXPECT_TRUE(result.exited_with(0)) << result.describe();
    const auto json = parse_json(result.out);
    EXPECT_EQ(json.value("mode", ""), mode) << result.out;
    return json.value("backend", "") + "/" + json.value("enforcement", "");
  };
  const vector<std::pair<string, string>> calls = {{"read-only", first},
                                                   {"workspace-write", first},
                                                   {"read-only", second},
                                                   {"workspace-write", second}};
  vector<string> before;
  for (const auto& [mode, ws] : calls) before.push_back(facts(mode, ws));
  const string cache = is_root() ? "/run/dsh-sandbox" : xdg_ + "/dsh-sandbox";
  const string planted = first + "/xdg";
  // Every level 0700, as a real runtime directory and its cache are.
  string script = "mkdir -m 700 " + planted + " " + planted + "/dsh-sandbox " + planted +
                  "/dsh-sandbox/jobs " + planted + "/dsh-sandbox/jobs/planted-job && cd " +
                  planted +
                  "/dsh-sandbox && printf '%s\\n' '{\"version\":1,\"workspaces\":[]}' "
                  "> workspaces.json && chmod 600 workspaces.json";
  for (const string& name : testing::list_dir(cache)) {
    if (!name.starts_with("verdict-")) continue;
    string bytes = llrt::read_file(cache + "/" + name);
    const string bwrap = R"(\"backend\":\"bwrap\")";
    if (const std::size_t at = bytes.find(bwrap); at != string::npos) {
      bytes.replace(at, bwrap.size(), R"(\"backend\":\"landlock\")");
    }
    llrt::write_file(dir_ / ("weak-" + name), bytes, 0644);
    script += " && cp " + (dir_ / ("weak-" + name)) + " " + name + " && chmod 600 " + name;
  }
  workspace_ = first;
  plant(script);
  ASSERT_TRUE(llrt::exists(planted + "/dsh-sandbox/workspaces.json"));
  xdg_ = planted;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    SCOPED_TRACE(calls[i].first + " on " + calls[i].second);
    const string after = facts(calls[i].first, calls[i].second);
    if (after != "refused") {
      EXPECT_EQ(after, before[i]);
    }
  }
  if (is_root() || GetParam() != Backend::kNatural) return;
  // Control: the same verdicts in a private directory the anchor does not distrust.
  xdg_ = dir_.mkdir("control-xdg", 0700);
  const string control = xdg_ + "/dsh-sandbox";
  ASSERT_EQ(::mkdir(control.c_str(), 0700), 0);
  for (const string& name : testing::list_dir(planted + "/dsh-sandbox")) {
    if (!name.starts_with("verdict-")) continue;
    llrt::write_file(control + "/" + name, llrt::read_file(planted + "/dsh-sandbox/" + name), 0600);
  }
  EXPECT_NE(facts("read-only", second), before[2]) << "the planted verdict would not weaken a call";
}

// --deny-read hides a name, not a file: a second hard link elsewhere would stay readable. A file
// with one, named or beneath a named directory, refuses the call before anything runs; the same
// call without the second name runs, and the file stays unreadable.
TEST_P(Leftovers, AnUnreadableFileWithASecondHardLinkRefusesTheCall) {
  const string secret_dir = dir_.mkdir("secrets", 0755);
  const string secret = secret_dir + "/key";
  llrt::write_file(secret, "HARD-LINKED-SECRET\n", 0644);
  const string link = workspace_ + "/innocent";
  ASSERT_EQ(::link(secret.c_str(), link.c_str()), 0);
  const string mark = marker("hard-link");
  for (const string& denied : {secret, secret_dir}) {
    SCOPED_TRACE(denied);
    const RunResult result = run({"--deny-read", denied}, "cat " + link + "; touch " + mark);
    expect_refused(result, secret, mark);
    EXPECT_EQ(result.out.find("HARD-LINKED-SECRET"), string::npos);
  }
  ASSERT_EQ(::unlink(link.c_str()), 0);
  const string ran = workspace_ + "/ran";
  const RunResult alone = run({"--deny-read", secret_dir}, "cat " + secret + "; touch " + ran);
  EXPECT_FALSE(alone.exited_with(125)) << alone.describe();
  EXPECT_EQ(alone.out.find("HARD-LINKED-SECRET"), string::npos) << alone.describe();
  EXPECT_TRUE(llrt::exists(ran)) << alone.describe();
}

// A hard link made inside a writable root to a file outside them would be a writable name for a
// file the run may only read, left for the next run (or the person) to write through. bwrap: every
// writable root is its own bind mount, and link(2) across mounts fails (EXDEV); Landlock alone
// refuses a link whose new name would grant more than the file's own place (EXDEV).
TEST_P(Leftovers, AHardLinkToAFileOutsideTheWritableRootsCannotBeMade) {
  const string outside = dir_.mkdir("linked-from", 0755) + "/file";
  llrt::write_file(outside, "before\n", 0644);
  const string alias = workspace_ + "/alias";
  const RunResult result =
      run({}, "ln " + outside + " " + alias + "; echo linked=$?; echo after > " + alias);
  EXPECT_NE(result.out.find("linked=1"), string::npos) << result.describe();
  struct stat info {};
  ASSERT_EQ(::stat(outside.c_str(), &info), 0);
  EXPECT_EQ(info.st_nlink, 1U);
  EXPECT_EQ(llrt::read_file(outside), "before\n");
}

INSTANTIATE_TEST_SUITE_P(Backends, Leftovers,
                         ::testing::Values(Backend::kNatural, Backend::kLandlock), param_label);

}  // namespace
}  // namespace dsh::local_it
