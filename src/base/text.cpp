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

}  // namespace dsh::sandbox::text
