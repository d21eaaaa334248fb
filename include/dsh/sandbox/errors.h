// SPDX-License-Identifier: Apache-2.0
// The seam's error model. Two distinct failures, never confused:
//  - SandboxUnavailableError (code SANDBOX_UNAVAILABLE): no backend can confine this command on
//    this host, the backend refused the call before anything ran (it cannot honour the policy,
//    or its runner cannot be trusted), or the runner failed before the command ran. The command
//    did not run; only the last is a runner failure (detail()).
//  - InvalidSandboxInputError (code SANDBOX_INVALID_INPUT): the caller's argv, policy or config
//    is malformed. Nothing ran; the message says what to fix.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace dsh::sandbox {

enum class ConfinedSandboxMode;

// Wire codes, spelled as the reference spells them (the one exception to the naming rule).
inline constexpr std::string_view SANDBOX_UNAVAILABLE = "SANDBOX_UNAVAILABLE";      // NOLINT
inline constexpr std::string_view SANDBOX_INVALID_INPUT = "SANDBOX_INVALID_INPUT";  // NOLINT

// Base of the seam's errors: a stable machine-readable code() and a class name() matching the
// reference's `name` property. Callers branch on code(), never on message text.
class SandboxError : public std::runtime_error {
 public:
  std::string_view code() const noexcept { return code_; }
  std::string_view name() const noexcept { return name_; }

 protected:
  SandboxError(std::string_view name, std::string_view code, const std::string& message)
      : std::runtime_error(message), name_(name), code_(code) {}

 private:
  std::string_view name_;
  std::string_view code_;
};

class SandboxUnavailableError final : public SandboxError {
 public:
  // The reference's error: no backend (no detail), or the runner failed (`detail`: its line).
  explicit SandboxUnavailableError(ConfinedSandboxMode mode,
                                   std::optional<std::string> detail = std::nullopt);
  // Refused before anything ran: the backend cannot honour this call (`reason` says why and
  // what to do). Not a runner failure: detail() is empty.
  static SandboxUnavailableError refused(ConfinedSandboxMode mode, std::string reason);
  // The reference's no-backend error, followed by why each backend of the chain is unusable and
  // its fix (`why`), so the message names what is missing.
  static SandboxUnavailableError no_usable_backend(ConfinedSandboxMode mode, std::string_view why);

  ConfinedSandboxMode mode() const noexcept { return mode_; }
  // The runner's failure line (or spawn error) when the runner itself failed.
  const std::optional<std::string>& detail() const noexcept { return detail_; }
  // Why the call was refused before anything ran; set only by refused().
  const std::optional<std::string>& refusal() const noexcept { return refusal_; }

 private:
  SandboxUnavailableError(ConfinedSandboxMode mode, std::string reason, const std::string& message);

  ConfinedSandboxMode mode_;
  std::optional<std::string> detail_;
  std::optional<std::string> refusal_;
};

class InvalidSandboxInputError final : public SandboxError {
 public:
  explicit InvalidSandboxInputError(const std::string& message)
      : SandboxError("InvalidSandboxInputError", SANDBOX_INVALID_INPUT, message) {}
};

// The reference's exact message, plus " Runner failure: <detail>" when a detail is given.
std::string sandbox_unavailable_message(ConfinedSandboxMode mode,
                                        const std::optional<std::string>& detail);

// A refusal before anything ran: the mode, the reason, and that nothing ran unconfined. It
// leaves out the reference's "no sandbox backend is usable" advice, which is about a host without
// any backend, not about a call the backend cannot honour.
std::string sandbox_refused_message(ConfinedSandboxMode mode, std::string_view reason);

}  // namespace dsh::sandbox
