// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the proxy's ClientHello reader: a confined command writes these bytes
// into a tunnel the proxy opened for one destination, and the server name they carry decides
// whether the tunnel stays open. For any bytes: an incomplete record asks for more than it has
// and no more than one record can hold; a named server is a non-empty name taken from the bytes;
// only the first record counts, so bytes after it change nothing; and every strict prefix of a
// whole record is incomplete, so a hello read early is never judged on part of itself. Any
// violation aborts, which libFuzzer reports as a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "netproxy/tls.h"

namespace {

using dsh::sandbox::netproxy::Hello;
using dsh::sandbox::netproxy::HelloState;
using dsh::sandbox::netproxy::read_client_hello;

constexpr std::size_t kMaxRecord = 5 + 16384 + 256;

void check(bool condition) {
  if (!condition) std::abort();
}

bool same(const Hello& a, const Hello& b) {
  return a.state == b.state && a.name == b.name && a.wanted == b.wanted;
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): the entry point libFuzzer calls by this name
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);  // NOLINT: bytes
  const Hello hello = read_client_hello(bytes);
  if (hello.state == HelloState::kNeedMore) {
    check(hello.wanted > bytes.size() && hello.wanted <= kMaxRecord);
    return 0;
  }
  check(hello.wanted == 0);
  check((hello.state == HelloState::kSni) != hello.name.empty());
  if (hello.state == HelloState::kSni) check(bytes.find(hello.name) != std::string_view::npos);
  if (hello.state == HelloState::kNotTls) return 0;
  // The whole first record was read: what follows it is not looked at.
  check(same(read_client_hello(std::string(bytes) + '\x16'), hello));
  const std::size_t record = 5 + ((static_cast<std::size_t>(data[3]) << 8) | data[4]);
  if (record <= kMaxRecord) {  // a length in range: the record was complete when judged
    check(record <= bytes.size());
    for (const std::size_t cut : {std::size_t{1}, record / 2, record - 1}) {
      check(read_client_hello(bytes.substr(0, cut)).state == HelloState::kNeedMore);
    }
  }
  return 0;
}
