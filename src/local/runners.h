// SPDX-License-Identifier: Apache-2.0
// Where the runners are. Located once per provider (or per CLI invocation, which hands the paths
// to both its verdict store and its provider), to absolute paths, from places the ambient
// environment cannot choose: never PATH, the working directory or an environment variable.
#pragma once

#include <string>

#include "dsh/sandbox/local_provider.h"
#include "profiles/profiles.h"

namespace dsh::sandbox::local {

// `configured` when set; else the first executable among /usr/bin/bwrap, /usr/local/bin/bwrap
// and /bin/bwrap; else /usr/bin/bwrap (whose probe then reports bwrap missing).
std::string locate_bwrap(const std::string& configured);

// landlock-run beside the running executable (/proc/self/exe), as installed with dsh-sandbox;
// empty when /proc/self/exe cannot be read.
std::string launcher_beside_self();

// Every runner of the provider: bwrap as locate_bwrap(config.bwrap_path), the launcher, the
// sandbox-exec and windows-acl runners, each from its hook when the hook is set.
profiles::Runners locate_runners(const LocalSandboxConfig& config, const LocalSandboxHooks& hooks);

}  // namespace dsh::sandbox::local
