// SPDX-License-Identifier: Apache-2.0
#include "cli_run_harness.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace dsh::cli_run_it {

std::vector<std::string> cli_argv(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {dsh_sandbox()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

CliResult cli(const std::vector<std::string>& args) { return testing::execute(cli_argv(args)); }

CliResult cli_on_terminal(const std::vector<std::string>& args, const std::string& answer) {
  testing::SpawnOptions options;
  options.terminal = true;
  testing::Started run(cli_argv(args), options);
  const auto limit = std::chrono::seconds(30);
  if (run.wait_for_terminal_text("[y/N] ", limit)) run.type(answer + "\n");
  return run.wait(limit);
}

std::string missing_host_feature() {
  if (::access("/usr/bin/bwrap", X_OK) != 0) return "bubblewrap is not installed";
  if (::access("/bin/bash", X_OK) != 0) return "/bin/bash is missing";
  if (::access(dsh_sandbox(), X_OK) != 0) return std::string(dsh_sandbox()) + " is not executable";
  const CliResult probe = cli({"probe", "--json"});
  const nlohmann::json report = nlohmann::json::parse(probe.out, nullptr, false);
  if (report.is_discarded()) return "dsh-sandbox probe printed no JSON: " + probe.describe();
  // Both backends of the chain must work (the probe's Landlock entry is the kernel's own
  // answer: landlock_create_ruleset's ABI): the suite runs every claim on each of them.
  if (report.value("selected", "") != "bwrap+landlock") return "dsh-sandbox probe: " + probe.out;
  for (const nlohmann::json& backend : report.value("backends", nlohmann::json::array())) {
    if (!backend.value("usable", false)) return "dsh-sandbox probe: " + probe.out;
  }
  return {};
}

std::vector<pid_t> processes_named(const std::string& prefix) {
  std::vector<pid_t> found;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return found;
  while (const dirent* entry = ::readdir(dir)) {
    if (std::isdigit(static_cast<unsigned char>(entry->d_name[0])) == 0) continue;
    const pid_t pid = std::atoi(entry->d_name);
    if (process_cmdline(pid).rfind(prefix, 0) == 0) found.push_back(pid);
  }
  ::closedir(dir);
  return found;
}

std::string process_cmdline(pid_t pid) {
  std::string text = read_file("/proc/" + std::to_string(pid) + "/cmdline");
  std::replace(text.begin(), text.end(), '\0', ' ');
  return text;
}

char process_state(pid_t pid) {
  // /proc/<pid>/stat: "pid (comm) S ..."; comm may hold spaces and parentheses.
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return '\0';
  return stat[close + 2];
}

const std::string& host_problem() {
  static const std::string problem = missing_host_feature();
  return problem;
}

std::string backend_name(Backend backend) {
  return backend == Backend::kNatural ? "bwrap+landlock" : "landlock";
}

testing::RunResult host_git(const std::string& repo, const std::string& args) {
  testing::SpawnOptions spawn;
  spawn.env = {"HOME=/nonexistent",      "PATH=/usr/bin:/bin",   "GIT_CONFIG_NOSYSTEM=1",
               "GIT_AUTHOR_NAME=t",      "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t",
               "GIT_COMMITTER_EMAIL=t@e"};
  return testing::execute({"/bin/sh", "-c", "git -C '" + repo + "' " + args + " 2>&1"}, spawn);
}

std::string git_plant_script(const std::string& marker) {
  return "mkdir -p evil && cp -r .git/objects .git/refs .git/HEAD evil/\n"
         "printf '[core]\\n\\tfsmonitor = touch " +
         marker +
         "\\n' > evil/config\n"
         "echo ../evil > .git/commondir\n"
         "printf '#!/bin/sh\\ntouch " +
         marker +
         "\\n' > .git/hooks/post-commit\n"
         "chmod +x .git/hooks/post-commit\n"
         "true";
}

RuleTargets make_rule_targets(const TempDir& dir, const std::string& workspace) {
  RuleTargets targets{dir.mkdir("secret", 0755), workspace + "/guarded"};
  write_file(targets.secret + "/key", std::string(kSecret) + "\n", 0644);
  EXPECT_EQ(::mkdir(targets.guarded.c_str(), 0777), 0) << targets.guarded;
  ::chmod(targets.guarded.c_str(), 0777);  // past the umask
  return targets;
}

}  // namespace dsh::cli_run_it
