// SPDX-License-Identifier: Apache-2.0
// One entry of a network allow- or deny-list, parsed: the structured form the proxy matches
// against and the policy canonicalises with (modes.h, canonical_network_entry). Pure.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/result.h"

namespace dsh::sandbox {

// An IPv4 address is held as its IPv4-mapped IPv6 form (::ffff:a.b.c.d), so one 16-byte
// comparison serves both families.
struct IpAddress {
  std::array<std::uint8_t, 16> bytes{};
  bool v4 = false;

  bool operator==(const IpAddress&) const = default;
};

struct NetworkEntry {
  enum class Kind { kName, kWildcard, kAddress };
  Kind kind = Kind::kName;
  std::string name;                   // kName: the name; kWildcard: the suffix without "*."
  IpAddress address;                  // kAddress
  int prefix = 128;                   // kAddress: bits of `address` that must match (IPv4: 96 + n)
  std::optional<std::uint16_t> port;  // nullopt: every port
};

// An IPv4 dotted quad or an IPv6 literal (no brackets), strictly (inet_pton).
std::optional<IpAddress> parse_ip(std::string_view text);
std::string format_ip(const IpAddress& address);
// Whether `address` lies in the first `prefix` bits of `network`.
bool in_prefix(const IpAddress& address, const IpAddress& network, int prefix);
// 1..65535 written as 1 to 5 decimal digits, nothing else.
std::optional<std::uint16_t> parse_port(std::string_view text);

// Checks an ASCII host name already in lower case: labels of [a-z0-9_-], 1..63 bytes, not
// starting or ending with '-', at most 253 bytes, and a last label that is not all digits (an
// address in a spelling inet_pton refuses, e.g. 127.1, which the resolver would still accept).
// The error says what is wrong.
Result<void> check_host_name(std::string_view name);

// Whether an entry is written as a URL (`https://host:port/path`): parse_network_entry takes
// its host and port (the scheme's port when none is written) and drops the rest.
bool is_url_entry(std::string_view entry);
// One note per URL entry of a comma-separated list, saying what it was taken as: for the CLI to
// print on stderr, so a pasted URL's path being dropped is never silent.
std::vector<std::string> network_list_notes(std::string_view list);

// Parses and canonicalises one entry (see NetworkAllowList in modes.h).
Result<NetworkEntry> parse_network_entry(std::string_view entry);
// The canonical text of a parsed entry.
std::string format_network_entry(const NetworkEntry& entry);

}  // namespace dsh::sandbox
