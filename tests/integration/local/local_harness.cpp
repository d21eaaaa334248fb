// SPDX-License-Identifier: Apache-2.0
#include "local_harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "dsh/sandbox/policy.h"

namespace dsh::local_it {

std::string backend_label(Backend backend) {
  switch (backend) {
    case Backend::kNatural:
      return "bwrap";
    case Backend::kLandlock:
      return "landlock";
    case Backend::kBwrapOnly:
      return "bwraponly";
  }
  return "unknown";
}

std::string expected_backend_name(Backend backend) {
  switch (backend) {
    case Backend::kNatural:
      return "bwrap+landlock";
    case Backend::kLandlock:
      return "landlock";
    case Backend::kBwrapOnly:
      return "bwrap";
  }
  return "unknown";
}

std::string param_label(const ::testing::TestParamInfo<Backend>& info) {
  return backend_label(info.param);
}

void LocalTest::SetUp() {
  if (const std::string missing = missing_host_feature(); !missing.empty()) {
    DSH_SKIP_OR_FAIL(missing);
  }
}

std::string LocalTest::write_config(const std::string& json) const {
  const std::string path = dir_ / unique("config") + ".json";
  llrt::write_file(path, json);
  return path;
}

void ProviderTest::SetUp() {
  LocalTest::SetUp();
  if (IsSkipped() || HasFatalFailure()) return;
  workspace_ = dir_.mkdir("workspace");
  sibling_ = dir_.mkdir("sibling");
}

std::string missing_bwrap_path() { return "/nonexistent/dsh-local-it/bwrap"; }

void copy_program(const std::string& program, const std::string& path) {
  std::error_code error;
  std::filesystem::copy_file(program, path, error);
  ASSERT_FALSE(error) << program << " -> " << path << ": " << error.message();
  ASSERT_EQ(::chmod(path.c_str(), 0755), 0) << path;
}

std::string copy_of_probe(const TempDir& dir) {
  const std::string path = dir / "ll_probe";
  copy_program(llrt::probe_path(), path);
  return path;
}

std::unique_ptr<sandbox::LocalSandboxProvider> make_provider(
    Backend backend, std::shared_ptr<sandbox::VerdictStore> store) {
  sandbox::LocalSandboxConfig config;
  if (backend == Backend::kLandlock) config.bwrap_path = missing_bwrap_path();
  sandbox::LocalSandboxHooks hooks;
  hooks.launcher_path =
      backend == Backend::kBwrapOnly ? "/nonexistent/dsh-local-it/landlock-run" : llrt::launcher();
  // bwrap alone's exec shim, which an install puts beside the launcher.
  hooks.seccomp_exec_path = seccomp_exec();
  return std::make_unique<sandbox::LocalSandboxProvider>(config, hooks, std::move(store));
}

ConfinedArgv confine(sandbox::LocalSandboxProvider& provider, const std::vector<std::string>& argv,
                     ConfinedSandboxMode mode, const std::string& workspace,
                     NetworkPolicy network) {
  const sandbox::SandboxPolicy policy{mode, workspace, std::nullopt, network};
  return provider.confine(argv, policy);
}

std::vector<std::string> bash(const std::string& script) { return {"/bin/bash", "-c", script}; }

RunResult spawn(const ConfinedArgv& confined) {
  testing::SpawnOptions options;
  std::vector<int> provided;
  for (const sandbox::ProvidedFd& wanted : confined.provided_fds) {
    const int fd = ::memfd_create("dsh-it-provided", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    EXPECT_GE(fd, 0) << std::strerror(errno);
    EXPECT_EQ(::write(fd, wanted.content.data(), wanted.content.size()),
              static_cast<ssize_t>(wanted.content.size()));
    EXPECT_EQ(::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE), 0);
    EXPECT_EQ(::lseek(fd, 0, SEEK_SET), 0);
    provided.push_back(fd);
    options.fds.emplace_back(fd, wanted.fd);
  }
  RunResult result = testing::execute(confined.argv, options);
  for (const int fd : provided) ::close(fd);
  return result;
}

RunResult run_cli(const std::vector<std::string>& args, const std::string& program) {
  std::vector<std::string> argv = {program};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::execute(argv);
}

RunResult cli_without_namespaces(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {deny_namespaces(), dsh_sandbox()};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::execute(argv);
}

void expect_one_cli_error_line(const RunResult& result) {
  EXPECT_TRUE(result.exited_with(125)) << result.describe();
  EXPECT_EQ(result.out, "") << result.describe();
  const std::vector<std::string> lines = split_lines(result.err);
  ASSERT_EQ(lines.size(), 1U) << result.describe();
  EXPECT_EQ(lines[0].rfind("dsh-sandbox: ", 0), 0U) << result.describe();
  EXPECT_EQ(result.err.back(), '\n') << result.describe();
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string host_pid_namespace() {
  char target[256] = {};
  const ssize_t n = ::readlink("/proc/self/ns/pid", target, sizeof(target) - 1);
  return n > 0 ? std::string(target, static_cast<std::size_t>(n)) : "";
}

std::string missing_host_feature() {
  if (llrt::kernel_abi() < 1) return "this kernel does not enforce Landlock (lsm=landlock)";
  if (::access("/usr/bin/bwrap", X_OK) != 0) return "bubblewrap is not installed";
  if (::access("/bin/bash", X_OK) != 0) return "/bin/bash is missing";
  const RunResult bwrap =
      testing::execute({"/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid",
                        "--proc", "/proc", "--", "/bin/true"});
  if (!bwrap.exited_with(0)) return "bwrap cannot create its sandbox here: " + bwrap.err;
  return {};
}

namespace {

// No CONFIG_PROC_CHILDREN on every kernel: scan /proc for processes whose parent is `pid`.
std::vector<int> children_of(int pid) {
  std::vector<int> children;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return children;
  const std::string parent = std::to_string(pid);
  while (const dirent* entry = ::readdir(dir)) {
    if (std::isdigit(static_cast<unsigned char>(entry->d_name[0])) == 0) continue;
    const int child = std::atoi(entry->d_name);
    if (status_field(child, "PPid") == parent) children.push_back(child);
  }
  ::closedir(dir);
  return children;
}

}  // namespace

int find_descendant(int root, const std::string& comm) {
  std::vector<int> pending = children_of(root);
  while (!pending.empty()) {
    const int pid = pending.back();
    pending.pop_back();
    if (testing::read_file("/proc/" + std::to_string(pid) + "/comm") == comm + "\n") return pid;
    const std::vector<int> more = children_of(pid);
    pending.insert(pending.end(), more.begin(), more.end());
  }
  return -1;
}

}  // namespace dsh::local_it
