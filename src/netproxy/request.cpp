// SPDX-License-Identifier: Apache-2.0
// RFC 9112 (HTTP/1.1 message syntax) and RFC 1928 (SOCKS5), the parts the proxy serves.
#include "netproxy/request.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "seam/network_entry.h"

namespace dsh::sandbox::netproxy {

namespace {

bool iequals_prefix(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != prefix[i]) return false;
  }
  return true;
}

HttpParse http_refusal(int status, std::string reason, std::string body) {
  HttpParse out;
  out.state = ParseState::kRefused;
  out.status = status;
  out.reason = std::move(reason);
  out.body = std::move(body);
  return out;
}

HttpParse bad_request(std::string body) {
  return http_refusal(400, "Bad Request", std::move(body));
}

bool token_char(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte > 0x20 && byte < 0x7f &&
         std::string_view(R"("(),/:;<=>?@[\]{})").find(c) == std::string_view::npos;
}

// A control byte: C0 and DEL. Bytes from 0x80 up are text to HTTP (obs-text).
bool control_char(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte < 0x20 || byte == 0x7f;
}

bool is_token(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), token_char);
}

// No space and no control byte: one word of a request line as the origin splits it.
bool one_word(std::string_view text) {
  return std::none_of(text.begin(), text.end(), [](char c) { return c == ' ' || control_char(c); });
}

// Header lines as RFC 9112 section 5 writes them: a token name right before its colon, a value
// of text, spaces and tabs, each line ended by CRLF. The origin reads the lines this proxy
// forwards, and a line outside that grammar is one it may read differently: a bare CR or LF (or
// a NUL) ends a line for many servers, so "X: a\nHost: b" would carry a second Host; a folded
// continuation joins the line before it; "Host : b" is a Host header to a lenient server and
// none to this proxy.
bool well_formed_header_lines(std::string_view lines) {
  std::size_t start = 0;
  while (start < lines.size()) {
    const std::size_t end = std::min(lines.find("\r\n", start), lines.size());
    const std::string_view line = lines.substr(start, end - start);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || !is_token(line.substr(0, colon))) return false;
    const std::string_view value = line.substr(colon + 1);
    if (std::any_of(value.begin(), value.end(),
                    [](char c) { return c != '\t' && control_char(c); })) {
      return false;
    }
    start = end + 2;
  }
  return true;
}

// The authority and path of an absolute http:// target; a refusal when it is none.
HttpParse split_absolute_target(HttpParse parsed) {
  HttpRequest& request = parsed.request;
  const std::string_view target = request.target;
  if (!iequals_prefix(target, "http://")) {
    return bad_request("this proxy forwards absolute http:// URIs and CONNECT tunnels\n");
  }
  const std::string_view rest = target.substr(7);
  const std::size_t cut = std::min(rest.find_first_of("/?#"), rest.size());
  request.authority = rest.substr(0, cut);
  request.path = rest.substr(cut);
  if (request.authority.find('@') != std::string::npos) {
    return bad_request("user information in the URI\n");
  }
  // The path goes into the origin's request line; the authority is checked as a host (and a
  // refused one recorded) by the caller, as CONNECT's is.
  if (!one_word(request.path)) return bad_request("malformed request line\n");
  return parsed;
}

}  // namespace

HttpParse parse_http_head(std::string_view bytes) {
  const std::size_t end = bytes.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    if (bytes.size() > kMaxHead) return http_refusal(431, "Request Header Fields Too Large", "");
    HttpParse more;
    more.wanted = bytes.size() + 1;
    return more;
  }
  const std::string_view head = bytes.substr(0, end + 2);
  const std::size_t line_end = head.find("\r\n");
  const std::string_view request_line = head.substr(0, line_end);
  const std::size_t first = request_line.find(' ');
  const std::size_t second = request_line.rfind(' ');
  // A method token and a version word, forwarded to the origin as written: what it reads as
  // the request line is what was checked.
  const std::string_view version = request_line.substr(second + 1);
  if (first == std::string_view::npos || second == first ||
      !is_token(request_line.substr(0, first)) || version.empty() || !one_word(version)) {
    return bad_request("malformed request line\n");
  }
  if (!well_formed_header_lines(head.substr(line_end + 2))) {
    return bad_request(
        "malformed header line (bare CR or LF, control byte, folded line, or a "
        "space before the colon)\n");
  }
  HttpParse parsed;
  parsed.state = ParseState::kDone;
  HttpRequest& request = parsed.request;
  request.method = request_line.substr(0, first);
  request.target = request_line.substr(first + 1, second - first - 1);
  request.version = version;
  request.header_lines = head.substr(line_end + 2);
  request.head_size = end + 4;
  request.connect = request.method == "CONNECT";
  if (!request.connect) return split_absolute_target(std::move(parsed));
  request.authority = request.target;
  return parsed;
}

std::string origin_head(std::string_view method, std::string_view path, std::string_view version,
                        std::string_view authority, std::string_view header_lines) {
  const std::string target =
      path.empty() ? "/" : (path.front() == '/' ? std::string(path) : "/" + std::string(path));
  std::string head = fmt::format("{} {} {}\r\nHost: {}\r\n", method, target, version, authority);
  std::size_t start = 0;
  while (start < header_lines.size()) {
    const std::size_t end = std::min(header_lines.find("\r\n", start), header_lines.size());
    const std::string_view line = header_lines.substr(start, end - start);
    start = end + 2;
    if (line.empty()) continue;
    if (iequals_prefix(line, "host:") || iequals_prefix(line, "proxy-") ||
        iequals_prefix(line, "connection:") || iequals_prefix(line, "keep-alive:")) {
      continue;
    }
    head.append(line);
    head.append("\r\n");
  }
  head.append("Connection: close\r\n\r\n");
  return head;
}

std::string http_error(int code, std::string_view reason, std::string_view body) {
  return fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: "
      "close\r\n\r\n{}",
      code, reason, body.size(), body);
}

SocksGreeting parse_socks_greeting(std::string_view bytes) {
  SocksGreeting out;
  if (bytes.size() < 2) {
    out.wanted = 2;
    return out;
  }
  const std::size_t methods = static_cast<unsigned char>(bytes[1]);
  if (bytes.size() < 2 + methods) {
    out.wanted = 2 + methods;
    return out;
  }
  out.state = ParseState::kDone;
  out.no_auth = bytes.substr(2, methods).find('\0') != std::string_view::npos;
  out.size = 2 + methods;
  return out;
}

SocksRequest parse_socks_request(std::string_view bytes) {
  SocksRequest out;
  if (bytes.size() < 5) {
    out.wanted = 5;
    return out;
  }
  out.state = ParseState::kRefused;
  if (bytes[0] != 5 || bytes[1] != 1) {  // CONNECT only
    out.reply = 0x07;
    return out;
  }
  const auto type = static_cast<unsigned char>(bytes[3]);
  std::size_t length = 0;
  if (type == 1) {
    length = 4 + 4 + 2;
  } else if (type == 4) {
    length = 4 + 16 + 2;
  } else if (type == 3) {
    length = 5 + static_cast<unsigned char>(bytes[4]) + 2;
  } else {
    out.reply = 0x08;
    return out;
  }
  if (bytes.size() < length) {
    out.state = ParseState::kNeedMore;
    out.wanted = length;
    return out;
  }
  out.state = ParseState::kDone;
  out.size = length;
  out.port = static_cast<std::uint16_t>((static_cast<unsigned char>(bytes[length - 2]) << 8) |
                                        static_cast<unsigned char>(bytes[length - 1]));
  if (type == 3) {
    out.host = bytes.substr(5, length - 7);
    return out;
  }
  IpAddress address;
  if (type == 1) {
    address.v4 = true;
    address.bytes[10] = address.bytes[11] = 0xff;
    std::memcpy(address.bytes.data() + 12, bytes.data() + 4, 4);
  } else {
    std::memcpy(address.bytes.data(), bytes.data() + 4, 16);
  }
  out.host = format_ip(address);
  return out;
}

}  // namespace dsh::sandbox::netproxy
