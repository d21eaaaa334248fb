// SPDX-License-Identifier: Apache-2.0
#include "base/text.h"

#include <fmt/format.h>

namespace dsh::sandbox::text {

std::string ascii_lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower;
}

std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

std::string_view first_line(std::string_view text) { return text.substr(0, text.find('\n')); }

namespace {

bool continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// The length of the valid UTF-8 sequence at the start of `text` (RFC 3629: no overlong form, no
// surrogate, nothing above U+10FFFF), 0 when it is not one.
std::size_t utf8_length(std::string_view text) {
  const auto at = [text](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = at(0);
  std::size_t length = 0;
  unsigned char low = 0x80;  // the second byte's bounds
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (text.size() < length || at(1) < low || at(1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i) {
    if (!continuation(at(i))) return 0;
  }
  return length;
}

void append_escaped(std::string& out, std::string_view bytes) {
  for (const char c : bytes) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
}

}  // namespace

std::string inert(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte == '\n' || byte == '\t' || (byte >= 0x20 && byte < 0x7f)) {
      out += text[i++];
      continue;
    }
    const std::size_t length = byte < 0x80 ? 0 : utf8_length(text.substr(i));
    // A C1 control is valid UTF-8 (C2 80..C2 9F) and still a terminal control.
    const bool c1 = length == 2 && byte == 0xC2 && static_cast<unsigned char>(text[i + 1]) <= 0x9F;
    if (length == 0 || c1) {
      const std::size_t count = c1 ? 2 : 1;
      append_escaped(out, text.substr(i, count));
      i += count;
      continue;
    }
    out += text.substr(i, length);
    i += length;
  }
  return out;
}

}  // namespace dsh::sandbox::text
