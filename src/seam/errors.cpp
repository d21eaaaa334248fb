// SPDX-License-Identifier: Apache-2.0
#include "dsh/sandbox/errors.h"

#include <fmt/format.h>

#include "dsh/sandbox/modes.h"

namespace dsh::sandbox {

std::string sandbox_unavailable_message(ConfinedSandboxMode mode,
                                        const std::optional<std::string>& detail) {
  std::string message = fmt::format(
      "sandbox mode \"{}\" is requested but no sandbox backend is usable on this host; refusing "
      "to run the command unconfined. Install bubblewrap or run a Landlock-enforcing kernel "
      "(Linux), ensure sandbox-exec is usable (macOS), or ensure the ACL restricted-token runner "
      "can start (Windows) \u2014 otherwise switch the consumer to danger-full-access.",
      wire_name(mode));
  if (detail) message += fmt::format(" Runner failure: {}", *detail);
  return message;
}

SandboxUnavailableError::SandboxUnavailableError(ConfinedSandboxMode mode,
                                                 std::optional<std::string> detail)
    : SandboxError("SandboxUnavailableError", SANDBOX_UNAVAILABLE,
                   sandbox_unavailable_message(mode, detail)),
      mode_(mode),
      detail_(std::move(detail)) {}

}  // namespace dsh::sandbox
