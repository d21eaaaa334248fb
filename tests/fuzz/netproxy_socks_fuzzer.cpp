// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the proxy's SOCKS5 reader: a confined command writes the greeting and the
// CONNECT request, and the destination they name is checked against the allow-list. For any
// bytes (a greeting, then a request): an incomplete message asks for more than it has and for no
// more than the longest message; a whole message takes no more than it has; a refusal has a
// reply code; an address request names the address in its bytes, a domain request exactly the
// bytes it sent, and both the port in its last two bytes; a destination the proxy makes of that
// host is canonical (reading it again gives itself). Any violation aborts, which libFuzzer
// reports as a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "netproxy/request.h"
#include "netproxy/rules.h"
#include "seam/network_entry.h"

namespace {

namespace netproxy = dsh::sandbox::netproxy;
using netproxy::ParseState;

void check(bool condition) {
  if (!condition) std::abort();
}

void check_request(std::string_view bytes) {
  const netproxy::SocksRequest request = netproxy::parse_socks_request(bytes);
  if (request.state == ParseState::kNeedMore) {
    check(request.wanted > bytes.size() && request.wanted <= 5 + 255 + 2);
    return;
  }
  if (request.state == ParseState::kRefused) {
    check(request.reply == 0x07 || request.reply == 0x08);
    return;
  }
  check(request.size <= bytes.size() && request.size >= 5 + 2);
  const auto port_high = static_cast<unsigned char>(bytes[request.size - 2]);
  const auto port_low = static_cast<unsigned char>(bytes[request.size - 1]);
  check(request.port == ((port_high << 8) | port_low));
  if (bytes[3] == 3) {
    check(request.host == bytes.substr(5, static_cast<unsigned char>(bytes[4])));
  } else {
    check(dsh::sandbox::parse_ip(request.host).has_value());
  }
  const auto destination = netproxy::canonical_destination(request.host, request.port);
  if (!destination) return;
  const auto again = netproxy::canonical_destination(destination.value().host, request.port);
  check(again && again.value().host == destination.value().host &&
        again.value().address == destination.value().address);
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): the entry point libFuzzer calls by this name
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);  // NOLINT: bytes
  const netproxy::SocksGreeting greeting = netproxy::parse_socks_greeting(bytes);
  if (greeting.state == ParseState::kNeedMore) {
    check(greeting.wanted > size && greeting.wanted <= 2 + 255);
    return 0;
  }
  check(greeting.state == ParseState::kDone && greeting.size <= size);
  check(greeting.no_auth == (bytes.substr(2, greeting.size - 2).find('\0') != bytes.npos));
  check_request(bytes.substr(greeting.size));
  return 0;
}
