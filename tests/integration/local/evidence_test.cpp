// SPDX-License-Identifier: Apache-2.0
// Denials from kernel evidence (docs/evidence-and-network.md): `dsh-sandbox run --json` on
// bwrap+landlock and on Landlock alone classifies from the launcher's records, never from what the
// command printed. Every write is judged from outside: the file on the host is absent.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "consumer/bash_executor.h"
#include "local_harness.h"
#include "must_run.h"
#include "wait.h"

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

// The record names the file the kernel refused, however the command spelled it: relative to its
// cwd, through a link in the workspace that leads out, through a final link it follows, and
// relative to a directory descriptor. Writes that stay in the workspace leave no record.
TEST_P(Evidence, ARecordNamesTheRefusedFileHoweverTheCommandSpelledIt) {
  const std::string ws = workspace_.path();
  const std::string cwd_relative = unique("dsh-cwd");
  const std::string via_dir = unique("dsh-via-dir");
  const std::string via_last = unique("dsh-via-last");
  const std::string via_dirfd = unique("dsh-dirfd");
  const json object =
      run("cd /etc && (echo x > " + cwd_relative + "); cd " + ws + "; ln -s /etc out; ln -s /etc/" +
          via_last + " last; echo x > inside; (echo x > out/" + via_dir + "); (echo x > last); " +
          "python3 -c \"import os; d = os.open('/etc', os.O_RDONLY); os.open('" + via_dirfd +
          "', os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=d)\"; exit 1");
  for (const std::string& name : {cwd_relative, via_dir, via_last, via_dirfd}) {
    EXPECT_FALSE(std::filesystem::exists("/etc/" + name)) << name;
    EXPECT_TRUE(names(object, "create", "/etc/" + name, "outside-writable-roots"))
        << name << " " << object["denials"].dump();
  }
  EXPECT_TRUE(std::filesystem::exists(workspace_ / "inside"));
  for (const json& denial : object["denials"]) {
    EXPECT_NE(denial["path"].get<std::string>().rfind(ws, 0), 0U) << denial.dump();
  }
}

// The spellings an attack review forged and hid records with, each checked against what the
// kernel did, from outside: ".." after a link (lexical folding named /root/.ssh for a write that
// landed in the workspace), a link that leads out followed by "..", relative paths from a changed
// cwd, and directory descriptors. A write that succeeded has no record; each refused one names
// the object the kernel refused, which does not exist.
TEST_P(Evidence, ForgedSpellingsNameOnlyWhatTheKernelRefused) {
  const std::string ws = workspace_.path();
  TempDir outside_dir("/var/tmp");  // readable everywhere, writable under no policy
  const std::string out = outside_dir.path();
  std::filesystem::create_directories(out + "/secret/deep/er");
  std::filesystem::permissions(out, std::filesystem::perms::owner_all |
                                        std::filesystem::perms::group_exec |
                                        std::filesystem::perms::others_exec);
  const std::string dots = "../../../../../../../..";
  const std::string python =
      "import os\n"
      "d = os.open('deep', os.O_RDONLY)\n"
      "os.close(os.open('" +
      dots +
      "/root/.ssh/by-dirfd', os.O_WRONLY | os.O_CREAT, 0o644, "
      "dir_fd=d))\n"
      "e = os.open('" +
      out +
      "/secret', os.O_RDONLY)\n"
      "try:\n"
      "  os.open('by-dirfd', os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=e)\n"
      "except OSError:\n"
      "  pass\n";
  llrt::write_file(workspace_ / "forge.py", python);
  const json object = run("cd " + ws +
                          " && mkdir -p a/b/c/d/e/f/g/h root/.ssh && ln -s a/b/c/d/e/f/g/h deep && "
                          "echo key > deep/" +
                          dots +
                          "/root/.ssh/authorized_keys; "
                          "ln -s " +
                          out +
                          "/secret out; (echo x > out/authorized_keys); "
                          "ln -s " +
                          out +
                          "/secret/deep/er up; (echo x > up/../climbed); "
                          "ln -s " +
                          out +
                          "/secret/dangling last; (echo x > last); "
                          "(cd a/b && echo x > ../../from-cwd); (cd " +
                          out +
                          "/secret && echo x > ../from-cwd); "
                          "python3 forge.py; exit 1");
  const std::vector<std::string> landed = {"root/.ssh/authorized_keys", "root/.ssh/by-dirfd",
                                           "from-cwd"};
  for (const std::string& name : landed) {
    EXPECT_TRUE(std::filesystem::exists(workspace_ / name)) << name;
  }
  const std::vector<std::string> refused = {out + "/secret/authorized_keys",
                                            out + "/secret/deep/climbed", out + "/secret/dangling",
                                            out + "/from-cwd", out + "/secret/by-dirfd"};
  for (const std::string& path : refused) {
    EXPECT_FALSE(std::filesystem::exists(path)) << path;
    EXPECT_TRUE(names(object, "create", path, "outside-writable-roots"))
        << path << " " << object["denials"].dump();
  }
  for (const json& denial : object["denials"]) {
    const std::string path = denial["path"].get<std::string>();
    EXPECT_NE(path.rfind(ws, 0), 0U) << denial.dump();
    EXPECT_NE(path.rfind("/root/", 0), 0U) << denial.dump();
  }
}

// io_uring is refused in every run (its operations would bypass the filter and the
// supervisor), and the refusal is recorded as a kernel object no mode grants.
TEST_P(Evidence, IoUringIsRefusedAndRecorded) {
  const json object =
      run("python3 -c \"import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True); "
          "r = libc.syscall(425, 1, ctypes.create_string_buffer(120)); "
          "sys.exit(0 if r == -1 and ctypes.get_errno() == 1 else 3)\"");
  EXPECT_EQ(object["exitCode"], 0) << object.dump();
  EXPECT_TRUE(names(object, "io-uring", "io_uring_setup", "kernel-object"))
      << object["denials"].dump();
}

// bind() of a pathname Unix socket creates a node (Landlock's MAKE_SOCK): refused outside the
// writable roots and recorded with the socket's path; inside the workspace it binds, unrecorded.
TEST_P(Evidence, UnixSocketBindIsRecordedWithItsPath) {
  TempDir outside_dir("/var/tmp");
  const std::string refused = outside_dir / "refused.sock";
  const std::string inside = workspace_ / "inside.sock";
  const std::string python =
      "import socket\n"
      "for path in ['" +
      inside + "', '" + refused +
      "']:\n"
      "  s = socket.socket(socket.AF_UNIX)\n"
      "  try:\n"
      "    s.bind(path)\n"
      "  except OSError:\n"
      "    pass\n";
  llrt::write_file(workspace_ / "bind.py", python);
  const json object = run("cd " + workspace_.path() + " && python3 bind.py; exit 1");
  EXPECT_TRUE(std::filesystem::exists(inside));
  EXPECT_FALSE(std::filesystem::exists(refused));
  EXPECT_TRUE(names(object, "bind", refused, "outside-writable-roots")) << object["denials"].dump();
  EXPECT_FALSE(names(object, "bind", inside, "outside-writable-roots")) << object["denials"].dump();
}

// An fd form (fchmod) names the descriptor's file, as the kernel holds it.
TEST_P(Evidence, AnFdFormMetadataRefusalNamesTheDescriptorsFile) {
  llrt::write_file(workspace_ / "file", "x");
  const std::string file = workspace_ / "file";
  const json object =
      run("python3 -c \"import os; os.fchmod(os.open('" + file + "', os.O_RDONLY), 0o600)\"",
          "read-only");
  EXPECT_TRUE(names(object, "chmod", file, "metadata")) << object["denials"].dump();
}

// File metadata under workspace-write, judged from outside. A file the caller owns outside the
// writable roots keeps its mode and timestamps (bwrap's read-only root refuses with EROFS; on
// Landlock alone, which does not govern metadata, the launcher's supervisor performs the call
// inside the writable roots only and refuses it elsewhere, recorded), whatever the spelling: a
// path, a link in the workspace that leads out, a descriptor. A set-id bit is never set, not
// even in the workspace; the workspace's own changes land.
TEST_P(Evidence, MetadataChangesLandInsideTheWritableRootsOnlyAndNeverSetId) {
  TempDir outside;
  const std::string target = outside / "owned";
  llrt::write_file(target, "x");
  ASSERT_EQ(::chmod(target.c_str(), 0644), 0);
  struct stat before {};
  ASSERT_EQ(::stat(target.c_str(), &before), 0);
  llrt::write_file(workspace_ / "f", "x");
  const std::string inside = workspace_ / "f";
  // openat2 keeps the new file's mode in memory, where the supervisor reads it.
  const std::string openat2 = outside / "openat2.py";
  llrt::write_file(openat2,
                   "import ctypes, os, struct, sys\n"
                   "libc = ctypes.CDLL(None, use_errno=True)\n"
                   "how = struct.pack('QQQ', os.O_CREAT | os.O_WRONLY, 0o4755, 0)\n"
                   "fd = libc.syscall(437, -100, sys.argv[1].encode(), how, len(how))\n"
                   "sys.exit(0 if fd >= 0 else ctypes.get_errno())\n");
  const std::string suid = workspace_ / "suid";
  const json object =
      run("cd " + workspace_.path() + "; chmod 666 " + target + "; touch -d 2001-01-01 " + target +
          "; ln -s " + target + " out; chmod 666 out; python3 -c \"import os; " +
          "os.fchmod(os.open('" + target + "', os.O_RDONLY), 0o666)\"; chmod 600 f; " +
          "touch -d 2001-01-01 f; chmod u+s f; chmod g+s f; chmod 666 /dev/null; python3 " +
          openat2 + " " + suid + "; echo openat2=$?; exit 1");
  struct stat after {};
  ASSERT_EQ(::stat(target.c_str(), &after), 0);
  EXPECT_EQ(after.st_mode & 07777, 0644U) << object["denials"].dump();
  EXPECT_EQ(after.st_mtime, before.st_mtime);
  struct stat changed {};
  ASSERT_EQ(::stat(inside.c_str(), &changed), 0);
  EXPECT_EQ(changed.st_mode & 07777, 0600U) << object.dump();
  EXPECT_LT(changed.st_mtime, before.st_mtime - 24 * 3600 * 365);
  EXPECT_TRUE(object["denied"].get<bool>()) << object.dump();
  EXPECT_TRUE(names(object, "chmod", inside, "set-id")) << object["denials"].dump();
  EXPECT_NE(object["stdout"].get<std::string>().find("openat2=1\n"), std::string::npos)
      << object.dump();  // EPERM
  EXPECT_FALSE(std::filesystem::exists(suid));
  EXPECT_TRUE(names(object, "create", suid, "set-id")) << object["denials"].dump();
  if (GetParam() == Backend::kLandlock) {
    EXPECT_TRUE(names(object, "chmod", target, "metadata")) << object["denials"].dump();
    EXPECT_TRUE(names(object, "utime", target, "metadata")) << object["denials"].dump();
    // The host's /dev/null is granted writable, but no device node's metadata is the command's.
    EXPECT_TRUE(names(object, "chmod", "/dev/null", "metadata")) << object["denials"].dump();
  }
}

// Without evidence nothing keeps metadata inside the writable roots on Landlock alone: a root
// caller, who owns the host's files, is refused there with the reason; anyone else runs with the
// gap named (strictly partial).
TEST(EvidenceLandlockAlone, WithoutEvidenceRootIsRefusedWorkspaceWrite) {
  if (const std::string missing = missing_host_feature(); !missing.empty()) {
    DSH_SKIP_OR_FAIL(missing);
  }
  TempDir config_dir;
  TempDir workspace;
  const std::string config = config_dir / "config.json";
  llrt::write_file(config, R"({"bwrapPath": ")" + missing_bwrap_path() + R"("})");
  const RunResult result =
      run_cli({"run", "--json", "--no-evidence", "--mode", "workspace-write", "--workspace",
               workspace.path(), "--config", config, "-c", "true"});
  if (is_root()) {
    EXPECT_FALSE(result.exited_with(0)) << result.describe();
    EXPECT_NE(result.err.find("without evidence leaves chmod, chown, utimes"), std::string::npos)
        << result.describe();
    EXPECT_EQ(result.err.find("Runner failure"), std::string::npos) << result.describe();
  } else {
    EXPECT_TRUE(result.exited_with(0)) << result.describe();
    const json object = parse_json(result.out);
    EXPECT_EQ(object["strictEnforcement"], "partial") << result.out;
    EXPECT_NE(object["ungoverned"].dump().find("file metadata"), std::string::npos) << result.out;
  }
}

// Switched off per call, the launcher runs as one process and the denial is read from stderr,
// which the result says.
TEST_P(Evidence, NoEvidenceFallsBackToStderrAndSaysSo) {
  const std::string target = "/etc/" + unique("dsh-no-evidence");
  std::vector<std::string> args = {"run",       "--json",      "--no-evidence",  "--mode",
                                   "read-only", "--workspace", workspace_.path()};
  if (GetParam() == Backend::kLandlock) {
    const std::string config = config_dir_ / "config.json";
    llrt::write_file(config, R"({"bwrapPath": ")" + missing_bwrap_path() + R"("})");
    args.insert(args.end(), {"--config", config});
  }
  args.insert(args.end(), {"-c", "echo x > " + target});
  const RunResult result = run_cli(args);
  const json object = parse_json(result.out);
  EXPECT_FALSE(std::filesystem::exists(target));
  EXPECT_EQ(object["denialSource"], "stderr") << result.describe();
  EXPECT_TRUE(object["denials"].empty()) << object.dump();
  EXPECT_TRUE(object["denied"].get<bool>()) << object.dump();
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
  ASSERT_TRUE(testing::wait_until([&] { return std::filesystem::exists(ws + "/started"); },
                                  std::chrono::seconds(10)));
  ASSERT_EQ(::kill(launcher.pid(), SIGKILL), 0);
  const RunResult killed = launcher.wait(std::chrono::seconds(10));
  EXPECT_TRUE(killed.killed_by(SIGKILL)) << killed.describe();
  llrt::write_file(ws + "/go", "");
  std::string said;
  testing::wait_until(
      [&] {
        said = llrt::read_file(out_path);
        return said.find("rc=") != std::string::npos;
      },
      std::chrono::seconds(10));
  EXPECT_NE(said.find("rc="), std::string::npos) << "the survivor never reported";
  EXPECT_EQ(said.find("rc=0"), std::string::npos) << said;
  EXPECT_FALSE(std::filesystem::exists(ws + "/late"));
}

}  // namespace
}  // namespace dsh::local_it
