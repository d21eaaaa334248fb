// SPDX-License-Identifier: Apache-2.0
// The seam's vocabulary: what a confined command may write, and how completely the
// host enforces it. Modes govern file effects only; network and process visibility are outside
// this vocabulary. Wire names are exactly the reference's.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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
// effects only). kDeny is the default: a confined command has no network unless the call opens
// it with kInherit (the caller's network, the reference's semantics) or an allow-list.
// danger-full-access runs unconfined and keeps the caller's network whatever the default.
enum class NetworkPolicy {
  kInherit,  // "inherit"
  kDeny,     // "deny": no sockets beyond Unix-domain ones
  // "allow-list": the command's own network namespace has no route out; TCP goes through our
  // proxy, which dials only what NetworkAllowList admits (docs/evidence-and-network.md).
  kAllowList,
};

// The destinations of NetworkPolicy::kAllowList, each entry canonical (canonical_network_entry):
//   name[:port]        registry.npmjs.org, github.com:443 (exact name)
//   *.suffix[:port]    *.github.com: every name beneath github.com, not github.com itself
//   address[:port]     10.0.0.5, [fd00::1]:8080: an IP literal the command may dial, and a
//                      resolved address in a special range (loopback, private...) it may reach
//   address/prefix     10.0.0.0/8, fd00::/8
// A port-less entry admits every port. `deny` has the same grammar and wins over `allow`.
// `resolve` (name=address, for tests and local mirrors) maps a canonical name to an address
// instead of asking DNS, as curl's --resolve does.
struct NetworkAllowList {
  std::vector<std::string> allow;
  std::vector<std::string> deny;
  std::vector<std::string> resolve;
  // Named Unix sockets (absolute paths) a command may connect to when the network is not
  // inherited (deny or allow-list): a host socket is network, and every other one is refused.
  std::vector<std::string> unix_sockets;

  bool operator==(const NetworkAllowList&) const = default;
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

// One allow/deny entry in its canonical spelling: lower case, no trailing dot, IP literals as
// inet_ntop writes them, a CIDR's host bits cleared. Refused with a message naming the fix: NUL
// and control bytes, a non-ASCII name (give its xn-- form), an empty or over-long label (63) or
// name (253), a wildcard anywhere but a leading "*.", an all-numeric last label that is not a
// valid IPv4 address, a port outside 1..65535.
Result<std::string> canonical_network_entry(std::string_view entry);
// A comma-separated list of entries, each canonical, in order, duplicates dropped.
Result<std::vector<std::string>> parse_network_list(std::string_view list);
// One `name=address` mapping of NetworkAllowList::resolve, canonical.
Result<std::string> canonical_network_resolve(std::string_view mapping);
// The CLI's --network value: "inherit", "deny", or "allow:LIST" (the policy and its entries).
Result<std::pair<NetworkPolicy, std::vector<std::string>>> parse_network_option(
    std::string_view value);

SandboxMode to_sandbox_mode(ConfinedSandboxMode mode) noexcept;
// nullopt for danger-full-access, which is not a confined mode.
std::optional<ConfinedSandboxMode> to_confined_mode(SandboxMode mode) noexcept;

}  // namespace dsh::sandbox
