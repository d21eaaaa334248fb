// SPDX-License-Identifier: Apache-2.0
#include "dsh/sandbox/modes.h"

#include <fmt/format.h>

#include "base/text.h"
#include "dsh/sandbox/denial.h"

namespace dsh::sandbox {

std::string_view wire_name(SandboxMode mode) noexcept {
  switch (mode) {
    case SandboxMode::kReadOnly:
      return "read-only";
    case SandboxMode::kWorkspaceWrite:
      return "workspace-write";
    case SandboxMode::kDangerFullAccess:
      return "danger-full-access";
  }
  return "invalid-mode";
}

std::string_view wire_name(ConfinedSandboxMode mode) noexcept {
  return wire_name(to_sandbox_mode(mode));
}

std::string_view wire_name(SandboxEnforcement enforcement) noexcept {
  return enforcement == SandboxEnforcement::kFull ? "full" : "partial";
}

std::string_view wire_name(DenialSource source) noexcept {
  return source == DenialSource::kKernel ? "kernel" : "stderr";
}

std::string_view wire_name(NetworkPolicy network) noexcept {
  switch (network) {
    case NetworkPolicy::kInherit:
      return "inherit";
    case NetworkPolicy::kDeny:
      return "deny";
    case NetworkPolicy::kAllowList:
      return "allow-list";
  }
  return "invalid-network";
}

Result<SandboxMode> parse_sandbox_mode(std::string_view name) {
  for (const SandboxMode mode : kSandboxModes) {
    if (wire_name(mode) == name) return mode;
  }
  return InvalidInput{fmt::format(
      "unknown sandbox mode {}; expected one of: read-only, workspace-write, danger-full-access",
      text::quoted(name))};
}

Result<ConfinedSandboxMode> parse_confined_sandbox_mode(std::string_view name) {
  if (name == wire_name(SandboxMode::kDangerFullAccess)) {
    return InvalidInput{
        "sandbox mode \"danger-full-access\" is not a confined mode: it runs the command "
        "unconfined and never reaches a sandbox provider; use read-only or workspace-write"};
  }
  for (const auto mode : {ConfinedSandboxMode::kReadOnly, ConfinedSandboxMode::kWorkspaceWrite}) {
    if (wire_name(mode) == name) return mode;
  }
  return InvalidInput{
      fmt::format("unknown confined sandbox mode {}; expected one of: read-only, workspace-write",
                  text::quoted(name))};
}

Result<SandboxEnforcement> parse_sandbox_enforcement(std::string_view name) {
  for (const auto enforcement : {SandboxEnforcement::kFull, SandboxEnforcement::kPartial}) {
    if (wire_name(enforcement) == name) return enforcement;
  }
  return InvalidInput{fmt::format("unknown sandbox enforcement {}; expected one of: full, partial",
                                  text::quoted(name))};
}

Result<NetworkPolicy> parse_network_policy(std::string_view name) {
  for (const auto network :
       {NetworkPolicy::kInherit, NetworkPolicy::kDeny, NetworkPolicy::kAllowList}) {
    if (wire_name(network) == name) return network;
  }
  return InvalidInput{fmt::format(
      "unknown network policy {}; expected one of: inherit, deny, allow-list (on the command "
      "line: allow:NAME,*.SUFFIX,ADDRESS,...)",
      text::quoted(name))};
}

SandboxMode to_sandbox_mode(ConfinedSandboxMode mode) noexcept {
  return mode == ConfinedSandboxMode::kReadOnly ? SandboxMode::kReadOnly
                                                : SandboxMode::kWorkspaceWrite;
}

std::optional<ConfinedSandboxMode> to_confined_mode(SandboxMode mode) noexcept {
  switch (mode) {
    case SandboxMode::kReadOnly:
      return ConfinedSandboxMode::kReadOnly;
    case SandboxMode::kWorkspaceWrite:
      return ConfinedSandboxMode::kWorkspaceWrite;
    case SandboxMode::kDangerFullAccess:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace dsh::sandbox
