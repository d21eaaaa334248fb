// SPDX-License-Identifier: Apache-2.0
// The seam's error model. Two distinct failures, never confused:
//  - SandboxUnavailableError (code SANDBOX_UNAVAILABLE): no backend can confine this command on
//    this host, or the runner failed before the command ran. The command did not run.
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
  explicit SandboxUnavailableError(ConfinedSandboxMode mode,
                                   std::optional<std::string> detail = std::nullopt);

  ConfinedSandboxMode mode() const noexcept { return mode_; }
  // The runner's failure line (or spawn error) when the runner itself failed.
  const std::optional<std::string>& detail() const noexcept { return detail_; }

 private:
  ConfinedSandboxMode mode_;
  std::optional<std::string> detail_;
};

class InvalidSandboxInputError final : public SandboxError {
 public:
  explicit InvalidSandboxInputError(const std::string& message)
      : SandboxError("InvalidSandboxInputError", SANDBOX_INVALID_INPUT, message) {}
};

// The reference's exact message, plus " Runner failure: <detail>" when a detail is given.
std::string sandbox_unavailable_message(ConfinedSandboxMode mode,
                                        const std::optional<std::string>& detail);

}  // namespace dsh::sandbox
