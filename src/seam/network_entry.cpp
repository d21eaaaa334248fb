// SPDX-License-Identifier: Apache-2.0
#include "seam/network_entry.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstring>

#include <fmt/format.h>

#include "base/text.h"
#include "dsh/sandbox/modes.h"

namespace dsh::sandbox {

namespace {

InvalidInput bad_entry(std::string_view entry, std::string_view why) {
  return InvalidInput{fmt::format("network entry {}: {}", text::quoted(entry), why)};
}

bool is_name_byte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

std::string lower_ascii(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

struct SchemePort {
  std::string_view scheme;
  std::uint16_t port;
};
constexpr std::array<SchemePort, 6> kSchemePorts = {
    {{"http", 80}, {"https", 443}, {"ws", 80}, {"wss", 443}, {"git", 9418}, {"ssh", 22}}};

// A URL's authority as an entry: `https://host:port/path` gives "host:port", `http://host/`
// "host:80" (the scheme's port). Credentials are refused rather than dropped: an allow-list is
// no place for a password.
Result<std::string> url_authority(std::string_view entry) {
  const std::size_t mark = entry.find("://");
  const std::string scheme = lower_ascii(entry.substr(0, mark));
  std::string_view rest = entry.substr(mark + 3);
  rest = rest.substr(0, std::min(rest.find_first_of("/?#"), rest.size()));
  if (rest.find('@') != std::string_view::npos) {
    return bad_entry(entry, "a URL with user information; write the host alone");
  }
  if (rest.empty()) return bad_entry(entry, "a URL without a host");
  const bool bracketed = rest.front() == '[';
  const std::size_t close = bracketed ? rest.find(']') : 0;
  const bool has_port = bracketed ? close != std::string_view::npos && close + 1 < rest.size()
                                  : rest.find(':') != std::string_view::npos;
  if (has_port) return std::string(rest);
  const auto known = std::find_if(kSchemePorts.begin(), kSchemePorts.end(),
                                  [&](const SchemePort& s) { return s.scheme == scheme; });
  if (known == kSchemePorts.end()) {
    return bad_entry(entry, "a URL whose scheme has no known port; write HOST:PORT");
  }
  return fmt::format("{}:{}", rest, known->port);
}

}  // namespace

bool is_url_entry(std::string_view entry) { return entry.find("://") != std::string_view::npos; }

std::optional<IpAddress> parse_ip(std::string_view text) {
  if (text.empty() || text.size() > 45) return std::nullopt;
  const std::string copy(text);
  IpAddress address;
  in_addr v4{};
  if (::inet_pton(AF_INET, copy.c_str(), &v4) == 1) {
    address.v4 = true;
    address.bytes[10] = 0xff;
    address.bytes[11] = 0xff;
    std::memcpy(address.bytes.data() + 12, &v4, 4);
    return address;
  }
  in6_addr v6{};
  if (::inet_pton(AF_INET6, copy.c_str(), &v6) == 1) {
    std::memcpy(address.bytes.data(), &v6, 16);
    return address;
  }
  return std::nullopt;
}

std::string format_ip(const IpAddress& address) {
  std::array<char, INET6_ADDRSTRLEN> out{};
  if (address.v4) {
    ::inet_ntop(AF_INET, address.bytes.data() + 12, out.data(), out.size());
  } else {
    ::inet_ntop(AF_INET6, address.bytes.data(), out.data(), out.size());
  }
  return out.data();
}

bool in_prefix(const IpAddress& address, const IpAddress& network, int prefix) {
  for (int bit = 0; bit < prefix && bit < 128; ++bit) {
    const auto byte = static_cast<std::size_t>(bit / 8);
    const int mask = 0x80 >> (bit % 8);
    if ((address.bytes[byte] & mask) != (network.bytes[byte] & mask)) return false;
  }
  return true;
}

std::optional<std::uint16_t> parse_port(std::string_view text) {
  if (text.empty() || text.size() > 5) return std::nullopt;
  unsigned value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  if (value == 0 || value > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(value);
}

Result<void> check_host_name(std::string_view name) {
  if (name.empty()) return InvalidInput{"the name is empty"};
  if (name.size() > 253) return InvalidInput{"the name is longer than 253 bytes"};
  std::size_t start = 0;
  std::string_view last;
  while (true) {
    const std::size_t dot = name.find('.', start);
    const std::string_view label =
        name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty()) return InvalidInput{"the name has an empty label"};
    if (label.size() > 63) return InvalidInput{"a label is longer than 63 bytes"};
    if (!std::all_of(label.begin(), label.end(), is_name_byte)) {
      return InvalidInput{"a label holds a byte other than a-z, 0-9, '-' and '_'"};
    }
    if (label.front() == '-' || label.back() == '-') {
      return InvalidInput{"a label starts or ends with '-'"};
    }
    last = label;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (std::all_of(last.begin(), last.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return InvalidInput{"the name ends in a number but is not an IPv4 address in dotted-quad form"};
  }
  return {};
}

namespace {

// Printable ASCII only: a control byte would corrupt a message or a log line, and a name beyond
// ASCII must come in the A-label form the resolver compares.
Result<void> check_entry_bytes(std::string_view entry) {
  for (const char c : entry) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) return bad_entry(entry, "holds a NUL or control byte");
    if (byte >= 0x80) {
      return bad_entry(entry,
                       "holds a non-ASCII byte; write an internationalized name in its A-label "
                       "(xn--) form, e.g. as `idn2` prints it");
    }
  }
  if (entry.empty()) return bad_entry(entry, "is empty");
  return {};
}

// [v6]:port or [v6]; a bare v6 (two colons or more) carries no port; otherwise host:port.
// Leaves the host in `host` and sets out.port.
Result<void> split_port(std::string_view entry, std::string_view& host, NetworkEntry& out) {
  std::optional<std::string_view> port_text;
  if (host.front() == '[') {
    const std::size_t close = host.find(']');
    if (close == std::string_view::npos) return bad_entry(entry, "has '[' without ']'");
    const std::string_view rest = host.substr(close + 1);
    host = host.substr(1, close - 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return bad_entry(entry, "has text after ']' that is not :PORT");
      port_text = rest.substr(1);
    }
    if (!parse_ip(host) || host.find(':') == std::string_view::npos) {
      return bad_entry(entry, "brackets hold no IPv6 address");
    }
  } else if (std::count(host.begin(), host.end(), ':') == 1) {
    const std::size_t colon = host.find(':');
    port_text = host.substr(colon + 1);
    host = host.substr(0, colon);
  }
  if (port_text) {
    out.port = parse_port(*port_text);
    if (!out.port) return bad_entry(entry, "the port is not a number from 1 to 65535");
  }
  return {};
}

// ADDRESS/PREFIX, its host bits cleared so the canonical spelling is the network's.
Result<NetworkEntry> parse_prefix(std::string_view entry, std::string_view host, std::size_t slash,
                                  NetworkEntry out) {
  const auto address = parse_ip(host.substr(0, slash));
  const std::string_view bits = host.substr(slash + 1);
  if (!address) return bad_entry(entry, "the part before '/' is not an IP address");
  const int max = address->v4 ? 32 : 128;
  int prefix = -1;
  if (!bits.empty() && bits.size() <= 3 &&
      std::all_of(bits.begin(), bits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    prefix = std::stoi(std::string(bits));
  }
  if (prefix < 0 || prefix > max) {
    return bad_entry(entry, fmt::format("the prefix length is not a number from 0 to {}", max));
  }
  out.kind = NetworkEntry::Kind::kAddress;
  out.address = *address;
  out.prefix = address->v4 ? 96 + prefix : prefix;
  for (int bit = out.prefix; bit < 128; ++bit) {
    out.address.bytes[static_cast<std::size_t>(bit / 8)] &=
        static_cast<std::uint8_t>(~(0x80 >> (bit % 8)));
  }
  return out;
}

}  // namespace

Result<NetworkEntry> parse_network_entry(std::string_view entry) {
  if (auto bytes = check_entry_bytes(entry); !bytes) return bytes.error();
  if (is_url_entry(entry)) {
    auto authority = url_authority(entry);
    if (!authority) return authority.error();
    return parse_network_entry(authority.value());
  }
  NetworkEntry out;
  std::string_view host = entry;
  if (auto split = split_port(entry, host, out); !split) return split.error();
  if (const std::size_t slash = host.find('/'); slash != std::string_view::npos) {
    return parse_prefix(entry, host, slash, out);
  }
  if (const auto address = parse_ip(host)) {
    out.kind = NetworkEntry::Kind::kAddress;
    out.address = *address;
    out.prefix = 128;
    return out;
  }
  std::string name = lower_ascii(host);
  if (name.size() > 1 && name.back() == '.') name.pop_back();
  if (name.starts_with("*.")) {
    out.kind = NetworkEntry::Kind::kWildcard;
    name.erase(0, 2);
  }
  if (name.find('*') != std::string::npos) {
    return bad_entry(entry, "a wildcard is allowed only as a leading \"*.\"");
  }
  if (auto valid = check_host_name(name); !valid) return bad_entry(entry, valid.error().message);
  out.name = std::move(name);
  return out;
}

std::string format_network_entry(const NetworkEntry& entry) {
  std::string host;
  switch (entry.kind) {
    case NetworkEntry::Kind::kName:
      host = entry.name;
      break;
    case NetworkEntry::Kind::kWildcard:
      host = "*." + entry.name;
      break;
    case NetworkEntry::Kind::kAddress: {
      host = format_ip(entry.address);
      if (entry.prefix < 128) {
        return fmt::format("{}/{}", host, entry.address.v4 ? entry.prefix - 96 : entry.prefix);
      }
      if (!entry.address.v4 && entry.port) host = "[" + host + "]";
      break;
    }
  }
  if (entry.port) return fmt::format("{}:{}", host, *entry.port);
  return host;
}

Result<std::string> canonical_network_entry(std::string_view entry) {
  auto parsed = parse_network_entry(entry);
  if (!parsed) return parsed.error();
  if (parsed.value().kind == NetworkEntry::Kind::kAddress && parsed.value().prefix < 128 &&
      parsed.value().port) {
    return bad_entry(entry, "an address range takes no port");
  }
  return format_network_entry(parsed.value());
}

Result<std::vector<std::string>> parse_network_list(std::string_view list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view item = list.substr(start, comma - start);
    start = comma + 1;
    if (item.empty()) {
      if (comma == list.size()) break;
      continue;
    }
    auto canonical = canonical_network_entry(item);
    if (!canonical) return canonical.error();
    if (std::find(out.begin(), out.end(), canonical.value()) == out.end()) {
      out.push_back(std::move(canonical).value());
    }
  }
  return out;
}

Result<std::string> canonical_network_resolve(std::string_view mapping) {
  const std::size_t equals = mapping.find('=');
  if (equals == std::string_view::npos) {
    return InvalidInput{
        fmt::format("network resolve {}: expected NAME=ADDRESS", text::quoted(mapping))};
  }
  auto name = parse_network_entry(mapping.substr(0, equals));
  const auto address = parse_ip(mapping.substr(equals + 1));
  if (!name || name.value().kind != NetworkEntry::Kind::kName || name.value().port || !address) {
    return InvalidInput{
        fmt::format("network resolve {}: expected NAME=ADDRESS, a host name and an IP address",
                    text::quoted(mapping))};
  }
  return name.value().name + "=" + format_ip(*address);
}

std::vector<std::string> network_list_notes(std::string_view list) {
  std::vector<std::string> notes;
  std::size_t start = 0;
  while (start < list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view item = list.substr(start, comma - start);
    start = comma + 1;
    if (!is_url_entry(item)) continue;
    auto canonical = canonical_network_entry(item);
    if (!canonical) continue;
    notes.push_back(fmt::format("network entry {} is a URL; taken as {} (its host and port)",
                                text::quoted(item), canonical.value()));
  }
  return notes;
}

Result<std::pair<NetworkPolicy, std::vector<std::string>>> parse_network_option(
    std::string_view value) {
  using Parsed = std::pair<NetworkPolicy, std::vector<std::string>>;
  if (value.starts_with("allow:")) {
    auto list = parse_network_list(value.substr(6));
    if (!list) return list.error();
    if (list.value().empty()) {
      return InvalidInput{
          "--network allow: names no destination; list at least one, e.g. "
          "allow:registry.npmjs.org (or use --network deny)"};
    }
    return Parsed{NetworkPolicy::kAllowList, std::move(list).value()};
  }
  if (value.empty()) return Parsed{NetworkPolicy::kInherit, {}};
  auto network = parse_network_policy(value);
  if (!network) return network.error();
  if (network.value() == NetworkPolicy::kAllowList) {
    return InvalidInput{
        "--network allow-list needs its destinations: write --network allow:NAME,*.SUFFIX,..."};
  }
  return Parsed{network.value(), {}};
}

}  // namespace dsh::sandbox
