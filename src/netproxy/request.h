// SPDX-License-Identifier: Apache-2.0
// The requests a confined command writes to the proxy, read from its bytes: an HTTP request head
// (CONNECT or an absolute http:// URI) and a SOCKS5 greeting and CONNECT request. Pure: bytes in,
// the request or a refusal out; the connection handler reads more bytes while a parser asks for
// them. Every byte here is hostile (the command wrote it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace dsh::sandbox::netproxy {

// What a parser made of the bytes so far.
enum class ParseState {
  kNeedMore,  // the request is incomplete: read until `wanted` bytes are pending in all
  kDone,      // the request, whole
  kRefused,   // no request this proxy serves
};

// An HTTP request head is at most this long, the blank line included.
inline constexpr std::size_t kMaxHead = std::size_t{64} * 1024;

struct HttpRequest {
  std::string method;
  std::string target;   // as written: host:port for CONNECT, http://... otherwise
  std::string version;  // "HTTP/1.1"
  bool connect = false;
  std::string authority;      // host[:port] of the target, not yet checked
  std::string path;           // absolute form: what follows the authority ("", "/x", "?q")
  std::string header_lines;   // each header line with its CRLF, the blank line excluded
  std::size_t head_size = 0;  // bytes of the head, blank line included; the body follows
};

struct HttpParse {
  ParseState state = ParseState::kNeedMore;
  std::size_t wanted = 0;  // kNeedMore
  HttpRequest request;     // kDone
  int status = 0;          // kRefused: the HTTP status, reason and body to answer with
  std::string reason;
  std::string body;
};

// Reads the request head at the start of `bytes` (the client's first bytes).
HttpParse parse_http_head(std::string_view bytes);

// The request head rewritten for the origin: origin-form target (`path`, "/" when empty), Host
// `authority` (the host that was checked and dialled), no proxy headers, one request per
// connection. `header_lines` as parse_http_head gives them.
std::string origin_head(std::string_view method, std::string_view path, std::string_view version,
                        std::string_view authority, std::string_view header_lines);

// An HTTP error response with a plain-text body, closing the connection.
std::string http_error(int code, std::string_view reason, std::string_view body);

// RFC 1928 section 3: VER NMETHODS METHODS. The version byte was checked by the caller.
struct SocksGreeting {
  ParseState state = ParseState::kNeedMore;
  std::size_t wanted = 0;  // kNeedMore
  bool no_auth = false;    // kDone: the client offers "no authentication required"
  std::size_t size = 0;    // kDone: bytes of the greeting
};
SocksGreeting parse_socks_greeting(std::string_view bytes);

// RFC 1928 sections 4 and 5: VER CMD RSV ATYP DST.ADDR DST.PORT, CONNECT only.
struct SocksRequest {
  ParseState state = ParseState::kNeedMore;
  std::size_t wanted = 0;  // kNeedMore
  std::uint8_t reply = 0;  // kRefused: the reply code (0x07 command, 0x08 address type)
  std::string host;        // kDone: the domain as sent, or the address as format_ip writes it
  std::uint16_t port = 0;  // kDone
  std::size_t size = 0;    // kDone: bytes of the request
};
SocksRequest parse_socks_request(std::string_view bytes);

}  // namespace dsh::sandbox::netproxy
