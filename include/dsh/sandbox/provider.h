// SPDX-License-Identifier: Apache-2.0
// The sandbox seam: confine(argv, policy) returns the argv to spawn instead of the
// caller's, or throws. Silently passing a command through unconfined is never legal.
#pragma once

#include <span>
#include <string>

#include "dsh/sandbox/confined_argv.h"
#include "dsh/sandbox/policy.h"

namespace dsh::sandbox {

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
  ConfinedArgv confine(std::span<const std::string> argv, const SandboxPolicy& policy);

 protected:
  SandboxProvider() = default;

 private:
  // Called only with a validated argv and policy.
  virtual ConfinedArgv confine_validated(std::span<const std::string> argv,
                                         const SandboxPolicy& policy) = 0;
};

}  // namespace dsh::sandbox
