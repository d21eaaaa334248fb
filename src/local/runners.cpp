// SPDX-License-Identifier: Apache-2.0
#include "local/runners.h"

#include <unistd.h>

#include "seam/call_scope.h"

namespace dsh::sandbox::local {

std::string locate_bwrap(const std::string& configured) {
  if (!configured.empty()) return configured;
  for (const char* path : {"/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap"}) {
    if (::access(path, X_OK) == 0) return path;
  }
  return "/usr/bin/bwrap";
}

std::string launcher_beside_self() {
  const std::string name(profiles::landlock_run_spec().installed_name);
  const std::string path = self_executable();
  std::string beside = path.empty() ? std::string() : path.substr(0, path.rfind('/') + 1) + name;
  // A program linked against the installed library (not the CLI) has none beside it: the
  // package's own, where it installs its programs. Beside the program stays the answer when
  // neither exists, so the refusal names the place the CLI's copy belongs.
  if (beside.empty() || ::access(beside.c_str(), X_OK) == 0) return beside;
  const std::string installed = std::string(DSH_INSTALL_BINDIR) + "/" + name;
  return ::access(installed.c_str(), X_OK) == 0 ? installed : beside;
}

profiles::Runners locate_runners(const LocalSandboxConfig& config, const LocalSandboxHooks& hooks) {
  profiles::Runners runners;
  runners.bwrap = locate_bwrap(config.bwrap_path);
  runners.landlock_run = hooks.launcher_path.empty() ? launcher_beside_self() : hooks.launcher_path;
  if (!hooks.sandbox_exec_path.empty()) runners.sandbox_exec = hooks.sandbox_exec_path;
  // The other shipped runners are installed beside the launcher, under their specs' names.
  const std::string& launcher = runners.landlock_run;
  const auto beside_launcher = [&](const profiles::RunnerSpec& spec) {
    return launcher.substr(0, launcher.rfind('/') + 1) + std::string(spec.installed_name);
  };
  runners.netproxy = beside_launcher(profiles::netproxy_spec());
  // So is bwrap alone's exec shim, unless a test places it.
  runners.seccomp_exec = hooks.seccomp_exec_path.empty()
                             ? beside_launcher(profiles::seccomp_exec_spec())
                             : hooks.seccomp_exec_path;
  runners.windows_acl = hooks.windows_acl_runner;
  runners.operator_runner = {config.runner_command, config.runner_failure_signatures,
                             config.runner_accepts_hardening};
  return runners;
}

}  // namespace dsh::sandbox::local
