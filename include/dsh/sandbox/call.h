// SPDX-License-Identifier: Apache-2.0
// CallRequest: what a caller asks of one confined call, the same for every door. The CLI builds
// one from its flags (run, confine, start, shell), SandboxExecutor from a RunRequest (which is
// one), and the Node and Python bindings through the CLI. From it one plan is made per call:
// the mode (this request, else the session's, else the config's), the workspace resolved once
// through trusted symlinks only, the roots earlier confined runs could write (the session's and
// the per-user record's), the admission of the running program and the record of what this call
// makes writable (docs/architecture.md). Nothing here is interpreted by the caller's door alone.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dsh/sandbox/modes.h"
#include "dsh/sandbox/policy.h"

namespace dsh::sandbox {

struct CallRequest {
  std::vector<std::string> argv;  // exact argv; a shell command is {"bash", "-c", COMMAND}
  // The mode approved for this call; unset: the session's last mode, else the config's default,
  // else read-only.
  std::optional<SandboxMode> mode;
  // Absolute; empty: the session's recorded directory, else the working directory. A symlink on
  // the way is followed only outside every root a confined run could have written.
  std::string workspace_root;
  // Where the command starts: empty, the workspace root; relative, against the workspace root
  // (never against the caller's directory); absolute, as given.
  std::string workdir;
  // Unset: no network under a confined mode, and the network the caller has when unconfined
  // (a config's networkAllow then makes an allow-list of a confined call). Set: exactly this,
  // and a kDeny or kAllowList under danger-full-access is refused, since nothing would enforce
  // it.
  std::optional<NetworkPolicy> network;
  // With an allow-list: the destinations, those refused even so, and NAME=ADDRESS mappings, in
  // the grammar of --network allow:, --network-deny and --network-resolve.
  NetworkAllowList network_allow;
  // The path rules, as --allow-write, --deny-write, --deny-read and --allow-cache take them
  // (docs/boundary.md): a relative path against the working directory, "~/" against $HOME,
  // "!PATH" lifting a default. A rule the mode cannot apply is InvalidSandboxInputError.
  std::vector<std::string> allow_write;  // extra writable roots, workspace-write only
  std::vector<std::string> deny_write;   // read-only carve-outs inside writable roots
  std::vector<std::string> deny_read;    // unreadable in read-only and workspace-write
  std::vector<std::string> allow_cache;  // cache presets by name (npm, pip, cargo, go, ...)
  // A config file (docs/contract.md's keys), over the system's and the user's: the call's defaults
  // (mode, path rules, network lists); empty: none. It must lie where no confined run could have
  // written it.
  std::string config_path;
  // A session log (SessionLog): its mode and recorded directory decide this call, and its
  // refusal is logged there; empty: none. Held to the same trust check as the config.
  std::string session_path;
  // Without a session log: the caller's opaque session id (SandboxExecutionPolicy::session_id).
  std::optional<std::string> session_id;
};

}  // namespace dsh::sandbox
