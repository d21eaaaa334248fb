// SPDX-License-Identifier: Apache-2.0
// landlock-run's home (our static launcher, alone on the host or as the second layer inside
// bwrap): its grants and hardening options, its status channel and descriptor number, its failure
// rule and denial dialect, the parser of its status reports, what it leaves ungoverned and
// refuses, and the host paths a command under it can write. Pure: no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/confined_argv.h"
#include "dsh/sandbox/policy.h"
#include "profiles/fs_plan.h"
#include "profiles/runner_report.h"
#include "profiles/runner_spec.h"

namespace dsh::sandbox::profiles {

// What landlock-run reported about this kernel: `--probe` (enforcement) and `--features`.
struct LandlockFeatures {
  SandboxEnforcement enforcement = SandboxEnforcement::kPartial;
  int abi = 0;
  bool deny_network = false;   // seccomp socket filter available
  bool scope_ipc = false;      // Landlock ABI >= 6 scoping of abstract sockets and signals
  bool deny_metadata = false;  // seccomp metadata filter available

  bool operator==(const LandlockFeatures&) const = default;
};

// Whether the launcher's supervisor keeps host Unix sockets out (it does whenever it is given
// --deny-network or --allow-connect-port), so --allow-unix-socket is passed.
bool landlock_guards_unix_sockets(const SandboxPolicy& policy, const LandlockFeatures& features);

// The launcher's status channel: above bwrap's (3), below bwrap's seccomp descriptor (5). bwrap
// passes it through to the launcher inside it.
inline constexpr int kLauncherStatusFd = 4;

// Where landlock-run runs: on the host (the Landlock backend), or as the second layer inside
// bwrap's mount namespace, whose /dev is private.
using LandlockPlace = RunnerPlace;

// landlock-run: `--ro / --rw /dev/null`, inside bwrap also `--rw /dev/pts --rw /dev/shm
// --rw /dev/tty`, under workspace-write `--rw /tmp --rw WS` and `--rw ROOT` per extra writable
// root, then the hardening options this kernel supports. With unreadable paths in the plan and
// on the host, `--ro /` becomes `--ro-try` per plan.read_grants and `--list` per plan.unlisted
// (inside bwrap, bwrap's mounts already refuse those reads with EACCES, and `--ro /` stays).
std::vector<std::string> landlock_args(const SandboxPolicy& policy,
                                       const LandlockFeatures& features,
                                       LandlockPlace place = LandlockPlace::kHost,
                                       const FsPlan& plan = {});

// The run's flags, right after the program name: `--status-fd 4` when status channels are wanted.
std::vector<std::string> landlock_run_args(const RunNeeds& needs);

// With denial evidence: the plan's paths that something already refuses, for the launcher's
// supervisor to name those refusals (`--note-unreadable P`, `--note-read-only P`): inside bwrap
// every unreadable path (a mode-0000 tmpfs or a nodev /dev/null) and every read-only carve-out
// and startup file (read-only binds); on the host the unreadable paths the launcher's own grants
// leave out. On the host a carve-out or an unreadable path inside a writable root is refused by
// nothing, so the supervisor refuses the calls there itself (`--guard-read-only P`,
// `--guard-unreadable P`), best effort: they stay in ungoverned. On the host under
// workspace-write, with evidence asked for (status channels or not), `--contain-metadata`.
std::vector<std::string> landlock_supervisor_args(const RunNeeds& needs,
                                                  const SandboxPolicy& policy, LandlockPlace place,
                                                  const FsPlan& plan);

// Whether the launcher's supervisor decides and performs the write-class calls beneath the
// writable roots (--rule-writes, with --rule-home per home a writable root reaches): under
// workspace-write, on the host and inside bwrap alike, with evidence or without (the supervisor
// then runs for the rules alone and records nothing).
bool landlock_rules_writes(const RunNeeds& needs, const SandboxPolicy& policy);

// Whether the launcher's supervisor performs chmod, chown, utimes and xattr calls inside the
// writable roots and refuses them outside (--contain-metadata): on the host under
// workspace-write, unless evidence is switched off. Landlock does not govern them; inside bwrap
// the read-only root refuses them (EROFS), and under read-only --deny-metadata refuses them all.
bool landlock_contains_metadata(const RunNeeds& needs, const SandboxPolicy& policy,
                                LandlockPlace place);

// Why Landlock alone cannot run this call for a root caller, or nullopt: workspace-write without
// the supervisor leaves file metadata ungoverned, and root owns the host's files.
std::optional<std::string> landlock_metadata_refusal(const SandboxPolicy& policy,
                                                     const RunNeeds& needs, bool root);

// The status channel landlock_run_args names.
StatusChannel landlock_status_channel();

// Whether a command under landlock-run on the host can write `path`: beneath the workspace, an
// extra writable root and the shared host /tmp, under workspace-write. `path` is compared as
// spelled.
bool landlock_host_writable(std::string_view path, const SandboxPolicy& policy);

// In band: exit 125 plus a "landlock-run: " line that is not the partial-enforcement notice.
RunnerFailureRule landlock_failure_rule();
// What the kernel says when Landlock refuses an access.
inline constexpr std::string_view kLandlockDenial = "permission denied";

// What the launcher does not govern of the mode's promise on this kernel (empty: full): with the
// plan, the read-only carve-outs and unreadable paths inside a writable root (Landlock's grants
// only add access), each named.
// Why Landlock alone cannot run this plan, or nullopt: its grants only add access, so beneath a
// writable root it can neither keep an existing startup file read-only nor keep a missing one
// from being created. Refused rather than run as partial: the next shell would run it.
// With `rules_writes` (landlock_rules_writes) the supervisor refuses those writes at the call,
// except where a startup file's link leads out of the home's dot-entries.
std::optional<std::string> landlock_startup_refusal(const FsPlan& plan, bool rules_writes);

// The sealed directories (FsPlan::sealed) the supervisor's home rule does not cover: neither a
// home of plan.homes nor beneath one of its dot-entries.
std::vector<FsPlan::Sealed> landlock_unruled_sealed(const FsPlan& plan);

std::vector<std::string> landlock_ungoverned(const SandboxPolicy& policy,
                                             const LandlockFeatures& features,
                                             const FsPlan& plan = {},
                                             bool contains_metadata = false);

// What Landlock alone refuses besides under `plan`: listing the ancestors of unreadable paths.
void append_plan_refusals(const FsPlan& plan, std::vector<std::string>& refused);

// What the launcher's always-on seccomp filter refuses (bwrap alone loads the same filter
// through --seccomp): kernel objects the command cannot be given a private copy of.
void append_kernel_refusals(std::vector<std::string>& refused);
// What the launcher on the host refuses besides: the host's own /dev/pts and /dev/shm.
void append_host_device_refusals(std::vector<std::string>& refused);

// The line the launcher writes on its status channel just before it execs the command
// (launcher/landlock-run/denial_record.h kExecLine; tests/unit/profiles checks they agree).
inline constexpr std::string_view kLauncherExecLine = "exec\n";

// The launcher's status report of a run that exited nonzero: its exec of the command refused
// (exec_refused: it is always the innermost runner), any other line (failure), or nothing.
RunnerReport landlock_status_report(std::string_view status);

// Whether the launcher's channel holds nothing at all: not even the line it writes before the
// exec, so it ended before running the command without writing its failure (a launcher that
// predates that line, or one that died): the in-band rule decides then.
bool landlock_status_silent(std::string_view status);

}  // namespace dsh::sandbox::profiles
