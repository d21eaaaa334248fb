// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the proxy's HTTP request head reader and the head it forwards: a confined
// command writes the request, the proxy checks the host of its target and forwards the rest to
// that host. For any bytes: an incomplete head asks for one more byte and is never longer than
// the bound; a refusal has a status and a reason; a CONNECT target is its authority, an absolute
// target has no user information; a head whose authority is admitted is forwarded as exactly one
// request, in CRLF lines only, with one Host header (the checked host), no proxy header and no
// line an origin could read as another header or another request (bare CR or LF, NUL, folded
// lines, a name with a space before its colon). Any violation aborts, which libFuzzer reports as
// a crash.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "netproxy/request.h"
#include "netproxy/rules.h"

namespace {

namespace netproxy = dsh::sandbox::netproxy;

void check(bool condition) {
  if (!condition) std::abort();
}

bool token_char(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return (byte > 0x20 && byte < 0x7f &&
          std::string_view("\"(),/:;<=>?@[\\]{}").find(c) == std::string_view::npos);
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// One header line as an origin reads it: a token, a colon, a value without control bytes.
void check_header_line(std::string_view line, int& hosts, int& connections) {
  const std::size_t colon = line.find(':');
  check(colon != std::string_view::npos && colon > 0);
  const std::string_view name = line.substr(0, colon);
  check(std::all_of(name.begin(), name.end(), token_char));
  for (const char c : line.substr(colon + 1)) {
    const auto byte = static_cast<unsigned char>(c);
    check(c == '\t' || (byte >= 0x20 && byte != 0x7f));
  }
  const std::string field = lower(name);
  check(!field.starts_with("proxy-") && field != "keep-alive");
  hosts += field == "host" ? 1 : 0;
  connections += field == "connection" ? 1 : 0;
}

// The forwarded head: one request line, header lines, the blank line, all in CRLF.
void check_forwarded(const std::string& head, const std::string& host) {
  check(head.find("\r\n\r\n") == head.size() - 4);
  for (std::size_t i = 0; i < head.size(); ++i) {
    if (head[i] == '\r') check(i + 1 < head.size() && head[i + 1] == '\n');
    if (head[i] == '\n') check(i > 0 && head[i - 1] == '\r');
  }
  const std::size_t line_end = head.find("\r\n");
  const std::string_view request_line = std::string_view(head).substr(0, line_end);
  check(std::count(request_line.begin(), request_line.end(), ' ') == 2);
  int hosts = 0;
  int connections = 0;
  std::size_t start = line_end + 2;
  while (start < head.size() - 2) {
    const std::size_t end = head.find("\r\n", start);
    check_header_line(std::string_view(head).substr(start, end - start), hosts, connections);
    start = end + 2;
  }
  check(hosts == 1 && connections == 1);
  check(head.find("\r\nHost: " + host + "\r\n") != std::string::npos);
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): the entry point libFuzzer calls by this name
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);  // NOLINT: bytes
  const netproxy::HttpParse parsed = netproxy::parse_http_head(bytes);
  if (parsed.state == netproxy::ParseState::kNeedMore) {
    check(parsed.wanted == size + 1 && size <= netproxy::kMaxHead);
    check(bytes.find("\r\n\r\n") == std::string_view::npos);
    return 0;
  }
  if (parsed.state == netproxy::ParseState::kRefused) {
    check(parsed.status >= 400 && parsed.status < 500 && !parsed.reason.empty());
    return 0;
  }
  const netproxy::HttpRequest& request = parsed.request;
  check(request.head_size <= size && bytes.substr(request.head_size - 4, 4) == "\r\n\r\n");
  check(request.connect == (request.method == "CONNECT"));
  if (request.connect) check(request.authority == request.target);
  check(request.authority.find('@') == std::string::npos || request.connect);
  const auto destination = netproxy::parse_authority(
      request.authority, request.connect ? std::nullopt : std::optional<std::uint16_t>(80));
  if (!destination || request.connect) return 0;
  const std::string host = destination.value().host;
  check_forwarded(netproxy::origin_head(request.method, request.path, request.version, host,
                                        request.header_lines),
                  host);
  return 0;
}
