// SPDX-License-Identifier: Apache-2.0
// Functional probes: each runs the real runner on a real profile, bounded by the
// probe timeout; a failed spawn or a timeout means unusable. An unusable backend's report
// names the cause and the fix in one line each, in the style of the kernel's sandboxer.c hints.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/local_provider.h"
#include "local/bounded_run.h"
#include "profiles/profiles.h"

namespace dsh::sandbox::local {

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
void diagnose_bwrap(BackendReport& report, const BoundedRun& run, const HostFacts& host);
void diagnose_landlock(BackendReport& report, const BoundedRun& run, const HostFacts& host);

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

}  // namespace dsh::sandbox::local
