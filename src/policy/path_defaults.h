// SPDX-License-Identifier: Apache-2.0
// The default path rules, one documented list each (docs/boundary.md): the secrets no confined
// command reads, the home directory's startup files kept read-only when a writable root covers
// them, and the package cache presets with the environment variables each tool honours.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dsh::sandbox::policy {

// Secrets, relative to the home directory: credentials and keys a read-only command could
// otherwise read and, with the network inherited, send anywhere.
std::span<const std::string_view> home_secrets();

// Startup files and directories, relative to a home directory: whatever a person's next shell,
// git, Python, node, ssh, package manager or desktop session runs or trusts. Read-only whenever
// a writable root reaches one, whether it exists or not (effective_policy).
std::span<const std::string_view> home_startup_files();

// A lookup of the process environment (getenv); tests pass their own.
using EnvLookup = std::function<std::string(std::string_view name)>;
EnvLookup process_env();

// Why cache preset `name` is refused (its tool executes, loads or links what the cache holds in
// place, so a confined run writing it would run code outside the sandbox later), or nullopt.
std::optional<std::string> cache_preset_refusal(std::string_view name);

// The directories of cache preset `name` (one of cache_preset_names(), not refused) for the user
// whose home is `home`: only what the tool copies or unpacks before use, never what it executes
// in place (docs/boundary.md decides each). The tool's own variables are honoured
// (npm_config_cache, PIP_CACHE_DIR, CARGO_HOME, GOMODCACHE, XDG_CACHE_HOME, ...). Relative
// variable values are ignored, as the tools would resolve them against a directory nobody chose.
std::vector<std::string> cache_preset_dirs(std::string_view name, std::string_view home,
                                           const EnvLookup& env);

}  // namespace dsh::sandbox::policy
