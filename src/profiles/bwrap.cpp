// SPDX-License-Identifier: Apache-2.0
// bwrap profile (extended from the reference's). Order is load-bearing: the read-only root comes
// first so every later mount lands on top of it; --tmpfs /tmp precedes --bind WS WS so a workspace
// under /tmp is bound over the fresh tmpfs instead of being hidden by it.
#include "profiles/bwrap.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "seccomp_filter.h"

#include "dsh/sandbox/roots.h"
#include "profiles/landlock_run.h"
#include "profiles/netproxy.h"
#include "profiles/runner_spec.h"

namespace dsh::sandbox::profiles {

namespace {

// Nothing writes into a mask (mode 0000, and no capability to override it): one page.
constexpr std::string_view kMaskTmpfsBytes = "4096";

// `--size N --tmpfs PATH`, or a plain `--tmpfs PATH` (tmpfs' default, half of RAM) without a
// bound. bwrap 0.8: --size applies to the next --tmpfs only.
void append_sized_tmpfs(std::vector<std::string>& args, std::optional<std::uint64_t> bytes,
                        const std::string& path) {
  if (bytes) args.insert(args.end(), {"--size", std::to_string(*bytes)});
  args.insert(args.end(), {"--tmpfs", path});
}

// An allowed host Unix socket beneath the private /tmp: its node bound in (connect(2) writes to no
// mount, so a read-only bind does).
void bind_allowed_sockets_in_tmp(std::vector<std::string>& args, const SandboxPolicy& policy) {
  for (const std::string& socket : policy.network_allow.unix_sockets) {
    if (is_beneath(socket, "/tmp")) args.insert(args.end(), {"--ro-bind-try", socket, socket});
  }
}

}  // namespace

std::vector<std::string> bwrap_args(const SandboxPolicy& policy, const FsPlan& plan,
                                    std::optional<std::uint64_t> tmpfs_bytes) {
  std::vector<std::string> args = {
      "--ro-bind", "/", "/",  // the host, read-only
      "--dev", "/dev",        // a fresh minimal /dev with a writable /dev/null
      // A private PID namespace with its own /proc: with host PIDs visible, magic links such as
      // /proc/<pid>/root lead into host mount views and escape the read-only binds.
      "--unshare-pid", "--proc", "/proc", "--die-with-parent",
      // A private IPC namespace: the host's SysV segments, queues and semaphores and its POSIX
      // message queues are out of reach, and whatever the command makes dies with the run.
      "--unshare-ipc",
      // A new session: without it the command shares the caller's terminal and can push input
      // into it with TIOCSTI (CVE-2017-5226).
      "--new-session",
      // Without it a root caller's command keeps every capability and can remount / read-write.
      "--cap-drop", "ALL"};
  // A tmpfs's pages are charged to no process's data segment (RLIMIT_DATA), only to a memory
  // cgroup: with a bound, /dev/shm is a tmpfs of its own sized to it, mounted over the directory
  // bwrap's --dev made (whose tmpfs has the default size), and /tmp below likewise.
  if (tmpfs_bytes) append_sized_tmpfs(args, tmpfs_bytes, "/dev/shm");
  // The allow-list gets the same empty namespace: only lo, where dsh-netproxy's bridge listens.
  if (policy.network != NetworkPolicy::kInherit) args.emplace_back("--unshare-net");
  if (policy.mode == ConfinedSandboxMode::kWorkspaceWrite) {
    append_sized_tmpfs(args, tmpfs_bytes, "/tmp");
    args.insert(args.end(), {"--bind", policy.workspace_root, policy.workspace_root});
    // Writable first, carve-outs on top: a later mount hides what lies beneath it. The reserve
    // keeps growth linear: one push per path, no reallocation storm.
    args.reserve(args.size() +
                 3 * (plan.writable.size() + plan.pinned.size() + plan.read_only.size()) +
                 4 * plan.unreadable.size());
    for (const std::string& root : plan.writable) args.insert(args.end(), {"--bind", root, root});
    // A directory where a startup file is missing: read-only, so the name cannot be created,
    // with what exists in it writable again (each entry a mount point: it cannot be renamed or
    // removed either, EBUSY). bwrap's read-only bind remounts every mount beneath it read-only,
    // so the writable roots beneath are bound again after it.
    for (const FsPlan::Sealed& sealed : plan.sealed) {
      args.insert(args.end(), {"--ro-bind", sealed.path, sealed.path});
      for (const std::string& entry : sealed.reopened) {
        args.insert(args.end(), {"--bind", entry, entry});
      }
    }
    for (const std::string& root : plan.rebound) args.insert(args.end(), {"--bind", root, root});
    // A mount point cannot be renamed or removed (EBUSY): .git stays the directory whose hooks
    // and config are bound read-only below, instead of being moved aside for a planted one.
    for (const std::string& dir : plan.pinned) args.insert(args.end(), {"--bind", dir, dir});
    for (const PlannedPath& path : plan.read_only) {
      args.insert(args.end(), {"--ro-bind", path.path, path.path});
    }
    bind_allowed_sockets_in_tmp(args, policy);
  }
  // Every mode: what cannot be read, last, so no writable bind uncovers it.
  for (const PlannedPath& path : plan.unreadable) {
    if (path.directory) {
      args.insert(args.end(), {"--perms", "0000", "--size", std::string(kMaskTmpfsBytes), "--tmpfs",
                               path.path});
    } else {
      args.insert(args.end(), {"--ro-bind", "/dev/null", path.path});
    }
  }
  return args;
}

std::vector<std::string> bwrap_run_args(const RunNeeds& needs) {
  std::vector<std::string> args;
  if (needs.status_channels) {
    args.insert(args.end(), {"--json-status-fd", std::to_string(kBwrapStatusFd)});
  }
  if (!needs.workdir.empty()) args.insert(args.end(), {"--chdir", needs.workdir});
  return args;
}

StatusChannel bwrap_status_channel() {
  return {kBwrapStatusFd, RunnerLayer::kBwrap, StatusFormat::kBwrapJson};
}

bool bwrap_hides(std::string_view path, const SandboxPolicy& policy) {
  return is_beneath(path, "/dev") || is_beneath(path, "/proc") ||
         (policy.mode == ConfinedSandboxMode::kWorkspaceWrite && is_beneath(path, "/tmp"));
}

bool bwrap_host_writable(std::string_view path, const SandboxPolicy& policy) {
  if (policy.mode != ConfinedSandboxMode::kWorkspaceWrite) return false;
  if (is_beneath(path, policy.workspace_root)) return true;
  return std::any_of(policy.allow_write.begin(), policy.allow_write.end(),
                     [&](const std::string& root) { return is_beneath(path, root); });
}

std::optional<std::string> bwrap_argv_too_long(std::span<const std::string> argv) {
  if (argv.size() <= kBwrapMaxArgs) return std::nullopt;
  return fmt::format(
      "the confined command line has {} words and bwrap takes at most {}; the path rules add three "
      "to six per path and Landlock's read grants two per entry beside an unreadable path: name "
      "fewer paths (a directory instead of its files)",
      argv.size(), kBwrapMaxArgs);
}

RunnerFailureRule bwrap_failure_rule() { return {std::nullopt, {"bwrap: "}, std::nullopt}; }

const std::string& bwrap_seccomp_program() {
  static const std::string program = [] {
    std::string bytes(landlock_run::max_filter_bytes(), '\0');
    std::size_t size = 0;
    const int rc = landlock_run::build_filter_bytes(
        {}, reinterpret_cast<unsigned char*>(bytes.data()), bytes.size(), &size);
    // A generator bug, caught by its unit tests; never an unconfined run.
    if (rc != 0) throw std::logic_error("the seccomp program for bwrap cannot be built");
    bytes.resize(size);
    return bytes;
  }();
  return program;
}

std::vector<std::string> bwrap_seccomp_args() {
  return {"--seccomp", std::to_string(kBwrapSeccompFd)};
}

std::vector<std::string> seccomp_exec_args() {
  return {"--seccomp-fd", std::to_string(kBwrapSeccompFd)};
}

RunnerFailureRule seccomp_exec_failure_rule() {
  return {std::vector<int>{kSeccompExecFailureExit},
          {std::string(kSeccompExecLinePrefix)},
          std::nullopt};
}

namespace {

// The first stderr line bwrap wrote, as the runner-failure detail.
std::string bwrap_line(std::string_view stderr_text) {
  std::size_t start = 0;
  while (start < stderr_text.size()) {
    const std::size_t end = std::min(stderr_text.find('\n', start), stderr_text.size());
    const std::string_view line = stderr_text.substr(start, end - start);
    if (line.starts_with("bwrap: ")) return std::string(line);
    start = end + 1;
  }
  return "bwrap: exited before running the command";
}

}  // namespace

RunnerReport bwrap_status_report(std::string_view status, std::string_view stderr_tail,
                                 bool execs_command) {
  // bwrap writes {"exit-code": N} once the command it started has exited; its pre-clone failures
  // write nothing, a failed mount in the child writes only "child-pid".
  if (status.find("\"exit-code\"") != std::string_view::npos) return {};
  std::string line = bwrap_line(stderr_tail);
  if (execs_command) {
    if (auto refused = exec_refusal(line, "bwrap: execvp ")) return {{}, refused, {}};
  }
  // Our --chdir, refused inside bwrap's view: the same fact as a workdir exec cannot enter.
  if (auto error = refused_errno(line, "bwrap: Can't chdir to ")) return {{}, {}, error};
  return {std::move(line), {}, {}};
}

namespace {

using Argv = std::vector<std::string>;

// Appends `--ro-bind P P` for a runner bwrap starts inside whose path one of the profile's own
// mounts would hide (a launcher under /tmp vanishes under workspace-write's tmpfs): bound back,
// read-only, last. Each bind is a mount in every run, so none is added where it changes nothing.
void bind_back(Argv& args, const std::string& runner, const SandboxPolicy& policy) {
  if (bwrap_hides(runner, policy)) args.insert(args.end(), {"--ro-bind", runner, runner});
}

// Run flags and profile, then what the layers inside it need: the allow-list's proxy
// environment and bridge, and either the launcher (which installs the always-on seccomp filter
// itself) or, alone, that filter through descriptor 5, which the exec shim in front opens.
Argv bwrap_layer_args(const LayerContext& context, RunnerPlace /*place*/) {
  Argv args = bwrap_run_args(context.needs);
  // With landlock-run inside, its supervisor refuses a home's dot-entries at the call
  // (landlock_rules_writes): only a directory outside them still needs sealing.
  FsPlan plan = context.plan;
  if (context.has(RunnerLayer::kLandlockRun) &&
      landlock_rules_writes(context.needs, context.policy)) {
    plan.sealed = landlock_unruled_sealed(plan);
  }
  const Argv profile = bwrap_args(context.policy, plan, context.needs.tmpfs_bytes);
  args.insert(args.end(), profile.begin(), profile.end());
  if (context.has(RunnerLayer::kNetProxy)) {
    const Argv env = netproxy_env_args();
    args.insert(args.end(), env.begin(), env.end());
    bind_back(args, context.runners.netproxy, context.policy);
  }
  if (context.has(RunnerLayer::kLandlockRun)) {
    bind_back(args, context.runners.landlock_run, context.policy);
  } else {
    const Argv seccomp = bwrap_seccomp_args();
    args.insert(args.end(), seccomp.begin(), seccomp.end());
  }
  return args;
}

}  // namespace

const RunnerSpec& bwrap_spec() {
  static const RunnerSpec spec{
      .layer = RunnerLayer::kBwrap,
      .role = "bwrap runner",
      .backend = SandboxBackend::kBwrap,
      .confines = true,
      .source = RunnerSource::kHost,
      .installed_name = {},
      .located_by = "the config's bwrapPath, else /usr/bin, /usr/local/bin, /bin",
      .probe = RunnerProbe::kBackend,
      .program = [](const Runners& runners) { return Argv{runners.bwrap}; },
      .args = bwrap_layer_args,
      .status_channel = [](RunnerPlace) -> std::optional<StatusChannel> {
        return bwrap_status_channel();
      },
      .failure_rule = [](const Runners&) { return bwrap_failure_rule(); },
      // The always-on filter is in place under bwrap either way: the launcher's inside, or
      // bwrap's own --seccomp when it confines alone.
      .limits = [](const LayerContext&, RunnerPlace,
                   ConfinedArgv& facts) { append_kernel_refusals(facts.refused); },
      .refusal = no_refusal,
      // One dialect, also with landlock-run inside: every write the mode refuses meets bwrap's
      // read-only bind first (the VFS checks the mount, EROFS, before any LSM hook such as
      // Landlock's runs), so "read-only file system" is what a refused write prints.
      .denial_signatures = [] { return Argv{std::string(kBwrapDenial)}; },
      .enforcement = [](const LayerContext&) { return SandboxEnforcement::kFull; },
      .host_writable = bwrap_host_writable,
  };
  return spec;
}

const RunnerSpec& seccomp_exec_spec() {
  static const RunnerSpec spec{
      .layer = RunnerLayer::kSeccompExec,
      .role = "seccomp exec shim of bwrap alone",
      .backend = std::nullopt,
      .confines = false,
      .source = RunnerSource::kShipped,
      .installed_name = "dsh-seccomp-exec",
      .located_by = "beside the launcher, or the seccomp_exec_path hook",
      .probe = RunnerProbe::kSelected,
      .program = [](const Runners& runners) { return Argv{runners.seccomp_exec}; },
      .args = [](const LayerContext&, RunnerPlace) { return seccomp_exec_args(); },
      .status_channel = no_status_channel,
      .failure_rule = [](const Runners&) { return seccomp_exec_failure_rule(); },
      .limits = no_limits,
      .refusal = no_refusal,
  };
  return spec;
}

}  // namespace dsh::sandbox::profiles
