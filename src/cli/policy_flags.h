// SPDX-License-Identifier: Apache-2.0
// The policy options of every command that confines (confine, run, start, shell): one set, so a
// rule a person can give one of them (a secret made unreadable, a protected path, the network
// allow-list) is never silently missing from another. Also the confine and run subcommands
// themselves, so the unit tests parse exactly what the CLI parses.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace dsh::sandbox::cli {

// --mode, --workspace, --network (and its -deny and -resolve), --config, and the path rules
// (--allow-write, --deny-write, --deny-read, --allow-cache).
void add_policy_options(CLI::App& command, Options& options);

// The bounds of the command's tree: --max-processes, --max-memory.
void add_bound_options(CLI::App& command, Options& options);

// `confine` and `run` with every option of theirs, bound to `options`; the command's words go to
// the positional named "argv" (parse_command_line hands it everything after `--`).
CLI::App* add_confine_command(CLI::App& app, Options& options);
CLI::App* add_run_command(CLI::App& app, Options& options);

}  // namespace dsh::sandbox::cli
