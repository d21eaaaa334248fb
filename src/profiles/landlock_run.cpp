// SPDX-License-Identifier: Apache-2.0
// landlock-run grants plus the launcher's hardening options this kernel supports.
#include "profiles/landlock_run.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dsh/sandbox/roots.h"
#include "profiles/denial_line.h"
#include "profiles/netproxy.h"
#include "profiles/profiles.h"
#include "profiles/runner_spec.h"

namespace dsh::sandbox::profiles {

namespace {

// The host Unix sockets the call lets through (--allow-unix-socket), the only ones the launcher's
// supervisor connects to besides the run's own.
void append_allow_unix_socket_flags(std::vector<std::string>& args, const SandboxPolicy& policy) {
  for (const std::string& socket : policy.network_allow.unix_sockets) {
    args.insert(args.end(), {"--allow-unix-socket", socket});
  }
}

}  // namespace

std::vector<std::string> landlock_args(const SandboxPolicy& policy,
                                       const LandlockFeatures& features, LandlockPlace place,
                                       const FsPlan& plan) {
  const bool workspace_write = policy.mode == ConfinedSandboxMode::kWorkspaceWrite;
  std::vector<std::string> args;
  args.reserve(16 + 2 * (plan.read_grants.size() + plan.unlisted.size() + plan.writable.size()));
  // Inside bwrap an unreadable path is already a mode-0000 tmpfs or a nodev /dev/null, so a read
  // fails with EACCES there; the inner layer keeps `--ro /` and the ancestors stay listable.
  if (plan.unreadable.empty() || place == LandlockPlace::kInsideBwrap) {
    args.insert(args.end(), {"--ro", "/"});
  } else {
    // Grants only add access: a path is unreadable by granting everything around it instead of
    // the whole tree.
    for (const std::string& path : plan.read_grants) {
      // --ro-try: an entry removed between the listing and the launcher's start grants nothing
      // instead of failing the run.
      args.insert(args.end(), {"--ro-try", path});
    }
    // The directories on the way to an unreadable path are listable (READ_DIR alone): `ls /`
    // and `ls ~` work. A Landlock rule covers the hierarchy beneath its directory, so the names
    // in an unreadable directory are listable too; its files' contents are not (READ_FILE is a
    // separate right, ABI 1).
    for (const std::string& path : plan.unlisted) args.insert(args.end(), {"--list", path});
  }
  // /dev/null is granted as a file, never /dev: on the host /dev/shm is a world-writable tmpfs
  // holding other programs' POSIX shared memory and semaphores, and /dev/pts the person's other
  // terminals (opening a pty's peer, even through TIOCGPTPEER, is checked against its path).
  args.insert(args.end(), {"--rw", "/dev/null"});
  if (place == LandlockPlace::kInsideBwrap) {
    // bwrap's /dev is a private tmpfs: its /dev/shm directory and its devpts instance (a fresh
    // one, /dev/ptmx links into it) hold only what this run creates, and /dev/tty is the
    // controlling terminal of the run's own session (--new-session), so a pty it opened. A
    // --rw grant includes IOCTL_DEV (ABI 5), which terminal programs need.
    args.insert(args.end(), {"--rw", "/dev/pts", "--rw", "/dev/shm", "--rw", "/dev/tty"});
  }
  if (workspace_write) {
    // The host /tmp, shared and persistent, as spelled (not canonicalized), as the reference.
    args.insert(args.end(), {"--rw", "/tmp", "--rw", policy.workspace_root});
    for (const std::string& root : plan.writable) args.insert(args.end(), {"--rw", root});
  }
  if (features.scope_ipc) args.emplace_back("--scope-ipc");
  // Read-only promises no changes at all, metadata included; workspace-write needs chmod and
  // touch inside the workspace, and seccomp cannot tell inside from outside.
  if (!workspace_write && features.deny_metadata) args.emplace_back("--deny-metadata");
  if (policy.network == NetworkPolicy::kDeny) {
    args.emplace_back("--deny-network");
    // bwrap gave the run a network namespace holding lo alone (--unshare-net): a route socket
    // there lists lo, so getifaddrs(3) works; the launcher checks the namespace before it allows
    // one. In the host's namespace (Landlock alone) it stays refused.
    if (place == LandlockPlace::kInsideBwrap) args.emplace_back("--private-netns");
  }
  // The allow-list: TCP to the bridge's loopback port only (Landlock ABI 4), and no UDP or raw
  // socket at all (seccomp); bwrap's network namespace is the route's first wall.
  if (policy.network == NetworkPolicy::kAllowList && features.abi >= 4 && features.deny_network) {
    args.insert(args.end(), {"--allow-connect-port", std::to_string(kNetProxyPort)});
  }
  // With either flag above the launcher's supervisor refuses every host Unix socket but these
  // (launcher/landlock-run/unix_connect.h).
  if (landlock_guards_unix_sockets(policy, features)) append_allow_unix_socket_flags(args, policy);
  return args;
}

bool landlock_guards_unix_sockets(const SandboxPolicy& policy, const LandlockFeatures& features) {
  return policy.network == NetworkPolicy::kDeny || (policy.network == NetworkPolicy::kAllowList &&
                                                    features.abi >= 4 && features.deny_network);
}

std::vector<std::string> landlock_run_args(const RunNeeds& needs) {
  if (!needs.status_channels) return {};
  std::vector<std::string> args = {"--status-fd", std::to_string(kLauncherStatusFd)};
  if (needs.denial_evidence) args.emplace_back("--evidence");
  return args;
}

bool landlock_contains_metadata(const RunNeeds& needs, const SandboxPolicy& policy,
                                LandlockPlace place) {
  return place == LandlockPlace::kHost && needs.denial_evidence &&
         policy.mode == ConfinedSandboxMode::kWorkspaceWrite;
}

bool landlock_rules_writes(const RunNeeds& /*needs*/, const SandboxPolicy& policy) {
  return policy.mode == ConfinedSandboxMode::kWorkspaceWrite;
}

std::vector<std::string> landlock_supervisor_args(const RunNeeds& needs,
                                                  const SandboxPolicy& policy, LandlockPlace place,
                                                  const FsPlan& plan) {
  std::vector<std::string> args;
  const bool contain = landlock_contains_metadata(needs, policy, place);
  const bool rules = landlock_rules_writes(needs, policy);
  // The supervisor is needed even where no status channel reads its records
  // (landlock_run_args asks for it only with both).
  const bool asked = needs.status_channels && needs.denial_evidence;
  if ((contain || rules) && !asked) args.emplace_back("--evidence");
  if (contain) args.emplace_back("--contain-metadata");
  if (rules) {
    // Git directories and homes beneath the writable roots, decided at the call (the launcher's
    // write_rules.h), on both places: inside bwrap the launcher's supervisor runs too.
    args.emplace_back("--rule-writes");
    for (const std::string& home : plan.homes) args.insert(args.end(), {"--rule-home", home});
  }
  if (!needs.status_channels || !needs.denial_evidence) return args;
  const bool inside_bwrap = place == LandlockPlace::kInsideBwrap;
  for (const PlannedPath& path : plan.unreadable) {
    const bool guard = !inside_bwrap && landlock_host_writable(path.path, policy);
    // A noted unreadable path makes every open of the run a notification: worth it for what a
    // person named or a secret, not for the sandbox's own state, which the kernel refuses anyway.
    if (path.internal && !guard) continue;
    args.insert(args.end(), {guard ? "--guard-unreadable" : "--note-unreadable", path.path});
  }
  // Every carve-out lies inside a writable root (the plan keeps no other).
  for (const PlannedPath& path : plan.read_only) {
    args.insert(args.end(), {inside_bwrap ? "--note-read-only" : "--guard-read-only", path.path});
  }
  if (!inside_bwrap) return args;
  for (const std::string& path : plan.startup_guarded) {
    args.insert(args.end(), {"--note-read-only", path});
  }
  return args;
}

StatusChannel landlock_status_channel() {
  return {kLauncherStatusFd, RunnerLayer::kLandlockRun, StatusFormat::kLauncherLines};
}

bool landlock_host_writable(std::string_view path, const SandboxPolicy& policy) {
  if (policy.mode != ConfinedSandboxMode::kWorkspaceWrite) return false;
  if (is_beneath(path, policy.workspace_root) || is_beneath(path, "/tmp")) return true;
  return std::any_of(policy.allow_write.begin(), policy.allow_write.end(),
                     [&](const std::string& root) { return is_beneath(path, root); });
}

namespace {

constexpr std::string_view kLandlockNotice =
    "landlock-run: partial enforcement (older Landlock ABI)";

// With evidence the launcher's supervisor refuses the calls at such a path itself: the common
// case is refused and recorded, but it is no boundary (a link swapped between its lookup and the
// kernel's, or a hard link made in the run, gets through), so the path stays ungoverned.
constexpr std::string_view kSupervisorGuard =
    "; with evidence the launcher's supervisor refuses calls there, which a command swapping a "
    "link or making a hard link can get around";

}  // namespace

RunnerFailureRule landlock_failure_rule() {
  return {std::vector<int>{125},
          {"landlock-run: "},
          std::vector<std::string>{std::string(kLandlockNotice)}};
}

std::optional<std::string> landlock_metadata_refusal(const SandboxPolicy& policy,
                                                     const RunNeeds& needs, bool root) {
  if (!root || landlock_contains_metadata(needs, policy, LandlockPlace::kHost) ||
      policy.mode != ConfinedSandboxMode::kWorkspaceWrite) {
    return std::nullopt;
  }
  return std::string(
      "as root on Landlock alone, workspace-write without evidence leaves chmod, chown, utimes "
      "and extended attributes ungoverned: Landlock does not govern them, so the command could "
      "change the mode of any host file root owns (chmod 666 /etc/shadow). Keep evidence on "
      "(drop --no-evidence: the launcher's supervisor then performs those calls inside the "
      "writable roots only), use bwrap, or run as an unprivileged user");
}

std::vector<FsPlan::Sealed> landlock_unruled_sealed(const FsPlan& plan) {
  std::vector<FsPlan::Sealed> left;
  for (const FsPlan::Sealed& sealed : plan.sealed) {
    const bool ruled = std::any_of(plan.homes.begin(), plan.homes.end(), [&](const auto& home) {
      // The home itself, or a directory above a home that does not exist yet (the walk to its
      // startup files stopped there): creating the home's names is the rule's to refuse.
      if (sealed.path == home || is_beneath(home, sealed.path)) return true;
      return is_beneath(sealed.path, home) && sealed.path.size() > home.size() + 1 &&
             sealed.path[home.size() + 1] == '.';
    });
    if (!ruled) left.push_back(sealed);
  }
  return left;
}

std::optional<std::string> landlock_startup_refusal(const FsPlan& plan, bool rules_writes) {
  // With the supervisor's rules a home and its dot-entries are refused at the call; a startup
  // file's link that leads elsewhere (a missing target in a directory of its own) is not.
  if (plan.startup_guarded.empty() || (rules_writes && landlock_unruled_sealed(plan).empty())) {
    return std::nullopt;
  }
  return fmt::format(
      "a writable root reaches the home startup files ({}{}), and Landlock alone cannot keep "
      "them read-only: its grants only add access, so beneath a writable root it can neither "
      "protect an existing file nor keep a missing one from being created, and the next shell, "
      "git or Python would run what the command wrote there. Use bwrap (install it, or allow "
      "unprivileged user namespaces), or name a writable root that does not contain a home "
      "directory",
      plan.startup_guarded.front(), plan.startup_guarded.size() > 1 ? ", ..." : "");
}

// Landlock governs file writes, not file metadata; --deny-metadata's seccomp filter closes that
// gap under read-only only, and older ABIs govern fewer write paths.
// abi 0: a launcher that does not answer --features (the reference's) reported only "fully" or
// "partially enforced", not which ABI, and offers none of the seccomp filters: its gaps are
// named as that, never as an ABI it may not have.
std::vector<std::string> landlock_ungoverned(const SandboxPolicy& policy,
                                             const LandlockFeatures& features, const FsPlan& plan,
                                             bool contains_metadata) {
  std::vector<std::string> gaps;
  if (policy.mode == ConfinedSandboxMode::kWorkspaceWrite) {
    // Every carve-out lies inside a writable root (the plan keeps no other), and an unreadable
    // path there is covered by that root's read-write grant.
    for (const PlannedPath& path : plan.read_only) {
      gaps.push_back(
          fmt::format("read-only carve-out {} inside a writable root (Landlock grants "
                      "only add access{})",
                      path.path, kSupervisorGuard));
    }
    for (const PlannedPath& path : plan.unreadable) {
      if (landlock_host_writable(path.path, policy)) {
        gaps.push_back(fmt::format(
            "unreadable path {} inside a writable root (Landlock grants only add access{})",
            path.path, kSupervisorGuard));
      }
    }
  }
  const bool abi_known = features.abi > 0;
  if (abi_known && features.abi < 3) gaps.emplace_back("file truncation (Landlock ABI < 3)");
  if (abi_known && features.abi < 5) {
    gaps.emplace_back("ioctl on device files (Landlock ABI < 5)");
  }
  if (!abi_known && features.enforcement == SandboxEnforcement::kPartial) {
    gaps.emplace_back(
        "the file accesses this kernel's older Landlock ABI does not govern (file truncation "
        "below ABI 3, device ioctl below ABI 5; the launcher does not report which ABI)");
  }
  if (policy.mode == ConfinedSandboxMode::kWorkspaceWrite && !contains_metadata) {
    gaps.emplace_back(
        "file metadata outside the workspace: chmod, chown, utimes and extended attributes "
        "(Landlock does not govern them, and without evidence the launcher's supervisor does "
        "not perform them)");
  } else if (policy.mode != ConfinedSandboxMode::kWorkspaceWrite && !features.deny_metadata) {
    gaps.emplace_back(abi_known ? "file metadata: chmod, chown, utimes and extended attributes "
                                  "(Landlock does not govern them and seccomp is unavailable)"
                                : "file metadata: chmod, chown, utimes and extended attributes "
                                  "(Landlock does not govern them and this launcher has no "
                                  "seccomp metadata filter)");
  }
  if (gaps.empty() && features.enforcement == SandboxEnforcement::kPartial) {
    gaps.emplace_back("write paths of a newer Landlock ABI than this kernel's");
  }
  return gaps;
}

void append_plan_refusals(const FsPlan& plan, std::vector<std::string>& refused) {
  if (plan.unlisted.empty()) return;
  refused.push_back(fmt::format(
      "an entry created after the call started in a directory that leads to an unreadable path "
      "({}) is not readable: Landlock grants the entries that existed then, and those "
      "directories only their listing, which reaches every directory beneath them: the names "
      "in an unreadable directory are listable, its files are not readable",
      fmt::join(plan.unlisted, ", ")));
}

namespace {

// What the always-on filter refuses, one sentence a kind (each its own constant: a braced list of
// wrapped literals reads as a missing comma).
constexpr std::string_view kIpcRefusal =
    "SysV IPC and POSIX message queues: shmget, shmat, shmctl, shmdt, msg*, sem*, mq_* fail with "
    "EPERM (on the host they reach the caller's objects; under bwrap the run's IPC namespace is "
    "private as well)";
constexpr std::string_view kKeyringRefusal =
    "kernel keyrings: add_key, keyctl and request_key fail with EPERM (keys belong to the "
    "caller's session, and request_key makes the kernel run a host helper as root)";
constexpr std::string_view kUserNamespaceRefusal =
    "user namespaces: unshare and clone with CLONE_NEWUSER and setns fail with EPERM, clone3 with "
    "ENOSYS (a new user namespace hands back every capability the sandbox dropped)";
constexpr std::string_view kPersonalityRefusal =
    "personality beyond PER_LINUX, PER_LINUX32 and UNAME26 fails with EPERM (it would weaken the "
    "memory layout of what the command executes, e.g. ADDR_NO_RANDOMIZE)";
constexpr std::string_view kIoUringRefusal =
    "io_uring: io_uring_setup, io_uring_enter and io_uring_register fail with EPERM (its "
    "operations bypass the calls the sandbox watches; libuv and liburing fall back)";
constexpr std::string_view kSetIdRefusal =
    "set-user-ID and set-group-ID bits: chmod and the creating calls with one in the mode fail "
    "with EPERM (a set-id file left behind runs with its owner's privileges when anyone executes "
    "it later; cp -p of a set-id file and chmod g+s fail)";

}  // namespace

void append_kernel_refusals(std::vector<std::string>& refused) {
  for (const std::string_view sentence : {kIpcRefusal, kKeyringRefusal, kUserNamespaceRefusal,
                                          kPersonalityRefusal, kIoUringRefusal, kSetIdRefusal}) {
    refused.emplace_back(sentence);
  }
}

void append_host_device_refusals(std::vector<std::string>& refused) {
  refused.insert(
      refused.end(),
      {"pseudo-terminals: /dev/ptmx and /dev/pts are the host's, beside the person's other "
       "terminals, so opening a pty fails with EACCES (script, tmux, pty.openpty)",
       "POSIX shared memory and semaphores: /dev/shm is the host's, holding other programs' "
       "objects, so shm_open and sem_open fail with EACCES (Python multiprocessing locks)"});
}

namespace {

// `status` without the launcher's exec line.
std::string without_exec_line(std::string_view status) {
  std::string rest;
  std::size_t start = 0;
  while (start < status.size()) {
    std::size_t end = status.find('\n', start);
    end = end == std::string_view::npos ? status.size() : end + 1;
    const std::string_view line = status.substr(start, end - start);
    // A reader may have dropped the channel's last newline.
    std::string_view text = line;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
    if (text != kLauncherExecLine.substr(0, kLauncherExecLine.size() - 1)) rest.append(line);
    start = end;
  }
  return rest;
}

}  // namespace

bool landlock_status_silent(std::string_view status) {
  return status.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

RunnerReport landlock_status_report(std::string_view status) {
  // Besides its records of refusals (--evidence) and the line it writes just before the exec,
  // the launcher writes there only when it failed: what is left once those are taken out.
  const std::string failure = without_exec_line(without_denial_lines(status));
  status = failure;
  while (!status.empty() && (status.back() == '\n' || status.back() == '\r')) {
    status.remove_suffix(1);
  }
  if (auto refused = exec_refusal(status, "landlock-run: exec failed: ")) return {{}, refused, {}};
  // Its --chdir refused: the same fact as a workdir exec cannot enter.
  if (auto error = refused_errno(status, "landlock-run: cannot chdir to ")) return {{}, {}, error};
  if (!status.empty()) return {std::string(status), {}, {}};
  return {};
}

namespace {

using Argv = std::vector<std::string>;

// Run flags, the grants and hardening, then the paths its supervisor names refusals at. On the
// host it enters the workdir itself, as bwrap's --chdir does: the printed argv starts the command
// in the same directory whichever backend confines it.
Argv landlock_layer_args(const LayerContext& context, RunnerPlace place) {
  Argv args = landlock_run_args(context.needs);
  if (place == RunnerPlace::kHost && !context.needs.workdir.empty()) {
    args.insert(args.end(), {"--chdir", context.needs.workdir});
  }
  const Argv grants =
      landlock_args(context.policy, context.selection.landlock.value(), place, context.plan);
  args.insert(args.end(), grants.begin(), grants.end());
  const Argv supervisor =
      landlock_supervisor_args(context.needs, context.policy, place, context.plan);
  args.insert(args.end(), supervisor.begin(), supervisor.end());
  return args;
}

// On the host it is the whole confinement; inside bwrap, bwrap's read-only view and namespaces
// hold first, and bwrap names the filter's refusals.
void landlock_limits(const LayerContext& context, RunnerPlace place, ConfinedArgv& facts) {
  if (place != RunnerPlace::kHost) return;
  const Argv gaps = landlock_ungoverned(
      context.policy, context.selection.landlock.value(), context.plan,
      landlock_contains_metadata(context.needs, context.policy, LandlockPlace::kHost));
  facts.ungoverned.insert(facts.ungoverned.end(), gaps.begin(), gaps.end());
  append_kernel_refusals(facts.refused);
  append_plan_refusals(context.plan, facts.refused);
  append_host_device_refusals(facts.refused);
}

std::optional<std::string> landlock_refusal(const LayerContext& context, RunnerPlace place) {
  if (place != RunnerPlace::kHost) return std::nullopt;
  if (context.policy.network == NetworkPolicy::kDeny &&
      !context.selection.landlock.value().deny_network) {
    return "landlock-run cannot deny network access on this host (seccomp is unavailable)";
  }
  if (auto reason = landlock_startup_refusal(
          context.plan, landlock_rules_writes(context.needs, context.policy))) {
    return reason;
  }
  return landlock_metadata_refusal(context.policy, context.needs, context.root);
}

}  // namespace

const RunnerSpec& landlock_run_spec() {
  static const RunnerSpec spec{
      .layer = RunnerLayer::kLandlockRun,
      .role = "landlock-run launcher",
      .backend = SandboxBackend::kLandlock,
      .confines = true,
      .source = RunnerSource::kShipped,
      .installed_name = "landlock-run",
      .located_by = "beside the running dsh-sandbox (/proc/self/exe), or the launcher_path hook",
      .probe = RunnerProbe::kBackend,
      .program = [](const Runners& runners) { return Argv{runners.landlock_run}; },
      .args = landlock_layer_args,
      .status_channel = [](RunnerPlace) -> std::optional<StatusChannel> {
        return landlock_status_channel();
      },
      .failure_rule = [](const Runners&) { return landlock_failure_rule(); },
      .limits = landlock_limits,
      .refusal = landlock_refusal,
      .denial_signatures = [] { return Argv{std::string(kLandlockDenial)}; },
      // What the launcher's --probe said: partial below the ABI it fully knows.
      .enforcement =
          [](const LayerContext& context) {
            return context.selection.landlock.value().enforcement;
          },
      .host_writable = landlock_host_writable,
  };
  return spec;
}

}  // namespace dsh::sandbox::profiles
