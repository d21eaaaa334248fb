// SPDX-License-Identifier: Apache-2.0
// The policy's path rules, end to end through `dsh-sandbox run` on the natural chain
// (bwrap+landlock) and on Landlock alone: the workspace's git state survives every write trick,
// a secret of the (test's own) home stays unreadable by every route, git keeps working, an extra
// writable root takes writes while its sibling does not, and the cache presets make npm and pip
// installs of local packages work. Every verdict is read from outside: the bytes on disk, the
// inode, the git objects, never the command's word.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "local_harness.h"
#include "must_run.h"

namespace dsh::local_it {
namespace {

constexpr const char* kSecret = "SECRET-KEY-MATERIAL-7f3a";

// name_to_handle_at outside (argv[1] = path) prints "TYPE HEX"; open_by_handle_at inside
// (argv[1] = TYPE, argv[2] = HEX) prints what it read, or the errno.
constexpr const char* kHandleScript = R"PY(
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class Handle(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_uint), ("type", ctypes.c_int), ("f", ctypes.c_ubyte * 128)]
if sys.argv[1] == "get":
    h = Handle(128, 0)
    mount_id = ctypes.c_int()
    if libc.name_to_handle_at(-100, sys.argv[2].encode(), ctypes.byref(h), ctypes.byref(mount_id), 0) != 0:
        print("name_to_handle_at errno", ctypes.get_errno()); sys.exit(1)
    print(h.type, bytes(h.f[:h.bytes]).hex())
else:
    raw = bytes.fromhex(sys.argv[3])
    h = Handle(len(raw), int(sys.argv[2]))
    ctypes.memmove(h.f, raw, len(raw))
    mount_fd = os.open("/", os.O_RDONLY)
    fd = libc.open_by_handle_at(mount_fd, ctypes.byref(h), os.O_RDONLY)
    if fd < 0:
        print("open_by_handle_at errno", ctypes.get_errno()); sys.exit(3)
    print("read:", os.read(fd, 4096).decode(errors="replace"))
)PY";

std::string git_out(const std::string& repo, const std::string& args) {
  const RunResult result = llrt::execute(
      {"/bin/sh", "-c", "git -C '" + repo + "' " + args + " 2>&1"},
      {{}, -1, -1, {"HOME=/nonexistent", "PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1"}});
  EXPECT_TRUE(result.exited_with(0)) << args << ": " << result.describe();
  return result.out;
}

ino_t inode_of(const std::string& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 ? info.st_ino : 0;
}

class PathRules : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (const std::string missing = missing_host_feature(); !missing.empty()) {
      DSH_SKIP_OR_FAIL(missing);
    }
    home_ = root_.mkdir("home", 0700);
    root_.mkdir("home/.ssh", 0700);
    secret_ = home_ + "/.ssh/id_ed25519";
    llrt::write_file(secret_, kSecret, 0600);
    llrt::write_file(home_ + "/.netrc", std::string("machine x password ") + kSecret, 0600);
    workspace_ = root_.mkdir("ws");
    extra_ = root_.mkdir("extra");
    sibling_ = root_.mkdir("sibling");
    git_out(workspace_, "init -q -b main .");
    git_out(workspace_, "-c user.name=t -c user.email=t@e commit -q --allow-empty -m init");
    if (GetParam() == Backend::kLandlock) {
      config_ = config_dir_ / "config.json";
      llrt::write_file(config_, R"({"bwrapPath": ")" + missing_bwrap_path() + R"("})");
    }
  }

  std::vector<std::string> env() const {
    return {"HOME=" + home_,          "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
            "GIT_CONFIG_NOSYSTEM=1",  "GIT_AUTHOR_NAME=t",
            "GIT_AUTHOR_EMAIL=t@e",   "GIT_COMMITTER_NAME=t",
            "GIT_COMMITTER_EMAIL=t@e"};
  }

  // dsh-sandbox SUBCOMMAND --mode MODE --workspace WS [--config] OPTIONS... TAIL...
  RunResult cli(const std::string& subcommand, const std::string& mode,
                const std::vector<std::string>& options, const std::vector<std::string>& tail) {
    std::vector<std::string> argv = {dsh_sandbox(), subcommand,    "--mode",
                                     mode,          "--workspace", workspace_};
    if (!config_.empty()) argv.insert(argv.end(), {"--config", config_});
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), tail.begin(), tail.end());
    testing::SpawnOptions spawn;
    spawn.env = env();
    return llrt::execute(argv, spawn);
  }

  RunResult run(const std::string& script, const std::vector<std::string>& options = {},
                const std::string& mode = "workspace-write") {
    return cli("run", mode, options, {"-c", script});
  }

  nlohmann::json confine(const std::vector<std::string>& options = {}) {
    const RunResult result = cli("confine", "workspace-write", options, {"--", "/bin/true"});
    EXPECT_TRUE(result.exited_with(0)) << result.describe();
    return result.exited_with(0) ? parse_json(result.out) : nlohmann::json::object();
  }

  TempDir root_;
  TempDir config_dir_;
  std::string home_, secret_, workspace_, extra_, sibling_, config_;
};

TEST_P(PathRules, GitHooksAndConfigSurviveEveryWriteTrick) {
  const std::string git = workspace_ + "/.git";
  if (GetParam() == Backend::kLandlock) {
    // Landlock's grants only add access: the carve-outs are named, and the run is partial in
    // the strict reading.
    const nlohmann::json confined = confine();
    EXPECT_EQ(confined["strictEnforcement"], "partial");
    const std::string ungoverned = confined["ungoverned"].dump();
    EXPECT_NE(ungoverned.find(git + "/config"), std::string::npos) << ungoverned;
    EXPECT_NE(ungoverned.find(git + "/hooks"), std::string::npos) << ungoverned;
    return;
  }
  const std::string config_before = llrt::read_file(git + "/config");
  const std::vector<std::string> hooks_before = testing::list_dir(git + "/hooks");
  const ino_t git_inode = inode_of(git);
  const RunResult result = run("cd " + workspace_ +
                               "\n"
                               "echo '[core] fsmonitor = touch /tmp/pwned' >> .git/config\n"
                               ": > .git/config\n"
                               "echo x > new; mv -f new .git/config\n"
                               "rm -f .git/config; echo '[core] hooksPath = /tmp' > .git/config\n"
                               "printf '#!/bin/sh\\necho HOOK\\n' > .git/hooks/post-commit\n"
                               ": > .git/hooks/pre-commit.sample\n"
                               "mv .git/hooks .git/hooks-old; ln -s " +
                               workspace_ +
                               " .git/hooks\n"
                               "rm -rf .git/hooks; ln -sfn " +
                               workspace_ +
                               " .git/hooks\n"
                               "mv .git .git-moved && mkdir -p .git/hooks\n"
                               "git commit -q --allow-empty -m after-tricks\n"
                               "echo done");
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_NE(result.out.find("done"), std::string::npos) << result.describe();
  EXPECT_EQ(llrt::read_file(git + "/config"), config_before);
  EXPECT_EQ(testing::list_dir(git + "/hooks"), hooks_before);
  EXPECT_EQ(inode_of(git), git_inode);
  EXPECT_FALSE(llrt::exists(git + "/hooks/post-commit"));
  EXPECT_FALSE(llrt::exists(workspace_ + "/.git-moved"));
  // The protections stop the tricks, not git: the commit made after them landed.
  EXPECT_EQ(git_out(workspace_, "log -1 --format=%s"), "after-tricks\n");
}

TEST_P(PathRules, AGitConfigWithAPlantedHardLinkIsRefusedBeforeAnythingRuns) {
  const std::string config = workspace_ + "/.git/config";
  ASSERT_EQ(::link(config.c_str(), (workspace_ + "/config-link").c_str()), 0);
  const std::string before = llrt::read_file(config);
  const RunResult result =
      run("echo evil >> " + workspace_ + "/config-link; touch " + workspace_ + "/ran");
  EXPECT_TRUE(result.exited_with(125)) << result.describe();
  EXPECT_NE(result.err.find("hard links"), std::string::npos) << result.describe();
  EXPECT_EQ(llrt::read_file(config), before);
  EXPECT_FALSE(llrt::exists(workspace_ + "/ran"));
}

TEST_P(PathRules, AWorktreeGitFileAndItsCommonDirStayReadOnly) {
  const std::string linked = root_ / "linked";
  git_out(workspace_, "worktree add -q -b side " + linked);
  if (GetParam() == Backend::kLandlock) {
    workspace_ = linked;
    const nlohmann::json confined = confine();
    EXPECT_EQ(confined["strictEnforcement"], "partial");
    const std::string ungoverned = confined["ungoverned"].dump();
    EXPECT_NE(ungoverned.find(linked + "/.git"), std::string::npos) << ungoverned;
    return;
  }
  const std::string pointer_before = llrt::read_file(linked + "/.git");
  const std::string config_before = llrt::read_file(workspace_ + "/.git/config");
  std::vector<std::string> argv = {
      dsh_sandbox(),
      "run",
      "--mode",
      "workspace-write",
      "--workspace",
      linked,
      "-c",
      "echo 'gitdir: /tmp/evil' > .git; echo evil >> " + workspace_ + "/.git/config; echo done"};
  testing::SpawnOptions spawn;
  spawn.env = env();
  const RunResult result = llrt::execute(argv, spawn);
  EXPECT_NE(result.out.find("done"), std::string::npos) << result.describe();
  EXPECT_EQ(llrt::read_file(linked + "/.git"), pointer_before);
  EXPECT_EQ(llrt::read_file(workspace_ + "/.git/config"), config_before);
}

TEST_P(PathRules, ASecretIsUnreadableByEveryRoute) {
  const std::string script_path = root_ / "handle.py";
  llrt::write_file(script_path, kHandleScript);
  const RunResult handle = llrt::execute({"/usr/bin/python3", script_path, "get", secret_});
  ASSERT_TRUE(handle.exited_with(0)) << handle.describe();
  const std::vector<std::string> words = split_lines(handle.out);
  ASSERT_FALSE(words.empty());
  const std::string type = words[0].substr(0, words[0].find(' '));
  const std::string hex = words[0].substr(words[0].find(' ') + 1);
  if (is_root()) {
    // The control: the handle opens the secret for a caller with CAP_DAC_READ_SEARCH.
    const RunResult control = llrt::execute({"/usr/bin/python3", script_path, "open", type, hex});
    EXPECT_NE(control.out.find(kSecret), std::string::npos) << control.describe();
  }
  const std::string link = workspace_ + "/linked-secret";
  for (const char* mode : {"read-only", "workspace-write"}) {
    SCOPED_TRACE(mode);
    const RunResult result =
        run("cat " + secret_ + "; cat /proc/self/root" + secret_ + "; cat " + home_ +
                "/.netrc; ln " + secret_ + " " + link + " && cat " + link + "; /usr/bin/python3 " +
                script_path + " open " + type + " " + hex + "; echo end",
            {}, mode);
    EXPECT_NE(result.out.find("end"), std::string::npos) << result.describe();
    EXPECT_EQ(result.out.find(kSecret), std::string::npos) << result.describe();
    EXPECT_EQ(result.err.find(kSecret), std::string::npos) << result.describe();
    EXPECT_NE(result.err.find("Permission denied"), std::string::npos) << result.describe();
    EXPECT_NE(inode_of(link), inode_of(secret_));
  }
  // The secret is listed among the protections in force.
  const std::string shown = confine()["policy"]["protected"].dump();
  EXPECT_NE(shown.find(home_ + "/.ssh"), std::string::npos) << shown;
  // And a person can lift it for one call.
  const RunResult lifted = run("cat " + secret_, {"--deny-read", "!~/.ssh"}, "read-only");
  EXPECT_NE(lifted.out.find(kSecret), std::string::npos) << lifted.describe();
}

TEST_P(PathRules, ProjectEnvFilesCanBeMadeUnreadable) {
  llrt::write_file(workspace_ + "/.env.local", kSecret);
  const RunResult result = run("cat " + workspace_ + "/.env.local; echo end",
                               {"--deny-read", workspace_ + "/.env*"}, "read-only");
  EXPECT_NE(result.out.find("end"), std::string::npos) << result.describe();
  EXPECT_EQ(result.out.find(kSecret), std::string::npos) << result.describe();
}

// A refused read of a default secret or a --deny-read path, and a refused write of a protected
// git file, is a denial with the kernel's record, the file marker and learn's word that no
// confined mode lifts it; the files are unchanged, judged from outside. On Landlock alone the git
// files and a --deny-read path inside the workspace lie in a writable root, which Landlock cannot
// carve out: the launcher's supervisor refuses those calls itself (named in ungoverned).
TEST_P(PathRules, RefusalsAtCarveOutsAreDenialsWithRecords) {
  const std::string env_file = workspace_ + "/.env";
  llrt::write_file(env_file, kSecret);
  const RunResult json_run = run("cat " + secret_ + "; ls " + home_ + "/.ssh; cat " + env_file +
                                     "; cat " + home_ + "/.ssh/absent; exit 1",
                                 {"--json", "--deny-read", env_file}, "read-only");
  const nlohmann::json object = parse_json(json_run.out);
  EXPECT_TRUE(object["denied"].get<bool>()) << json_run.describe();
  EXPECT_EQ(object["stdout"].get<std::string>().find(kSecret), std::string::npos);
  std::set<std::string> read;
  for (const nlohmann::json& denial : object["denials"]) {
    EXPECT_EQ(denial["kind"], "file") << denial.dump();
    if (denial["op"] == "read" && denial["rule"] == "deny-read") read.insert(denial["path"]);
  }
  std::set<std::string> expected = {secret_, home_ + "/.ssh", env_file};
  // bwrap masks the directory (mode 0000): a missing name in it is refused too (EACCES), where
  // Landlock's lookup finds nothing (ENOENT) and refuses nothing.
  if (GetParam() != Backend::kLandlock) expected.insert(home_ + "/.ssh/absent");
  EXPECT_EQ(read, expected) << object["denials"].dump();
  // Without --json: the file marker, and learn says no confined mode lifts it.
  const RunResult text = run("cat " + secret_, {"--learn"}, "read-only");
  EXPECT_NE(text.err.find("[sandbox: file access denied under read-only mode]"), std::string::npos)
      << text.describe();
  EXPECT_NE(text.err.find("none: " + secret_ + " is unreadable in every confined mode"),
            std::string::npos)
      << text.describe();
  EXPECT_EQ(text.err.find("--mode"), std::string::npos) << text.describe();
  const std::string git = workspace_ + "/.git";
  const std::string config_before = llrt::read_file(git + "/config");
  const RunResult writes = run("cd " + workspace_ + "; echo x >> .git/config; echo y > " +
                                   ".git/hooks/pre-commit; cat .env; echo ok > fine; exit 1",
                               {"--json", "--deny-read", env_file});
  const nlohmann::json written = parse_json(writes.out);
  EXPECT_TRUE(written["denied"].get<bool>()) << writes.describe();
  std::set<std::string> protected_paths;
  for (const nlohmann::json& denial : written["denials"]) {
    if (denial["rule"] == "deny-write" || denial["rule"] == "deny-read") {
      protected_paths.insert(denial["path"]);
    }
  }
  EXPECT_EQ(protected_paths,
            (std::set<std::string>{git + "/config", git + "/hooks/pre-commit", env_file}))
      << written["denials"].dump();
  EXPECT_EQ(written["stdout"].get<std::string>().find(kSecret), std::string::npos);
  EXPECT_EQ(llrt::read_file(git + "/config"), config_before);
  EXPECT_FALSE(std::filesystem::exists(git + "/hooks/pre-commit"));
  EXPECT_EQ(llrt::read_file(workspace_ + "/fine"), "ok\n");
}

TEST_P(PathRules, ACommitBranchLocalFetchAndGcWorkAndTheirObjectsLand) {
  const std::string remote = root_.mkdir("remote");
  git_out(remote, "init -q -b main .");
  git_out(remote, "-c user.name=t -c user.email=t@e commit -q --allow-empty -m from-remote");
  const std::string remote_head = git_out(remote, "rev-parse HEAD");
  const RunResult result = run("cd " + workspace_ +
                               " && echo content > file.txt && git add file.txt && "
                               "git commit -q -m from-sandbox && git branch topic && "
                               "git fetch -q " +
                               remote + " main && git gc -q && echo ok");
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(git_out(workspace_, "log -1 --format=%s main"), "from-sandbox\n");
  EXPECT_EQ(git_out(workspace_, "rev-parse topic"), git_out(workspace_, "rev-parse main"));
  EXPECT_EQ(git_out(workspace_, "cat-file -t " + remote_head.substr(0, 40)), "commit\n");
  EXPECT_EQ(git_out(workspace_, "fsck --no-progress --no-dangling"), "");
}

TEST_P(PathRules, AnExtraWritableRootTakesWritesAndItsSiblingDoesNot) {
  const RunResult result =
      run("echo in > " + extra_ + "/written; echo out > " + sibling_ + "/written; echo end",
          {"--allow-write", extra_});
  EXPECT_NE(result.out.find("end"), std::string::npos) << result.describe();
  EXPECT_EQ(llrt::read_file(extra_ + "/written"), "in\n");
  EXPECT_FALSE(llrt::exists(sibling_ + "/written"));
  const nlohmann::json shown = confine({"--allow-write", extra_})["policy"]["allowWrite"];
  EXPECT_EQ(shown, nlohmann::json::array({extra_}));
  // Without the option the same write is refused.
  const RunResult refused = run("echo in > " + extra_ + "/again");
  EXPECT_FALSE(llrt::exists(extra_ + "/again")) << refused.describe();
}

TEST_P(PathRules, TheNpmCachePresetMakesAnInstallOfALocalTarballWork) {
  if (::access("/usr/bin/npm", X_OK) != 0) DSH_SKIP_OR_FAIL("npm is not installed");
  const std::string package = root_.mkdir("package");
  llrt::write_file(package + "/package.json", R"({"name":"tinypkg","version":"1.0.0"})");
  llrt::write_file(package + "/index.js", "module.exports = 42;\n");
  const std::string tarball = root_ / "tinypkg-1.0.0.tgz";
  // npm's tarball layout: everything under package/.
  ASSERT_TRUE(
      llrt::execute({"/bin/tar", "-czf", tarball, "-C", root_.path(), "package"}).exited_with(0));
  llrt::write_file(workspace_ + "/package.json", R"({"name":"app","version":"1.0.0"})");
  const std::string install = "cd " + workspace_ +
                              " && npm install --offline --no-audit --no-fund "
                              "--no-update-notifier " +
                              tarball + " >/dev/null 2>&1; echo rc=$?";
  const RunResult without = run(install);
  EXPECT_EQ(without.out.find("rc=0"), std::string::npos) << without.describe();
  const RunResult with = run(install, {"--allow-cache", "npm"});
  EXPECT_NE(with.out.find("rc=0"), std::string::npos) << with.describe();
  EXPECT_EQ(llrt::read_file(workspace_ + "/node_modules/tinypkg/index.js"),
            "module.exports = 42;\n");
  EXPECT_TRUE(llrt::exists(home_ + "/.npm/_cacache"));
}

TEST_P(PathRules, ThePipCachePresetMakesAnInstallOfALocalWheelWork) {
  if (::access("/usr/bin/python3", X_OK) != 0) DSH_SKIP_OR_FAIL("python3 is not installed");
  // A wheel is a zip: written here with the standard library, no build backend, no network.
  const std::string wheel = root_ / "tinywheel-1.0-py3-none-any.whl";
  const RunResult built = llrt::execute(
      {"/usr/bin/python3", "-c",
       "import zipfile,hashlib,base64,sys\n"
       "f={'tinywheel/__init__.py':b'VALUE = 7\\n',"
       "'tinywheel-1.0.dist-info/METADATA':b'Metadata-Version: 2.1\\nName: tinywheel\\n"
       "Version: 1.0\\n','tinywheel-1.0.dist-info/WHEEL':b'Wheel-Version: 1.0\\nGenerator: t\\n"
       "Root-Is-Purelib: true\\nTag: py3-none-any\\n'}\n"
       "r=''.join('%s,sha256=%s,%d\\n'%(n,base64.urlsafe_b64encode(hashlib.sha256(d).digest())"
       ".rstrip(b'=').decode(),len(d)) for n,d in "
       "f.items())+'tinywheel-1.0.dist-info/RECORD,,\\n'\n"
       "z=zipfile.ZipFile(sys.argv[1],'w')\n"
       "[z.writestr(n,d) for n,d in f.items()]\n"
       "z.writestr('tinywheel-1.0.dist-info/RECORD',r); z.close()\n",
       wheel});
  ASSERT_TRUE(built.exited_with(0)) << built.describe();
  if (!llrt::execute({"/usr/bin/python3", "-m", "pip", "--version"}).exited_with(0)) {
    DSH_SKIP_OR_FAIL("python3-pip is not installed");
  }
  const RunResult result = run("cd " + workspace_ +
                                   " && /usr/bin/python3 -m pip install -q --no-index "
                                   "--disable-pip-version-check --target site " +
                                   wheel + " && echo installed",
                               {"--allow-cache", "pip"});
  EXPECT_NE(result.out.find("installed"), std::string::npos) << result.describe();
  EXPECT_EQ(llrt::read_file(workspace_ + "/site/tinywheel/__init__.py"), "VALUE = 7\n");
  const nlohmann::json shown = confine({"--allow-cache", "pip"})["policy"];
  EXPECT_EQ(shown["allowCache"], nlohmann::json::array({"pip"}));
  EXPECT_EQ(shown["allowWrite"], nlohmann::json::array({home_ + "/.cache/pip"}));
}

TEST_P(PathRules, BadPathRulesAreRefusedAndNothingRuns) {
  const std::string marker = root_ / "ran";
  for (const std::vector<std::string>& options :
       std::vector<std::vector<std::string>>{{"--allow-cache", "nosuchtool"},
                                             {"--allow-write", root_ / "missing"},
                                             {"--allow-write", "/"},
                                             {"--deny-read", root_.path()},
                                             {"--allow-write", config_dir_.path()}}) {
    SCOPED_TRACE(::testing::PrintToString(options));
    const RunResult result = run("touch " + marker, options);
    if (options[1] == config_dir_.path() && config_.empty()) continue;  // no config to cover
    EXPECT_TRUE(result.exited_with(125)) << result.describe();
    expect_one_cli_error_line(result);
    EXPECT_FALSE(llrt::exists(marker));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, PathRules,
                         ::testing::Values(Backend::kNatural, Backend::kLandlock), param_label);

}  // namespace
}  // namespace dsh::local_it
