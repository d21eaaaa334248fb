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

std::string BackendLabel(Backend backend) {
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

std::string ExpectedBackendName(Backend backend) {
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

std::string ParamLabel(const ::testing::TestParamInfo<Backend>& info) {
  return BackendLabel(info.param);
}

std::string MissingBwrapPath() { return "/nonexistent/dsh-local-it/bwrap"; }

void CopyProgram(const std::string& program, const std::string& path) {
  std::error_code error;
  std::filesystem::copy_file(program, path, error);
  ASSERT_FALSE(error) << program << " -> " << path << ": " << error.message();
  ASSERT_EQ(::chmod(path.c_str(), 0755), 0) << path;
}

std::string CopyOfProbe(const WorkDir& dir) {
  const std::string path = dir / "ll_probe";
  CopyProgram(llrt::Probe(), path);
  return path;
}

std::unique_ptr<sandbox::LocalSandboxProvider> MakeProvider(
    Backend backend, std::shared_ptr<sandbox::VerdictStore> store) {
  sandbox::LocalSandboxConfig config;
  if (backend == Backend::kLandlock) config.bwrap_path = MissingBwrapPath();
  sandbox::LocalSandboxHooks hooks;
  hooks.launcher_path =
      backend == Backend::kBwrapOnly ? "/nonexistent/dsh-local-it/landlock-run" : llrt::Launcher();
  return std::make_unique<sandbox::LocalSandboxProvider>(config, hooks, std::move(store));
}

ConfinedArgv Confine(sandbox::LocalSandboxProvider& provider, const std::vector<std::string>& argv,
                     ConfinedSandboxMode mode, const std::string& workspace,
                     NetworkPolicy network) {
  const sandbox::SandboxPolicy policy{mode, workspace, std::nullopt, network};
  return provider.confine(argv, policy);
}

std::vector<std::string> Bash(const std::string& script) { return {"/bin/bash", "-c", script}; }

RunResult Spawn(const ConfinedArgv& confined) {
  llrt::SpawnOptions options;
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
  RunResult result = llrt::Execute(confined.argv, options);
  for (const int fd : provided) ::close(fd);
  return result;
}

RunResult Cli(const std::vector<std::string>& args, const std::string& program) {
  std::vector<std::string> argv = {program};
  argv.insert(argv.end(), args.begin(), args.end());
  return llrt::Execute(argv);
}

RunResult CliWithoutNamespaces(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {DenyNamespaces(), DshSandbox()};
  argv.insert(argv.end(), args.begin(), args.end());
  return llrt::Execute(argv);
}

nlohmann::json ParseJson(const std::string& text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& error) {
    ADD_FAILURE() << "not JSON (" << error.what() << "): [" << text << "]";
    return nullptr;
  }
}

void ExpectOneCliErrorLine(const RunResult& result) {
  EXPECT_TRUE(result.ExitedWith(125)) << result.Describe();
  EXPECT_EQ(result.out, "") << result.Describe();
  const std::vector<std::string> lines = Lines(result.err);
  ASSERT_EQ(lines.size(), 1U) << result.Describe();
  EXPECT_EQ(lines[0].rfind("dsh-sandbox: ", 0), 0U) << result.Describe();
  EXPECT_EQ(result.err.back(), '\n') << result.Describe();
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string HostPidNamespace() {
  char target[256] = {};
  const ssize_t n = ::readlink("/proc/self/ns/pid", target, sizeof(target) - 1);
  return n > 0 ? std::string(target, static_cast<std::size_t>(n)) : "";
}

std::string MissingHostFeature() {
  if (llrt::KernelAbi() < 1) return "this kernel does not enforce Landlock (lsm=landlock)";
  if (::access("/usr/bin/bwrap", X_OK) != 0) return "bubblewrap is not installed";
  if (::access("/bin/bash", X_OK) != 0) return "/bin/bash is missing";
  const RunResult bwrap = llrt::Execute({"/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev", "/dev",
                                         "--unshare-pid", "--proc", "/proc", "--", "/bin/true"});
  if (!bwrap.ExitedWith(0)) return "bwrap cannot create its sandbox here: " + bwrap.err;
  return {};
}

namespace {

// No CONFIG_PROC_CHILDREN on every kernel: scan /proc for processes whose parent is `pid`.
std::vector<int> ChildrenOf(int pid) {
  std::vector<int> children;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return children;
  const std::string parent = std::to_string(pid);
  while (const dirent* entry = ::readdir(dir)) {
    if (std::isdigit(static_cast<unsigned char>(entry->d_name[0])) == 0) continue;
    const int child = std::atoi(entry->d_name);
    if (StatusField(child, "PPid") == parent) children.push_back(child);
  }
  ::closedir(dir);
  return children;
}

}  // namespace

int FindDescendant(int root, const std::string& comm) {
  std::vector<int> pending = ChildrenOf(root);
  while (!pending.empty()) {
    const int pid = pending.back();
    pending.pop_back();
    if (llrt::ReadFile("/proc/" + std::to_string(pid) + "/comm") == comm + "\n") return pid;
    const std::vector<int> more = ChildrenOf(pid);
    pending.insert(pending.end(), more.begin(), more.end());
  }
  return -1;
}

std::string StatusField(int pid, const std::string& key) {
  std::istringstream lines(llrt::ReadFile("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(key + ":", 0) == 0) {
      const std::size_t start = line.find_first_not_of(" \t", key.size() + 1);
      return start == std::string::npos ? "" : line.substr(start);
    }
  }
  return "<missing>";
}

}  // namespace dsh::local_it
