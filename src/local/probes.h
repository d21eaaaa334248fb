// SPDX-License-Identifier: Apache-2.0
// Functional probes: each runs the real runner on a real profile, bounded by the
// probe timeout; a failed spawn or a timeout means unusable. An unusable backend's report
// names the cause and the fix in one line each, in the style of the kernel's sandboxer.c hints.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/local_provider.h"
#include "profiles/profiles.h"

namespace dsh::sandbox::local {

// What a probe's run came to.
struct ProbeRun {
  int spawn_error = 0;  // errno when the program could not be started
  bool timed_out = false;
  std::optional<int> exit_code;  // nullopt when it died by a signal or timed out
  std::string out;               // the first kCaptureLimit bytes of stdout
  std::string err;               // the first kCaptureLimit bytes of stderr

  bool succeeded() const { return spawn_error == 0 && !timed_out && exit_code == 0; }
};

inline constexpr std::size_t kCaptureLimit = std::size_t{16} * 1024;

// Runs a probe through exec::run, to completion or to its deadline, whichever comes first: its
// own supervisor and process group, so whatever it starts is ended when it exits or times out
// (SIGKILL at the deadline, no grace), or when the caller dies. `argv[0]` must be an absolute
// path (EINVAL otherwise: no PATH or working-directory lookup). The probe runs in /, with
// PATH=/usr/bin:/bin as its whole environment, so nothing of the caller's environment or working
// directory changes a verdict. stdin is /dev/null; no descriptor of the caller reaches it.
ProbeRun run_probe(const std::vector<std::string>& argv, double timeout_ms);

// Host settings that decide whether namespaces and Landlock can work, read from /proc and /sys.
// An unreadable setting is empty.
struct HostFacts {
  std::string apparmor_restrict_userns;   // kernel.apparmor_restrict_unprivileged_userns
  std::string max_user_namespaces;        // user.max_user_namespaces
  std::string unprivileged_userns_clone;  // kernel.unprivileged_userns_clone (Debian kernels)
  bool seccomp_filtered = false;          // this process runs under a seccomp filter
  std::string lsm_list;                   // /sys/kernel/security/lsm
  bool root = false;
};

HostFacts read_host_facts();

// Pure diagnoses of a failed probe run.
void diagnose_bwrap(BackendReport& report, const ProbeRun& run, const HostFacts& host);
void diagnose_landlock(BackendReport& report, const ProbeRun& run, const HostFacts& host);

// Whether a --features answer is this project's launcher's: the handshake line and its status
// channel (the flags every run passes besides the reference contract's).
bool answers_handshake(std::string_view features);

// `landlock-run --features` output (key=value lines) into the report.
void read_landlock_features(BackendReport& report, std::string_view features);

// The features the landlock-run profile may use, from a landlock report.
profiles::LandlockFeatures landlock_features(const BackendReport& report);

// Real probes; `report.runner` names the runner to probe.
void probe_bwrap(BackendReport& report, double timeout_ms);
void probe_landlock(BackendReport& report, double timeout_ms);
void probe_seatbelt(BackendReport& report, double timeout_ms);
void probe_windows_acl(BackendReport& report, const std::vector<std::string>& runner,
                       const std::string& temp_dir, double timeout_ms);
// The probe of the runner that heads a chain backend (RunnerProbe::kBackend), by its layer: what
// it needs besides the report, and the function. nullptr for a runner probed otherwise.
struct BackendProbeInputs {
  const profiles::Runners& runners;
  const std::string& temp_dir;
  double timeout_ms = 0;
};
using BackendProbe = void (*)(BackendReport& report, const BackendProbeInputs& inputs);
BackendProbe backend_probe(RunnerLayer layer);

// The allow-list's proxy: `report.runner` started on `-- true`, which must exit 0.
void probe_netproxy(ComponentReport& report, double timeout_ms);

// bwrap alone's exec shim, as every bwrap-alone run starts it: `shim --seccomp-fd 5 -- bwrap
// <read-only profile> --seccomp 5 -- true`, which must exit 0 (the shim opened the program and
// bwrap loaded it). nullopt when it did, else why not, one line.
std::optional<std::string> probe_seccomp_exec(const std::string& shim, const std::string& bwrap,
                                              double timeout_ms);
// What to do about an unusable shim, one line.
std::string seccomp_exec_fix();

}  // namespace dsh::sandbox::local
