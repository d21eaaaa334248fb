// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the network allow-list's entries and the hosts the proxy checks against
// them: the caller writes the entries (a flag, a profile, a file), a confined command writes the
// hosts (a CONNECT authority, a URI, a SOCKS5 domain). For any bytes: a refused entry or host
// says why; an accepted entry is canonical (its canonical text reads back as the same entry, and
// is its own canonical text); a destination the proxy makes of a host is canonical (a lower-case
// A-label name that passes check_host_name, or an IP literal as format_ip writes it), and
// reading it again gives itself; the allow-list built from the input's lines answers for it
// without failing, and a name it admits under a deny entry for the same name is refused. Any
// violation aborts, which libFuzzer reports as a crash.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "dsh/sandbox/modes.h"
#include "netproxy/rules.h"
#include "seam/network_entry.h"

namespace {

namespace sandbox = dsh::sandbox;
namespace netproxy = dsh::sandbox::netproxy;

void check(bool condition) {
  if (!condition) std::abort();
}

void check_entry(std::string_view text) {
  const auto entry = sandbox::parse_network_entry(text);
  if (!entry) {
    check(!entry.error().message.empty());
    return;
  }
  const std::string canonical = sandbox::format_network_entry(entry.value());
  const auto again = sandbox::parse_network_entry(canonical);
  check(again && sandbox::format_network_entry(again.value()) == canonical);
  const auto spelled = sandbox::canonical_network_entry(canonical);
  check(spelled && spelled.value() == canonical);
}

void check_destination(std::string_view authority, const sandbox::NetworkAllowList& list) {
  const auto destination = netproxy::parse_authority(authority, 443);
  if (!destination) {
    check(!destination.error().message.empty());
    return;
  }
  const netproxy::Destination& where = destination.value();
  if (where.address) {
    check(sandbox::format_ip(*where.address) == where.host);
  } else {
    check(static_cast<bool>(sandbox::check_host_name(where.host)));
  }
  const auto again = netproxy::canonical_destination(where.host, where.port);
  check(again && again.value().host == where.host && again.value().address == where.address);
  const netproxy::Rules rules(list);
  const auto deny = sandbox::canonical_network_entry(where.host);
  if (rules.admits(where) && !where.address && deny) {
    sandbox::NetworkAllowList denied = list;
    denied.deny.push_back(deny.value());
    check(!netproxy::Rules(denied).admits(where));
  }
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): the entry point libFuzzer calls by this name
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);  // NOLINT: bytes
  // Every line is an entry; the canonical ones make the allow-list the last line is checked by.
  sandbox::NetworkAllowList list;
  std::string_view last = bytes;
  for (std::size_t start = 0; start <= bytes.size();) {
    const std::size_t end = std::min(bytes.find('\n', start), bytes.size());
    last = bytes.substr(start, end - start);
    check_entry(last);
    if (const auto canonical = sandbox::canonical_network_entry(last)) {
      list.allow.push_back(canonical.value());
    }
    start = end + 1;
  }
  check_destination(last, list);
  return 0;
}
