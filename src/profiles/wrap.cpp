// SPDX-License-Identifier: Apache-2.0
// A selected backend's whole answer: argv plus the facts a consumer classifies with.
// Enforcement is derived from what is not governed, so "partial" always comes with its reasons.
#include <stdexcept>

#include <fmt/format.h>

#include "seccomp_filter.h"

#include "dsh/sandbox/roots.h"
#include "profiles/profiles.h"

namespace dsh::sandbox::profiles {

namespace {

using Argv = std::vector<std::string>;

constexpr std::string_view kLandlockNotice =
    "landlock-run: partial enforcement (older Landlock ABI)";

RunnerFailureRule bwrap_rule() { return {std::nullopt, {"bwrap: "}, std::nullopt}; }

// Exit 125 plus a "landlock-run: " line that is not the partial notice: the launcher failed.
RunnerFailureRule landlock_rule() {
  return {std::vector<int>{125},
          {"landlock-run: "},
          std::vector<std::string>{std::string(kLandlockNotice)}};
}

// Landlock governs file writes, not file metadata; --deny-metadata's seccomp filter closes that
// gap under read-only only, and older ABIs govern fewer write paths.
Argv landlock_ungoverned(const SandboxPolicy& policy, const LandlockFeatures& features) {
  Argv gaps;
  if (features.abi < 3) gaps.emplace_back("file truncation (Landlock ABI < 3)");
  if (features.abi < 5) gaps.emplace_back("ioctl on device files (Landlock ABI < 5)");
  if (policy.mode == ConfinedSandboxMode::kWorkspaceWrite) {
    gaps.emplace_back(
        "file metadata outside the workspace: chmod, chown, utimes and extended attributes "
        "(Landlock does not govern them)");
  } else if (!features.deny_metadata) {
    gaps.emplace_back(
        "file metadata: chmod, chown, utimes and extended attributes (Landlock does not govern "
        "them and seccomp is unavailable)");
  }
  if (gaps.empty() && features.enforcement == SandboxEnforcement::kPartial) {
    gaps.emplace_back("write paths of a newer Landlock ABI than this kernel's");
  }
  return gaps;
}

// What every Linux backend refuses (landlock-run's always-on seccomp filter, which bwrap alone
// loads through --seccomp): kernel objects the command cannot be given a private copy of.
void append_kernel_refusals(Argv& refused) {
  refused.insert(
      refused.end(),
      {"SysV IPC and POSIX message queues: shmget, shmat, shmctl, shmdt, msg*, sem*, mq_* fail "
       "with EPERM (on the host they reach the caller's objects; under bwrap the run's IPC "
       "namespace is private as well)",
       "kernel keyrings: add_key, keyctl and request_key fail with EPERM (keys belong to the "
       "caller's session, and request_key makes the kernel run a host helper as root)",
       "user namespaces: unshare and clone with CLONE_NEWUSER and setns fail with EPERM, clone3 "
       "with ENOSYS (a new user namespace hands back every capability the sandbox dropped)",
       "personality beyond PER_LINUX, PER_LINUX32 and UNAME26 fails with EPERM (it would weaken "
       "the memory layout of what the command executes, e.g. ADDR_NO_RANDOMIZE)"});
}

// The Landlock backend runs on the host's /dev.
void append_host_device_refusals(Argv& refused) {
  refused.insert(
      refused.end(),
      {"pseudo-terminals: /dev/ptmx and /dev/pts are the host's, beside the person's other "
       "terminals, so opening a pty fails with EACCES (script, tmux, pty.openpty)",
       "POSIX shared memory and semaphores: /dev/shm is the host's, holding other programs' "
       "objects, so shm_open and sem_open fail with EACCES (Python multiprocessing locks)"});
}

Argv windows_acl_ungoverned() {
  return {"objects that grant Everyone write access stay writable",
          "NTFS hard links alias files inside and outside the workspace",
          "FAT volumes outside the grants"};
}

// Appends `runner args... --` to `out`.
void append_runner(Argv& out, const std::string& runner, const Argv& args) {
  out.push_back(runner);
  out.insert(out.end(), args.begin(), args.end());
  out.emplace_back("--");
}

ConfinedArgv facts_for(const Selection& selection, const SandboxPolicy& policy) {
  ConfinedArgv facts;
  facts.network = policy.network;
  switch (selection.backend) {
    case SandboxBackend::kBwrap:
      facts.denial_signatures = {"read-only file system"};
      facts.runner_failure_rules = {bwrap_rule()};
      if (selection.landlock) {
        facts.denial_signatures.emplace_back("permission denied");
        facts.runner_failure_rules.push_back(landlock_rule());
      }
      append_kernel_refusals(facts.refused);
      break;
    case SandboxBackend::kLandlock:
      facts.denial_signatures = {"permission denied"};
      facts.runner_failure_rules = {landlock_rule()};
      facts.ungoverned = landlock_ungoverned(policy, selection.landlock.value());
      append_kernel_refusals(facts.refused);
      append_host_device_refusals(facts.refused);
      break;
    case SandboxBackend::kSeatbelt:
      facts.denial_signatures = {"operation not permitted"};
      facts.runner_failure_rules = {{std::nullopt, {"sandbox-exec: "}, std::nullopt}};
      break;
    case SandboxBackend::kWindowsAcl:
      facts.denial_signatures = {"access is denied", "access to the path", "permission denied"};
      facts.runner_failure_rules = {{std::vector<int>{127}, {"windows-acl-run: "}, std::nullopt}};
      facts.ungoverned = windows_acl_ungoverned();
      break;
  }
  facts.backend = selection_name(selection);
  facts.enforcement =
      facts.ungoverned.empty() ? SandboxEnforcement::kFull : SandboxEnforcement::kPartial;
  return facts;
}

// Whether bwrap_args(policy) mounts something fresh over `path`: its own /dev and /proc, and
// under workspace-write a tmpfs on /tmp.
bool hidden_by_profile(std::string_view path, const SandboxPolicy& policy) {
  return is_beneath(path, "/dev") || is_beneath(path, "/proc") ||
         (policy.mode == ConfinedSandboxMode::kWorkspaceWrite && is_beneath(path, "/tmp"));
}

// Appends the runners, their profiles and separators to `out` (confine()'s hot path: no copies),
// and the descriptors they read to `fds`.
void append_prefix(Argv& out, std::vector<ProvidedFd>& fds, const Selection& selection,
                   const Runners& runners, const SandboxPolicy& policy,
                   std::span<const std::string> writable_roots, std::string_view temp_dir) {
  switch (selection.backend) {
    case SandboxBackend::kBwrap: {
      Argv args = bwrap_args(policy);
      if (!selection.landlock) {
        // bwrap alone gets the launcher's always-on filter through a descriptor. In the layered
        // default the inner launcher installs that same filter itself, so bwrap loads none.
        args.insert(args.end(), {"--seccomp", std::to_string(kBwrapSeccompFd)});
        fds.push_back({kBwrapSeccompFd, bwrap_seccomp_program(),
                       "bwrap --seccomp: the seccomp program (struct sock_filter array)"});
      }
      // Defense in depth: inside bwrap's mount view, landlock-run adds IPC scoping, seccomp
      // hardening and its own capability drop. The read-only root shows it at its own path
      // unless one of the profile's own mounts covers it (a launcher under /tmp vanishes under
      // workspace-write's tmpfs): only then is it bound back, last, read-only. Each bind is a
      // mount in every run, so it is not added where it changes nothing.
      if (selection.landlock && hidden_by_profile(runners.landlock_run, policy)) {
        args.insert(args.end(), {"--ro-bind", runners.landlock_run, runners.landlock_run});
      }
      append_runner(out, runners.bwrap, args);
      if (selection.landlock) {
        append_runner(out, runners.landlock_run,
                      landlock_args(policy, *selection.landlock, LandlockPlace::kInsideBwrap));
      }
      return;
    }
    case SandboxBackend::kLandlock:
      append_runner(out, runners.landlock_run, landlock_args(policy, selection.landlock.value()));
      return;
    case SandboxBackend::kSeatbelt:
      append_runner(out, runners.sandbox_exec, {"-p", seatbelt_profile(policy, writable_roots)});
      return;
    case SandboxBackend::kWindowsAcl: {
      out.insert(out.end(), runners.windows_acl.begin(), runners.windows_acl.end());
      const Argv args = windows_acl_args(policy, temp_dir);
      out.insert(out.end(), args.begin(), args.end());
      out.emplace_back("--");
      return;
    }
  }
  throw std::logic_error("unreachable variant in SandboxBackend");
}

}  // namespace

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

std::string selection_name(const Selection& selection) {
  std::string name(backend_name(selection.backend));
  if (selection.backend == SandboxBackend::kBwrap && selection.landlock) name += "+landlock";
  return name;
}

bool host_writable(std::string_view path, SandboxBackend backend, const SandboxPolicy& policy) {
  if (policy.mode != ConfinedSandboxMode::kWorkspaceWrite) return false;
  return is_beneath(path, policy.workspace_root) ||
         (backend == SandboxBackend::kLandlock && is_beneath(path, "/tmp"));
}

std::optional<std::string> unsupported_reason(const Selection& selection, const Runners& runners,
                                              const SandboxPolicy& policy) {
  // Every runner of the chain, the layered launcher included: a layer the command could replace
  // is refused, never silently dropped (the run would be weaker than its facts say).
  std::vector<const std::string*> chain;
  if (selection.backend == SandboxBackend::kBwrap) chain.push_back(&runners.bwrap);
  if (selection.landlock && (selection.backend == SandboxBackend::kBwrap ||
                             selection.backend == SandboxBackend::kLandlock)) {
    chain.push_back(&runners.landlock_run);
  }
  for (const std::string* runner : chain) {
    if (host_writable(*runner, selection.backend, policy)) {
      return fmt::format(
          "the runner {} lies in a directory this policy makes writable, so a confined command "
          "could replace it and later runs would start the impostor unconfined; install "
          "dsh-sandbox outside /tmp and the workspace",
          *runner);
    }
  }
  if (policy.network != NetworkPolicy::kDeny) return std::nullopt;
  if (selection.backend == SandboxBackend::kWindowsAcl) {
    return "the windows-acl runner cannot deny network access";
  }
  if (selection.backend == SandboxBackend::kLandlock && !selection.landlock.value().deny_network) {
    return "landlock-run cannot deny network access on this host (seccomp is unavailable)";
  }
  return std::nullopt;
}

ConfinedArgv wrap(const Selection& selection, const Runners& runners,
                  std::span<const std::string> argv, const SandboxPolicy& policy,
                  std::span<const std::string> writable_roots, std::string_view temp_dir) {
  ConfinedArgv confined = facts_for(selection, policy);
  confined.argv.reserve(40 + argv.size());
  append_prefix(confined.argv, confined.provided_fds, selection, runners, policy, writable_roots,
                temp_dir);
  confined.argv.insert(confined.argv.end(), argv.begin(), argv.end());
  return confined;
}

ConfinedArgv wrap_runner_command(std::span<const std::string> runner_command,
                                 std::span<const std::string> failure_signatures,
                                 std::span<const std::string> argv, const SandboxPolicy& policy) {
  ConfinedArgv confined;
  confined.argv.assign(runner_command.begin(), runner_command.end());
  const Argv profile = bwrap_args(policy);
  confined.argv.insert(confined.argv.end(), profile.begin(), profile.end());
  confined.argv.emplace_back("--");
  confined.argv.insert(confined.argv.end(), argv.begin(), argv.end());
  // The operator's assertion: the mechanism is unknown, so both Linux dialects, never bare EPERM.
  confined.enforcement = SandboxEnforcement::kFull;
  confined.denial_signatures = {"read-only file system", "permission denied"};
  confined.runner_failure_rules = {
      {std::nullopt, Argv(failure_signatures.begin(), failure_signatures.end()), std::nullopt}};
  confined.backend = "runner-command";
  confined.network = policy.network;
  return confined;
}

}  // namespace dsh::sandbox::profiles
