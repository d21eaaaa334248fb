// SPDX-License-Identifier: Apache-2.0
// The seam's vocabulary: what a confined command may write, and how completely the
// host enforces it. Modes govern file effects only; network and process visibility are outside
// this vocabulary. Wire names are exactly the reference's.
#pragma once

#include <array>
#include <optional>
#include <string_view>

#include "dsh/sandbox/result.h"

namespace dsh::sandbox {

enum class SandboxMode {
  kReadOnly,          // "read-only": no writes except required sinks such as /dev/null
  kWorkspaceWrite,    // "workspace-write": also the workspace root and a backend temp area
  kDangerFullAccess,  // "danger-full-access": unconfined; never reaches a provider
};

// The modes a provider ever receives: SandboxMode minus danger-full-access.
enum class ConfinedSandboxMode { kReadOnly, kWorkspaceWrite };

enum class SandboxEnforcement {
  kFull,     // "full": the backend governs every file effect the mode promises
  kPartial,  // "partial": an older ABI or a weaker backend governs only a subset
};

// Network access of a confined command (an extension; the reference's modes govern file
// effects only). kInherit, the default, keeps the reference's semantics: the network is as the
// caller has it.
enum class NetworkPolicy {
  kInherit,  // "inherit"
  kDeny,     // "deny": no sockets beyond Unix-domain ones
};

// In the reference's SANDBOX_MODES order.
inline constexpr std::array<SandboxMode, 3> kSandboxModes = {
    SandboxMode::kReadOnly, SandboxMode::kWorkspaceWrite, SandboxMode::kDangerFullAccess};

std::string_view wire_name(SandboxMode mode) noexcept;
std::string_view wire_name(ConfinedSandboxMode mode) noexcept;
std::string_view wire_name(SandboxEnforcement enforcement) noexcept;
std::string_view wire_name(NetworkPolicy network) noexcept;

// Exact wire names only (case-sensitive, as the reference). An unknown name is an error that
// lists the valid ones.
Result<SandboxMode> parse_sandbox_mode(std::string_view name);
Result<ConfinedSandboxMode> parse_confined_sandbox_mode(std::string_view name);
Result<SandboxEnforcement> parse_sandbox_enforcement(std::string_view name);
Result<NetworkPolicy> parse_network_policy(std::string_view name);

SandboxMode to_sandbox_mode(ConfinedSandboxMode mode) noexcept;
// nullopt for danger-full-access, which is not a confined mode.
std::optional<ConfinedSandboxMode> to_confined_mode(SandboxMode mode) noexcept;

}  // namespace dsh::sandbox
