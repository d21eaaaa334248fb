// SPDX-License-Identifier: Apache-2.0
#include "local/probes.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "base/text.h"
#include "dsh/sandbox/trust.h"
#include "exec/exec.h"

namespace dsh::sandbox::local {

namespace {

std::string first_line_of_file(const char* path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  return line;
}

bool under_seccomp_filter() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Seccomp:", 0) == 0) return line.find('2') != std::string::npos;
  }
  return false;
}

// The program bwrap's probe starts inside its sandbox: true(1) from a fixed list, the first
// that passes the trust check against /tmp and $TMPDIR (never one found through the caller's
// PATH or working directory, where a planted `true` that fails would mark bwrap unusable and
// silently drop every later run to Landlock alone).
std::string trusted_true() {
  const std::vector<std::string> roots = untrusted_roots("");
  for (const char* path : {"/usr/bin/true", "/bin/true"}) {
    if (check_trusted_path(path, roots)) return path;
  }
  return "/usr/bin/true";  // missing: bwrap's exec fails and the probe says why
}

// BackendReport or ComponentReport: both name their program `runner`.
template <typename Report>
void mark_unusable(Report& report, const std::string& cause, const std::string& fix) {
  report.usable = false;
  report.cause = cause;
  report.fix = fix;
}

// A missing runner, a spawn error or a timeout: the causes every probe shares.
template <typename Report>
bool diagnose_spawn(Report& report, const ProbeRun& run, std::string_view package_fix,
                    double timeout_ms) {
  if (run.spawn_error != 0) {
    mark_unusable(report,
                  fmt::format("{} cannot be started: {}", report.runner,
                              std::generic_category().message(run.spawn_error)),
                  std::string(package_fix));
    return true;
  }
  if (run.timed_out) {
    mark_unusable(
        report, fmt::format("{} did not finish its probe within {} ms", report.runner, timeout_ms),
        "raise probeTimeoutMs in the config if this host is slow");
    return true;
  }
  return false;
}

void append_capped(std::string& sink, std::string_view chunk) {
  sink.append(chunk.substr(0, kCaptureLimit - std::min(kCaptureLimit, sink.size())));
}

}  // namespace

ProbeRun run_probe(const std::vector<std::string>& argv, double timeout_ms) {
  ProbeRun run;
  // A relative name would be searched in PATH or found in the working directory: refused.
  if (argv.empty() || !argv.front().starts_with('/')) {
    run.spawn_error = EINVAL;
    return run;
  }
  exec::Request request;
  request.argv = argv;
  // A probe's verdict decides later runs, so nothing of the caller may change it: a fixed
  // environment (no PATH entry, LD_PRELOAD or locale of the caller's) and the root directory as
  // its working directory (no program or library found relative to the caller's).
  request.workdir = std::string("/");  // a literal assigned trips GCC 12 -Wrestrict
  request.inherit_env = false;
  request.env = {{"PATH", "/usr/bin:/bin"}};
  request.timeout_ms = timeout_ms;
  request.max_timeout_ms = timeout_ms;  // the config's probe timeout is the only bound
  request.grace_ms = 0;                 // a probe past its deadline is killed outright
  // No bounds: a verdict speaks of the host, not of a run's bounds (RLIMIT_NPROC counts all of
  // this user's tasks, so a busy user would fail bwrap's clone and lose bwrap for every later
  // run), and a probe runs a fixed program under its deadline. No cgroup either (joining one is
  // a cgroup migration, milliseconds on a busy host): the supervisor alone ends the tree.
  request.bounds = {std::nullopt, std::nullopt, false};
  // The head of each stream is kept (a runner's first line names the failure); no spill file.
  request.stdout_max_bytes = kCaptureLimit;
  request.stderr_max_bytes = kCaptureLimit;
  request.max_spill_bytes = 0;
  request.on_stdout = [&run](std::string_view chunk) { append_capped(run.out, chunk); };
  request.on_stderr = [&run](std::string_view chunk) { append_capped(run.err, chunk); };
  const auto result = exec::run(request);
  if (result.spawn_error) run.spawn_error = result.spawn_error->error;
  run.timed_out = result.timed_out;
  if (!run.timed_out) run.exit_code = result.exit_code;
  return run;
}

HostFacts read_host_facts() {
  HostFacts host;
  host.apparmor_restrict_userns =
      first_line_of_file("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  host.max_user_namespaces = first_line_of_file("/proc/sys/user/max_user_namespaces");
  host.unprivileged_userns_clone = first_line_of_file("/proc/sys/kernel/unprivileged_userns_clone");
  host.seccomp_filtered = under_seccomp_filter();
  host.lsm_list = first_line_of_file("/sys/kernel/security/lsm");
  host.root = ::geteuid() == 0;
  return host;
}

void diagnose_bwrap(BackendReport& report, const ProbeRun& run, const HostFacts& host) {
  const std::string said(text::first_line(run.err));
  if (!host.root && host.apparmor_restrict_userns == "1") {
    mark_unusable(report,
                  "AppArmor blocks unprivileged user namespaces "
                  "(kernel.apparmor_restrict_unprivileged_userns=1, Ubuntu 23.10+)",
                  "give bwrap an AppArmor profile that allows userns (see "
                  "/etc/apparmor.d/bwrap-userns-restrict), or sudo sysctl "
                  "kernel.apparmor_restrict_unprivileged_userns=0");
  } else if (host.max_user_namespaces == "0") {
    mark_unusable(report, "user namespaces are disabled (user.max_user_namespaces=0)",
                  "sudo sysctl user.max_user_namespaces=15000");
  } else if (!host.root && host.unprivileged_userns_clone == "0") {
    mark_unusable(report,
                  "unprivileged user namespaces are disabled "
                  "(kernel.unprivileged_userns_clone=0)",
                  "sudo sysctl kernel.unprivileged_userns_clone=1");
  } else if (host.seccomp_filtered) {
    mark_unusable(report,
                  fmt::format("a seccomp filter on this process (a container's seccomp profile, "
                              "such as Docker's default) forbids creating namespaces: {}",
                              said),
                  "run the container with a seccomp profile that allows clone/unshare of "
                  "namespaces (docker --security-opt seccomp=...), or rely on Landlock");
  } else {
    mark_unusable(report, fmt::format("bwrap cannot create its sandbox: {}", said),
                  "run the probe by hand to see why: bwrap --ro-bind / / --dev /dev "
                  "--unshare-pid --proc /proc -- /usr/bin/true");
  }
}

void diagnose_landlock(BackendReport& report, const ProbeRun& run, const HostFacts& host) {
  const std::string said(text::first_line(run.err));
  const bool not_enforced = said.find("not enforced by this kernel") != std::string::npos;
  if (not_enforced && !host.lsm_list.empty() &&
      host.lsm_list.find("landlock") == std::string::npos) {
    mark_unusable(
        report, fmt::format("Landlock is built but not enabled (lsm={})", host.lsm_list),
        fmt::format("add landlock to the kernel command line: lsm=landlock,{}", host.lsm_list));
  } else if (not_enforced) {
    mark_unusable(report,
                  "this kernel does not enforce Landlock (built without "
                  "CONFIG_SECURITY_LANDLOCK, or disabled at boot)",
                  "run Linux 5.13+ with CONFIG_SECURITY_LANDLOCK=y and landlock in lsm=");
  } else {
    mark_unusable(report, fmt::format("landlock-run refused: {}", said),
                  fmt::format("run {} --probe by hand to see why", report.runner));
  }
}

bool answers_handshake(std::string_view features) {
  bool handshake = false;
  bool status_fd = false;
  bool list_grants = false;
  std::istringstream lines{std::string(features)};
  for (std::string line; std::getline(lines, line);) {
    handshake = handshake || line == "landlock-run=1";
    status_fd = status_fd || line == "status_fd=1";
    list_grants = list_grants || line == "list_grants=1";
  }
  return handshake && status_fd && list_grants;
}

void read_landlock_features(BackendReport& report, std::string_view features) {
  std::istringstream lines{std::string(features)};
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("abi=", 0) == 0) {
      const std::string_view digits = std::string_view(line).substr(4);
      std::from_chars(digits.data(), digits.data() + digits.size(), report.landlock_abi);
    }
    if (line == "seccomp=1") report.landlock_seccomp = true;
  }
}

profiles::LandlockFeatures landlock_features(const BackendReport& report) {
  // landlock-run scopes IPC from ABI 6 (Linux 6.12) and filters with seccomp where it can.
  return {report.enforcement, report.landlock_abi, report.landlock_seccomp,
          report.landlock_abi >= 6, report.landlock_seccomp};
}

namespace {

// `bwrap <read-only profile of /> [extra...] -- true`: the probe's sandbox.
std::vector<std::string> bwrap_probe_argv(const std::string& bwrap,
                                          const std::vector<std::string>& extra) {
  const SandboxPolicy root_read_only{ConfinedSandboxMode::kReadOnly, "/", std::nullopt};
  std::vector<std::string> argv = {bwrap};
  const std::vector<std::string> profile = profiles::bwrap_args(root_read_only);
  argv.insert(argv.end(), profile.begin(), profile.end());
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), {"--", trusted_true()});
  return argv;
}

}  // namespace

void probe_bwrap(BackendReport& report, double timeout_ms) {
  report.probed = true;
  const ProbeRun run = run_probe(bwrap_probe_argv(report.runner, {}), timeout_ms);
  if (run.succeeded()) {
    report.usable = true;
    report.enforcement = SandboxEnforcement::kFull;
    return;
  }
  if (!diagnose_spawn(report, run, "install bubblewrap: sudo apt-get install -y bubblewrap",
                      timeout_ms)) {
    diagnose_bwrap(report, run, read_host_facts());
  }
}

void probe_landlock(BackendReport& report, double timeout_ms) {
  report.probed = true;
  // --probe enforces a real ruleset: a version check would miss a kernel that has the syscalls
  // but refuses enforcement.
  const ProbeRun probe = run_probe({report.runner, "--probe"}, timeout_ms);
  if (!probe.succeeded()) {
    if (!diagnose_spawn(report, probe,
                        "reinstall dsh-sandbox: landlock-run must sit beside the dsh-sandbox "
                        "binary",
                        timeout_ms)) {
      diagnose_landlock(report, probe, read_host_facts());
    }
    return;
  }
  // Every run passes --status-fd, --evidence, --ro-try and --list, which only this project's
  // launcher knows, and it says so in its --features handshake. A launcher that does not answer it
  // (one that behaves as the reference's) would fail every run with 125: unusable, with the reason.
  const ProbeRun features = run_probe({report.runner, "--features"}, timeout_ms);
  if (!features.succeeded() || !answers_handshake(features.out)) {
    if (!diagnose_spawn(report, features, "reinstall dsh-sandbox", timeout_ms)) {
      mark_unusable(report,
                    fmt::format("{} does not answer --features with landlock-run=1, "
                                "status_fd=1 and list_grants=1: it is not the launcher built with "
                                "dsh-sandbox, and runs pass it --status-fd, --evidence, --ro-try "
                                "and --list",
                                report.runner),
                    "use the landlock-run installed beside the dsh-sandbox binary");
    }
    return;
  }
  report.usable = true;
  report.enforcement = probe.out.find("partially enforced") != std::string::npos
                           ? SandboxEnforcement::kPartial
                           : SandboxEnforcement::kFull;
  read_landlock_features(report, features.out);
}

void probe_seatbelt(BackendReport& report, double timeout_ms) {
  report.probed = true;
  const SandboxPolicy root_read_only{ConfinedSandboxMode::kReadOnly, "/", std::nullopt};
  const ProbeRun run = run_probe(
      {report.runner, "-p", profiles::seatbelt_profile(root_read_only, {}), "--", "/usr/bin/true"},
      timeout_ms);
  if (run.succeeded()) {
    report.usable = true;
    report.enforcement = SandboxEnforcement::kFull;
  } else if (!diagnose_spawn(report, run, "sandbox-exec ships with macOS; it cannot be installed",
                             timeout_ms)) {
    mark_unusable(report, fmt::format("sandbox-exec refused: {}", text::first_line(run.err)),
                  "check that sandbox-exec works on this macOS release");
  }
}

void probe_windows_acl(BackendReport& report, const std::vector<std::string>& runner,
                       const std::string& temp_dir, double timeout_ms) {
  report.probed = true;
  if (runner.empty()) {
    mark_unusable(report, "no windows-acl runner is configured", "install the windows-acl runner");
    return;
  }
  std::vector<std::string> argv = runner;
  argv.insert(argv.end(), {"--workspace", temp_dir, "--temp", temp_dir, "--mode", "read-only", "--",
                           "cmd", "/c", "exit", "0"});
  const ProbeRun run = run_probe(argv, timeout_ms);
  if (run.succeeded()) {
    report.usable = true;
    report.enforcement = SandboxEnforcement::kPartial;
  } else if (!diagnose_spawn(report, run, "install the windows-acl runner", timeout_ms)) {
    mark_unusable(report, fmt::format("windows-acl runner refused: {}", text::first_line(run.err)),
                  "run the runner by hand to see why");
  }
}

BackendProbe backend_probe(RunnerLayer layer) {
  static constexpr std::array<std::pair<RunnerLayer, BackendProbe>, 4> kProbes = {{
      {RunnerLayer::kBwrap,
       [](BackendReport& report, const BackendProbeInputs& in) {
         probe_bwrap(report, in.timeout_ms);
       }},
      {RunnerLayer::kLandlockRun,
       [](BackendReport& report, const BackendProbeInputs& in) {
         probe_landlock(report, in.timeout_ms);
       }},
      {RunnerLayer::kSeatbelt,
       [](BackendReport& report, const BackendProbeInputs& in) {
         probe_seatbelt(report, in.timeout_ms);
       }},
      {RunnerLayer::kWindowsAcl,
       [](BackendReport& report, const BackendProbeInputs& in) {
         probe_windows_acl(report, in.runners.windows_acl, in.temp_dir, in.timeout_ms);
       }},
  }};
  for (const auto& [probed, probe] : kProbes) {
    if (probed == layer) return probe;
  }
  return nullptr;
}

void probe_netproxy(ComponentReport& report, double timeout_ms) {
  report.probed = true;
  // The proxy's whole start-up (its listener, its event loop, the fork and exec of ARGV) on a
  // command that connects nowhere: a missing shared library (libidn2) or a broken build shows
  // here, not in the first allow-list run.
  const ProbeRun run = run_probe({report.runner, "--", trusted_true()}, timeout_ms);
  if (run.succeeded()) {
    report.usable = true;
    return;
  }
  constexpr std::string_view kReinstall =
      "reinstall dsh-sandbox: dsh-netproxy must sit beside the dsh-sandbox binary (cmake "
      "--install and the .deb install it)";
  if (diagnose_spawn(report, run, kReinstall, timeout_ms)) return;
  const std::string said(text::first_line(run.err));
  mark_unusable(
      report,
      fmt::format("{} failed to run a command: {}", report.runner,
                  said.empty() ? fmt::format("exit {}", run.exit_code.value_or(-1)) : said),
      fmt::format("{}; run {} -- /usr/bin/true by hand to see why", kReinstall, report.runner));
}

std::string seccomp_exec_fix() {
  return "reinstall dsh-sandbox: dsh-seccomp-exec must sit beside landlock-run (cmake --install "
         "and the .deb install it), or make Landlock usable so bwrap runs with landlock-run "
         "inside";
}

std::optional<std::string> probe_seccomp_exec(const std::string& shim, const std::string& bwrap,
                                              double timeout_ms) {
  std::vector<std::string> argv = {shim};
  const std::vector<std::string> shim_args = profiles::seccomp_exec_args();
  argv.insert(argv.end(), shim_args.begin(), shim_args.end());
  argv.emplace_back("--");
  const std::vector<std::string> bwrap_argv =
      bwrap_probe_argv(bwrap, profiles::bwrap_seccomp_args());
  argv.insert(argv.end(), bwrap_argv.begin(), bwrap_argv.end());
  const ProbeRun run = run_probe(argv, timeout_ms);
  if (run.succeeded()) return std::nullopt;
  if (run.spawn_error != 0) {
    return fmt::format("{} cannot be started: {}", shim,
                       std::generic_category().message(run.spawn_error));
  }
  if (run.timed_out) {
    return fmt::format("{} did not finish its probe within {} ms", shim, timeout_ms);
  }
  const std::string said(text::first_line(run.err));
  return fmt::format("{} did not start bwrap with its seccomp filter: {}", shim,
                     said.empty() ? fmt::format("exit {}", run.exit_code.value_or(-1)) : said);
}

}  // namespace dsh::sandbox::local
