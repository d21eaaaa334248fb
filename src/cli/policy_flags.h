// SPDX-License-Identifier: Apache-2.0
// The policy options of every command that confines (confine, run, start, shell): one set, so a
// rule a person can give one of them (a secret made unreadable, a protected path, the network
// allow-list) is never silently missing from another.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace dsh::sandbox::cli {

// --mode, --workspace, --network (and its -deny and -resolve), --config, and the path rules
// (--allow-write, --deny-write, --deny-read, --allow-cache).
void add_policy_options(CLI::App& command, Options& options);

// The bounds of the command's tree: --max-processes, --max-memory.
void add_bound_options(CLI::App& command, Options& options);

}  // namespace dsh::sandbox::cli
