// SPDX-License-Identifier: Apache-2.0
// What every `dsh-sandbox` subcommand reads before it acts: the config file, the workspace, the
// provider with the per-user verdict cache.
#pragma once

#include <string>

#include "dsh/sandbox/local_provider.h"

namespace dsh::sandbox::cli {

struct Setup {
  LocalSandboxConfig provider;
  SandboxMode mode = SandboxMode::kReadOnly;  // the fail-safe default
};

// The config file holds the provider's keys and the default mode; an empty path is no file.
Setup load_setup(const std::string& path);

// An absolute existing directory (the working directory when `given` is empty), resolved
// realpath-first. InvalidSandboxInputError otherwise.
std::string workspace_root(const std::string& given);

LocalSandboxProvider make_provider(const LocalSandboxConfig& config);

}  // namespace dsh::sandbox::cli
