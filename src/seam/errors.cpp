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

std::string sandbox_refused_message(ConfinedSandboxMode mode, std::string_view reason) {
  return fmt::format(
      "sandbox mode \"{}\" is requested but this call cannot be confined: {}; the command was "
      "not run, confined or unconfined",
      wire_name(mode), reason);
}

SandboxUnavailableError::SandboxUnavailableError(ConfinedSandboxMode mode,
                                                 std::optional<std::string> detail)
    : SandboxError("SandboxUnavailableError", SANDBOX_UNAVAILABLE,
                   sandbox_unavailable_message(mode, detail)),
      mode_(mode),
      detail_(std::move(detail)) {}

SandboxUnavailableError::SandboxUnavailableError(ConfinedSandboxMode mode, std::string reason,
                                                 const std::string& message)
    : SandboxError("SandboxUnavailableError", SANDBOX_UNAVAILABLE, message),
      mode_(mode),
      refusal_(std::move(reason)) {}

SandboxUnavailableError SandboxUnavailableError::refused(ConfinedSandboxMode mode,
                                                         std::string reason) {
  std::string message = sandbox_refused_message(mode, reason);
  return {mode, std::move(reason), message};
}

SandboxUnavailableError SandboxUnavailableError::no_usable_backend(ConfinedSandboxMode mode,
                                                                   std::string_view why) {
  SandboxUnavailableError error(
      mode, std::string(),
      fmt::format("{} Why: {}", sandbox_unavailable_message(mode, std::nullopt), why));
  error.refusal_.reset();
  return error;
}

}  // namespace dsh::sandbox
