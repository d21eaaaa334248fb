// SPDX-License-Identifier: Apache-2.0
#include "netproxy/rules.h"

#include <idn2.h>

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

namespace dsh::sandbox::netproxy {

namespace {

bool needs_idna(std::string_view name) {
  if (std::any_of(name.begin(), name.end(),
                  [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
    return true;
  }
  return name.starts_with("xn--") || name.find(".xn--") != std::string_view::npos;
}

IpAddress v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  IpAddress address;
  address.v4 = true;
  address.bytes[10] = 0xff;
  address.bytes[11] = 0xff;
  address.bytes[12] = a;
  address.bytes[13] = b;
  address.bytes[14] = c;
  address.bytes[15] = d;
  return address;
}

IpAddress v6(std::initializer_list<std::uint8_t> head) {
  IpAddress address;
  std::size_t i = 0;
  for (const std::uint8_t byte : head) address.bytes[i++] = byte;
  return address;
}

// What a special range is to a name entry: a private network a listed name may reach (a company
// mirror on 10.x), or this host itself (loopback, link-local and its cloud metadata service at
// 169.254.169.254, the unspecified address that connects to the local host) that only an
// address entry reaches.
enum class Reach { kNamed, kHostLocal };

struct Range {
  IpAddress network;
  int prefix;  // over the 128-bit form
  std::string_view kind;
  Reach reach = Reach::kNamed;
};

const std::vector<Range>& special_ranges() {
  constexpr Reach kLocal = Reach::kHostLocal;
  static const std::vector<Range> ranges = {
      {v4(0, 0, 0, 0), 96 + 8, "unspecified", kLocal},  // "this network"; 0.0.0.0 is this host
      {v4(10, 0, 0, 0), 96 + 8, "private"},
      {v4(100, 64, 0, 0), 96 + 10, "shared address space (CGNAT)"},
      {v4(127, 0, 0, 0), 96 + 8, "loopback", kLocal},
      {v4(169, 254, 0, 0), 96 + 16, "link-local (cloud metadata)", kLocal},
      {v4(172, 16, 0, 0), 96 + 12, "private"},
      {v4(192, 0, 0, 0), 96 + 24, "IETF protocol assignments"},
      {v4(192, 0, 2, 0), 96 + 24, "documentation"},
      {v4(192, 88, 99, 0), 96 + 24, "6to4 relay anycast"},
      {v4(192, 168, 0, 0), 96 + 16, "private"},
      {v4(198, 18, 0, 0), 96 + 15, "benchmarking"},
      {v4(198, 51, 100, 0), 96 + 24, "documentation"},
      {v4(203, 0, 113, 0), 96 + 24, "documentation"},
      {v4(224, 0, 0, 0), 96 + 4, "multicast"},
      {v4(240, 0, 0, 0), 96 + 4, "reserved, broadcast"},
      {v6({}), 128, "unspecified", kLocal},
      {v6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}), 128, "loopback", kLocal},
      {v6({}), 96, "IPv4-compatible"},
      {v6({0, 0x64, 0xff, 0x9b}), 96, "NAT64"},
      {v6({0, 0x64, 0xff, 0x9b, 0, 1}), 48, "local NAT64"},
      {v6({0x01, 0x00}), 64, "discard"},
      {v6({0x20, 0x01, 0x0d, 0xb8}), 32, "documentation"},
      {v6({0x20, 0x01}), 23, "IETF protocol assignments"},
      {v6({0x20, 0x02}), 16, "6to4"},
      {v6({0xfc}), 7, "unique local (private)"},
      {v6({0xfe, 0x80}), 10, "link-local", kLocal},
      {v6({0xfe, 0xc0}), 10, "site-local (deprecated)"},
      {v6({0xff}), 8, "multicast"},
  };
  return ranges;
}

// The IPv4 address an IPv6 form carries (IPv4-compatible ::/96, NAT64 64:ff9b::/96, 6to4
// 2002::/16), as its mapped form; nullopt for any other address. A name resolving to
// 64:ff9b::7f00:1 reaches 127.0.0.1 wherever a NAT64 translator sits on the path.
std::optional<IpAddress> embedded_v4(const IpAddress& address) {
  if (address.v4) return std::nullopt;
  const auto at = [&](std::size_t offset) {
    return v4(address.bytes[offset], address.bytes[offset + 1], address.bytes[offset + 2],
              address.bytes[offset + 3]);
  };
  if (in_prefix(address, v6({}), 96) || in_prefix(address, v6({0, 0x64, 0xff, 0x9b}), 96)) {
    return at(12);
  }
  if (in_prefix(address, v6({0x20, 0x02}), 16)) return at(2);
  return std::nullopt;
}

const Range* special_range(const IpAddress& address) {
  const auto& ranges = special_ranges();
  // The most specific range names the address (::1 is loopback, not IPv4-compatible).
  const Range* found = nullptr;
  for (const Range& range : ranges) {
    if (in_prefix(address, range.network, range.prefix) &&
        (found == nullptr || range.prefix > found->prefix)) {
      found = &range;
    }
  }
  return found;
}

// Whether only an address entry may reach `address`: this host's own ranges, also when an
// IPv6 form carries one of them.
bool host_local(const IpAddress& address) {
  const Range* range = special_range(address);
  if (range != nullptr && range->reach == Reach::kHostLocal) return true;
  const std::optional<IpAddress> inner = embedded_v4(address);
  if (!inner) return false;
  range = special_range(*inner);
  return range != nullptr && range->reach == Reach::kHostLocal;
}

std::string range_text(const Range& range) {
  NetworkEntry entry;
  entry.kind = NetworkEntry::Kind::kAddress;
  entry.address = range.network;
  entry.address.v4 = range.prefix >= 96 && in_prefix(range.network, v4(0, 0, 0, 0), 96);
  entry.prefix = range.prefix;
  const std::string network =
      range.prefix == 128 ? format_ip(entry.address) + "/128" : format_network_entry(entry);
  return fmt::format("{} ({})", network, range.kind);
}

// The host as a message may show it: control and non-ASCII bytes as \xNN.
std::string shown_host(std::string_view host) {
  std::string out = "\"";
  for (const char c : host) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f || c == '"' || c == '\\') {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

Result<Destination> canonical_destination(std::string_view host, std::uint16_t port) {
  const std::string shown = shown_host(host);
  if (port == 0) return InvalidInput{fmt::format("destination {}: port 0", shown)};
  for (const char c : host) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      return InvalidInput{fmt::format("destination {}: holds a NUL or control byte", shown)};
    }
  }
  if (host.empty()) return InvalidInput{"destination: empty host"};
  Destination out;
  out.port = port;
  if (const auto address = parse_ip(host)) {
    out.address = address;
    out.host = format_ip(*address);
    return out;
  }
  std::string name(host);
  for (char& c : name) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  if (name.size() > 1 && name.back() == '.') name.pop_back();
  if (needs_idna(name)) {
    char* ascii = nullptr;
    const int rc = idn2_lookup_u8(reinterpret_cast<const std::uint8_t*>(name.c_str()),
                                  reinterpret_cast<std::uint8_t**>(&ascii),
                                  IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL);
    if (rc != IDN2_OK) {
      return InvalidInput{fmt::format("destination {}: not a valid internationalized name ({})",
                                      shown, idn2_strerror(rc))};
    }
    name = ascii;
    std::free(ascii);
  }
  if (auto valid = check_host_name(name); !valid) {
    return InvalidInput{fmt::format("destination {}: {}", shown, valid.error().message)};
  }
  out.host = std::move(name);
  return out;
}

Result<Destination> parse_authority(std::string_view authority,
                                    std::optional<std::uint16_t> default_port) {
  std::string_view host = authority;
  std::optional<std::string_view> port_text;
  if (!host.empty() && host.front() == '[') {
    const std::size_t close = host.find(']');
    if (close == std::string_view::npos) return InvalidInput{"authority: '[' without ']'"};
    const std::string_view rest = host.substr(close + 1);
    host = host.substr(1, close - 1);
    if (!parse_ip(host)) return InvalidInput{"authority: brackets hold no IPv6 address"};
    if (!rest.empty()) {
      if (rest.front() != ':') return InvalidInput{"authority: text after ']'"};
      port_text = rest.substr(1);
    }
  } else if (const std::size_t colon = host.rfind(':'); colon != std::string_view::npos) {
    port_text = host.substr(colon + 1);
    host = host.substr(0, colon);
  }
  std::uint16_t port = 0;
  if (port_text) {
    const auto parsed = parse_port(*port_text);
    if (!parsed) return InvalidInput{"authority: the port is not a number from 1 to 65535"};
    port = *parsed;
  } else if (default_port) {
    port = *default_port;
  } else {
    return InvalidInput{"authority: no port"};
  }
  return canonical_destination(host, port);
}

bool is_special_address(const IpAddress& address) { return special_range(address) != nullptr; }

Rules::Rules(const NetworkAllowList& list) {
  for (const std::string& entry : list.allow) allow_.push_back(parse_network_entry(entry).value());
  for (const std::string& entry : list.deny) deny_.push_back(parse_network_entry(entry).value());
  for (const std::string& mapping : list.resolve) {
    const std::size_t equals = mapping.find('=');
    if (equals == std::string::npos) continue;
    const auto address = parse_ip(std::string_view(mapping).substr(equals + 1));
    if (address) resolve_.emplace_back(mapping.substr(0, equals), *address);
  }
}

bool Rules::matches(const NetworkEntry& entry, const Destination& destination) {
  if (entry.port && *entry.port != destination.port) return false;
  switch (entry.kind) {
    case NetworkEntry::Kind::kName:
      return !destination.address && destination.host == entry.name;
    case NetworkEntry::Kind::kWildcard:
      return !destination.address && destination.host.size() > entry.name.size() + 1 &&
             destination.host.ends_with(entry.name) &&
             destination.host[destination.host.size() - entry.name.size() - 1] == '.';
    case NetworkEntry::Kind::kAddress:
      return destination.address && in_prefix(*destination.address, entry.address, entry.prefix);
  }
  return false;
}

bool Rules::matches_address(const NetworkEntry& entry, const IpAddress& address,
                            std::uint16_t port) {
  if (entry.kind != NetworkEntry::Kind::kAddress) return false;
  if (entry.port && *entry.port != port) return false;
  return in_prefix(address, entry.address, entry.prefix);
}

Admission Rules::admission(const Destination& destination) const {
  const auto hit = [&](const NetworkEntry& entry) { return matches(entry, destination); };
  if (std::any_of(deny_.begin(), deny_.end(), hit)) return Admission::kRefused;
  Admission best = Admission::kRefused;
  for (const NetworkEntry& entry : allow_) {
    if (!hit(entry)) continue;
    if (entry.kind == NetworkEntry::Kind::kWildcard) {
      if (best == Admission::kRefused) best = Admission::kWildcard;
    } else {
      return entry.kind == NetworkEntry::Kind::kName ? Admission::kName : Admission::kAddress;
    }
  }
  return best;
}

std::optional<AddressRefusal> Rules::address_refusal(const IpAddress& address, std::uint16_t port,
                                                     Admission how) const {
  for (const NetworkEntry& entry : deny_) {
    if (matches_address(entry, address, port)) {
      return AddressRefusal{fmt::format("the deny entry {}", format_network_entry(entry)), {}};
    }
  }
  const auto hit = [&](const NetworkEntry& entry) { return matches_address(entry, address, port); };
  if (std::any_of(allow_.begin(), allow_.end(), hit)) return std::nullopt;
  const Range* range = special_range(address);
  if (range == nullptr) return std::nullopt;
  // A name listed exactly is trusted with what it resolves to (a mirror on a private address),
  // but not with this host itself; a wildcard's names are anybody's to point anywhere.
  if (how == Admission::kName && !host_local(address)) return std::nullopt;
  NetworkEntry exact;
  exact.kind = NetworkEntry::Kind::kAddress;
  exact.address = address;
  return AddressRefusal{range_text(*range), format_network_entry(exact)};
}

std::optional<IpAddress> Rules::override_for(std::string_view name) const {
  for (const auto& [mapped, address] : resolve_) {
    if (mapped == name) return address;
  }
  return std::nullopt;
}

std::vector<std::string> proposed_allow_entries(const std::vector<std::string>& refused_paths) {
  std::vector<std::string> out;
  for (const std::string& path : refused_paths) {
    auto destination = parse_authority(path);
    if (!destination) continue;  // not a destination this proxy would have dialled
    const std::string host = destination.value().address && !destination.value().address->v4
                                 ? "[" + destination.value().host + "]"
                                 : destination.value().host;
    auto canonical = canonical_network_entry(host);
    if (!canonical) continue;
    if (std::find(out.begin(), out.end(), canonical.value()) == out.end()) {
      out.push_back(std::move(canonical).value());
    }
  }
  return out;
}

}  // namespace dsh::sandbox::netproxy
