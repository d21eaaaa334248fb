// SPDX-License-Identifier: Apache-2.0
// The windows-acl runner's home: its arguments, its failure rule and denial dialect, what it
// leaves ungoverned. No status channel and no --chdir: it runs in the spawner's directory.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/confined_argv.h"
#include "dsh/sandbox/policy.h"

namespace dsh::sandbox::profiles {

// windows-acl runner arguments: `--workspace WS --temp TEMP --mode MODE`.
std::vector<std::string> windows_acl_args(const SandboxPolicy& policy, std::string_view temp_dir);

// In band: exit 127 with a "windows-acl-run: " line.
RunnerFailureRule windows_acl_failure_rule();
std::vector<std::string> windows_acl_denial_signatures();
std::vector<std::string> windows_acl_ungoverned();

}  // namespace dsh::sandbox::profiles
