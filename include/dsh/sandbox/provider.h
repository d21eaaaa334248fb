// SPDX-License-Identifier: Apache-2.0
// The sandbox seam: confine(argv, policy) returns the argv to spawn instead of the
// caller's, or throws. Silently passing a command through unconfined is never legal.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "dsh/sandbox/confined_argv.h"
#include "dsh/sandbox/policy.h"

namespace dsh::sandbox {

// What one run needs of its wrap besides the policy.
struct ConfineRequest {
  std::span<const std::string> argv;  // the caller's command; a view, valid during confine()
  SandboxPolicy policy;
  // The absolute directory the command will run in; empty: none given. bwrap and landlock-run on
  // the host get it as `--chdir`, so the argv runs there whoever spawns it: without it a bwrap
  // whose view hides the directory (its own /dev and /proc, the private /tmp of workspace-write)
  // silently runs the command in $HOME instead.
  std::string workdir;
  // Whether the runners' out-of-band status channels are wanted (ConfinedArgv::status_channels):
  // the spawner must then open every channel the answer names.
  bool status_channels = false;
  // With status channels: whether the launcher records the refusals the policy causes
  // (landlock-run --evidence, docs/evidence-and-network.md). Off costs nothing and gives stderr
  // inference.
  bool denial_evidence = true;
  // The run's memory bound (ResourceBounds::max_memory_bytes), or nullopt: none. bwrap sizes the
  // private tmpfs mounts it makes (`/tmp`, `/dev/shm`) to it: a tmpfs is no process's data
  // segment, so without a cgroup nothing else would bound what the command writes there.
  std::optional<std::uint64_t> tmpfs_bytes;
  // The roots earlier confined runs could write, as this call's plan found them (the per-user
  // record's, the session's): no runner beneath one is trusted. Unset: what the provider was
  // built with (LocalSandboxHooks::earlier_writable_roots).
  std::optional<std::vector<std::string>> earlier_writable_roots;
};

class SandboxProvider {
 public:
  virtual ~SandboxProvider() = default;
  SandboxProvider(const SandboxProvider&) = delete;
  SandboxProvider& operator=(const SandboxProvider&) = delete;

  // Validates the request (InvalidSandboxInputError: empty argv, NUL bytes, a relative root, a
  // workspace-write root that is not an existing directory), asks the backend, then checks that
  // the backend's argv really wraps the command: [runner, ..., "--", argv...]. Anything else is
  // refused as SandboxUnavailableError, so no backend bug can hand back an unconfined argv.
  // Backend failures (SandboxUnavailableError) propagate unchanged.
  // The same as confine({argv, policy}): no workdir, no status channels.
  ConfinedArgv confine(std::span<const std::string> argv, const SandboxPolicy& policy);

  // The argv returned is exactly the argv to spawn: nobody edits it afterwards. Also validates
  // the workdir (absolute, no NUL byte) and checks that the answer names only the status channels
  // asked for, each a distinct number >= 3 named by a runner's arguments.
  ConfinedArgv confine(const ConfineRequest& request);

 protected:
  SandboxProvider() = default;

 private:
  // Called only with a validated request.
  virtual ConfinedArgv confine_validated(const ConfineRequest& request) = 0;
};

}  // namespace dsh::sandbox
