// SPDX-License-Identifier: Apache-2.0
// The default path rules, one documented list each (docs/policy.md): the secrets no confined
// command reads, the home directory's startup files kept read-only when a writable root covers
// them, and the package cache presets with the environment variables each tool honours.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dsh::sandbox::policy {

// Secrets, relative to the home directory: credentials and keys a read-only command could
// otherwise read and, with the network inherited, send anywhere.
std::span<const std::string_view> home_secrets();

// Shell and tool startup files, relative to the home directory: whatever a person's next shell,
// git or editor runs or trusts.
std::span<const std::string_view> home_startup_files();

// A lookup of the process environment (getenv); tests pass their own.
using EnvLookup = std::function<std::string(std::string_view name)>;
EnvLookup process_env();

// The directories of cache preset `name` (one of cache_preset_names()) for the user whose home is
// `home`, honouring the tool's own variables (npm_config_cache, PIP_CACHE_DIR, CARGO_HOME,
// GOMODCACHE, GOCACHE, XDG_CACHE_HOME, ...). Relative variable values are ignored, as the tools
// would resolve them against a directory nobody chose.
std::vector<std::string> cache_preset_dirs(std::string_view name, std::string_view home,
                                           const EnvLookup& env);

}  // namespace dsh::sandbox::policy
