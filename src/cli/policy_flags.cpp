// SPDX-License-Identifier: Apache-2.0
#include "cli/policy_flags.h"

namespace dsh::sandbox::cli {

void add_policy_options(CLI::App& command, Options& options) {
  command.add_option("--mode", options.mode,
                     "read-only | workspace-write | danger-full-access (default: the session's, "
                     "else the config's, else read-only)");
  command.add_option("--workspace", options.workspace, "absolute workspace root (default: cwd)");
  command.add_option("--network", options.network,
                     "inherit | deny | allow:NAME,*.SUFFIX,ADDRESS[/BITS],... (default: deny, no "
                     "network, or the config's networkAllow; deny or allow: with "
                     "danger-full-access is an error; docs/network.md)");
  command.add_option("--network-deny", options.network_deny,
                     "with allow:, destinations refused even when allowed (same grammar)");
  command
      .add_option("--network-resolve", options.network_resolve,
                  "with allow:, NAME=ADDRESS: the proxy dials ADDRESS for NAME (tests, mirrors)")
      ->allow_extra_args(false);
  command.add_option("--config", options.config_path, "JSON config file");
  command.add_option("--allow-write", options.allow_write,
                     "PATH: an extra writable directory (workspace-write; repeatable)");
  command.add_option("--deny-write", options.deny_write,
                     "PATH: read-only inside a writable root (repeatable; !PATH lifts a default)");
  command.add_option("--deny-read", options.deny_read,
                     "PATH: unreadable in every mode (repeatable; !PATH lifts a default)");
  command.add_option("--allow-cache", options.allow_cache,
                     "NAMES: package caches made writable, e.g. npm,pip,cargo,go");
}

void add_bound_options(CLI::App& command, Options& options) {
  command.add_option("--max-processes", options.max_processes,
                     "tasks of the command's tree (default 4096) | unlimited");
  command.add_option("--max-memory", options.max_memory,
                     "memory of the tree, e.g. 2G (default: half of RAM) | unlimited");
}

}  // namespace dsh::sandbox::cli
