// SPDX-License-Identifier: Apache-2.0
// A policy's path rules made effective for one call: each path canonicalised once, the defaults
// added (the git state and the home's startup files inside writable roots, the secrets list, the
// cache presets' directories), and the filesystem plan every backend generator reads. The only
// place that looks at the host for them: the generators stay pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dsh/sandbox/policy.h"
#include "dsh/sandbox/result.h"
#include "policy/path_defaults.h"
#include "profiles/fs_plan.h"

namespace dsh::sandbox::policy {

struct EffectivePolicy {
  // allow_write: canonical extra writable roots, the cache presets' included (workspace-write
  // only); deny_write: every read-only carve-out in force; deny_read: every unreadable path in
  // force. Paths that do not exist are left out of the deny lists: there is nothing to protect.
  SandboxPolicy policy;
  // The defaults among the deny lists, as shown under "protected".
  std::vector<std::string> protected_paths;
  profiles::FsPlan plan;
};

struct PathContext {
  std::string home;  // the caller's home directory; empty: no home defaults
  EnvLookup env;     // for the cache presets' variables
  // Create the cache presets' directories and a missing hooks directory (a confining call);
  // false for a view that must change nothing (probe, the printed policy).
  bool create_missing = true;
  // Files and directories whose content decides later runs: the running program, the probe's
  // `true`, and what the caller adds (the per-user cache directory with its verdicts, record
  // and jobs). No extra writable root may be one of them, contain one, or lie beneath one.
  std::vector<std::string> trusted_state;
  // Every other home directory whose startup files a writable root could reach: each user's
  // from /etc/passwd, and /root (home_startup_files() is kept read-only under each, as under
  // `home`).
  std::vector<std::string> other_homes;
  // This user's own sandbox state that no confined run may read, made unreadable where it exists
  // (shown under "protected"): the background jobs' directories, whose output files hold what
  // another command printed, and the kept spills of earlier runs' output.
  std::vector<std::string> private_state;
  // Find the git state beneath the writable roots (a walk of their whole tree); false for a
  // caller that needs only the roots themselves (the record of writable workspaces).
  bool git_state = true;
};

// $HOME (when absolute), the process environment, the trusted state every process has (the
// running program, /proc/self/exe, and /usr/bin/true, /bin/true: the bwrap probe's program), and
// the homes of /etc/passwd with /root.
PathContext process_path_context();

// InvalidInput naming what to fix: an extra writable root (a cache preset's included) that is,
// contains or lies beneath a path of `context.trusted_state`; an extra writable root or carve-out
// that does not exist, a
// deny-read path containing a writable root, a protected git file with a second hard link (a
// name for it elsewhere could be written), a `!` entry naming no default.
Result<EffectivePolicy> effective_policy(const SandboxPolicy& policy, const PathContext& context);

// A path rule as a person types it, made absolute: "~/" (and "!~/") against `home`, a relative
// path against `cwd`; "!" kept in front. An absolute entry comes back normalised.
std::string absolute_rule_path(std::string_view entry, std::string_view cwd, std::string_view home);

// A comma-separated --allow-cache value (repeatable), split; empty names dropped.
std::vector<std::string> split_cache_names(const std::vector<std::string>& values);

// Why a file that decides later runs (`path`, e.g. the config or the session log) must not be
// used with these extra writable roots, or nullopt: it lies beneath one of them.
std::optional<std::string> writable_root_covering(std::string_view path,
                                                  const std::vector<std::string>& roots);

// The `policy` object of confine, probe --json and run --json: {mode, workspaceRoot, network,
// allowWrite, denyWrite, denyRead, allowCache, protected, networkAllow, networkDeny}.
nlohmann::json effective_policy_json(const EffectivePolicy& effective);

}  // namespace dsh::sandbox::policy
