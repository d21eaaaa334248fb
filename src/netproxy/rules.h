// SPDX-License-Identifier: Apache-2.0
// The proxy's decisions, pure: a requested host in the one spelling that is both checked and
// dialled, whether the allow- and deny-lists admit it, and whether a resolved address may be
// reached. No I/O besides libidn2's table lookups.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dsh/sandbox/modes.h"
#include "dsh/sandbox/result.h"
#include "seam/network_entry.h"

namespace dsh::sandbox::netproxy {

// A destination as the client named it, canonical: `host` is a lower-case A-label name without
// a trailing dot, or an IP literal as inet_ntop writes it (then `address` is set).
struct Destination {
  std::string host;
  std::optional<IpAddress> address;
  std::uint16_t port = 0;
};

// The host part of a request (CONNECT authority, absolute URI, SOCKS5 domain or address) made
// canonical: NUL and control bytes, spaces, '%', '@' and other bytes no host name holds are
// refused; ASCII is lower-cased and one trailing dot dropped; a name with non-ASCII bytes or an
// xn-- label goes through IDNA2008 with UTS #46 non-transitional mapping (libidn2), so a
// homograph becomes the A-label it really is; the result must pass check_host_name. Brackets
// around an IPv6 literal are the caller's to strip.
Result<Destination> canonical_destination(std::string_view host, std::uint16_t port);

// "host:port" and "[v6]:port" (CONNECT's authority form); the port is required.
Result<Destination> parse_authority(std::string_view authority,
                                    std::optional<std::uint16_t> default_port = std::nullopt);

// Loopback, private (RFC 1918, ULA), link-local, CGNAT, multicast, unspecified, broadcast,
// documentation, benchmarking, reserved, and the IPv6 forms that embed an IPv4 address
// (mapped, NAT64, 6to4): addresses an outside service has no business reaching for the command.
bool is_special_address(const IpAddress& address);

// How a destination's host passed the allow-list: the kind of entry that admitted it (an exact
// name wins over a wildcard), or kRefused.
enum class Admission { kRefused, kAddress, kName, kWildcard };

// Why a resolved address may not be reached: the range (or deny entry) it falls in, and the
// allow entry that would admit it (empty for a deny entry, which nothing overrides).
struct AddressRefusal {
  std::string range;  // "127.0.0.0/8 (loopback)", "the deny entry 10.0.0.0/8"
  std::string entry;  // "127.0.0.1"
};

class Rules {
 public:
  explicit Rules(const NetworkAllowList& list);

  // Whether the named destination may be dialled at all (before resolution): a name must match
  // an allow name or wildcard entry, an IP literal an allow address entry; nothing that matches
  // a deny entry passes.
  Admission admission(const Destination& destination) const;
  bool admits(const Destination& destination) const {
    return admission(destination) != Admission::kRefused;
  }
  // Why a resolved (or literal) address may not be connected to, for a destination admitted
  // `how`; nullopt when it may. Refused: an address in a deny entry; a special address no allow
  // address entry covers, except that an exactly listed name reaches what it resolves to unless
  // that is this host (loopback, link-local, unspecified).
  std::optional<AddressRefusal> address_refusal(const IpAddress& address, std::uint16_t port,
                                                Admission how) const;
  bool admits_address(const IpAddress& address, std::uint16_t port, Admission how) const {
    return !address_refusal(address, port, how);
  }
  // A resolve override for `name`, when one is configured.
  std::optional<IpAddress> override_for(std::string_view name) const;

 private:
  static bool matches(const NetworkEntry& entry, const Destination& destination);
  static bool matches_address(const NetworkEntry& entry, const IpAddress& address,
                              std::uint16_t port);

  std::vector<NetworkEntry> allow_;
  std::vector<NetworkEntry> deny_;
  std::vector<std::pair<std::string, IpAddress>> resolve_;
};

// What learn mode proposes for refused destinations: the `--network allow:` entries (one per
// distinct host, in first-seen order) for the paths ("host:port") of connect denial records.
std::vector<std::string> proposed_allow_entries(const std::vector<std::string>& refused_paths);

}  // namespace dsh::sandbox::netproxy
