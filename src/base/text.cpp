// SPDX-License-Identifier: Apache-2.0
#include "base/text.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>

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
  // inert()'s one rule, and a quote escaped too so that the field's end is unambiguous.
  std::string out = "\"";
  for (const char c : inert(text)) {
    if (c == '"') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

namespace {

// The length of the well-formed UTF-8 sequence (RFC 3629) at the start of `text` and its code
// point; 0 when the first byte does not start one.
std::size_t utf8_sequence(std::string_view text, char32_t& code_point) {
  const auto lead = static_cast<unsigned char>(text[0]);
  // ASCII is the caller's; 80..C1 (continuations, overlong leads) and F5..FF start nothing.
  if (lead < 0xc2 || lead > 0xf4) return 0;
  const std::size_t length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
  constexpr std::array<char32_t, 5> kSmallest = {0, 0, 0x80, 0x800, 0x10000};
  const char32_t smallest = kSmallest.at(length);
  code_point = lead & (0x7fU >> length);
  if (text.size() < length) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if ((byte & 0xc0U) != 0x80) return 0;
    code_point = (code_point << 6) | (byte & 0x3fU);
  }
  const bool surrogate = code_point >= 0xd800 && code_point <= 0xdfff;
  if (code_point < smallest || surrogate || code_point > 0x10ffff) return 0;
  return length;
}

// Code points that control rather than show: the C1 controls, the line and paragraph separators
// (U+2028, U+2029) and the bidirectional marks, embeddings, overrides and isolates.
bool is_control_code_point(char32_t c) {
  return (c >= 0x80 && c <= 0x9f) || c == 0x061c || c == 0x200e || c == 0x200f ||
         (c >= 0x2028 && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

void append_byte_escape(std::string& out, unsigned char byte) {
  switch (byte) {
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default:
      out += fmt::format("\\x{:02x}", byte);
  }
}

// The one rule behind inert() and inert_lines(); `lines` keeps newline, tab and a lone backslash.
std::string make_inert(std::string_view text, bool lines) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      ++i;
      if (byte == '\\' && !lines) {
        out += "\\\\";
      } else if ((byte >= 0x20 && byte != 0x7f) || (lines && (byte == '\n' || byte == '\t'))) {
        out += static_cast<char>(byte);
      } else {
        append_byte_escape(out, byte);
      }
      continue;
    }
    char32_t code_point = 0;
    const std::size_t length = utf8_sequence(text.substr(i), code_point);
    if (length == 0) {
      append_byte_escape(out, byte);
      ++i;
    } else if (is_control_code_point(code_point)) {
      out += fmt::format("\\u{:04x}", static_cast<std::uint32_t>(code_point));
      i += length;
    } else {
      out += text.substr(i, length);
      i += length;
    }
  }
  return out;
}

}  // namespace

std::string inert(std::string_view text) { return make_inert(text, false); }

std::string inert_lines(std::string_view text) { return make_inert(text, true); }

std::string_view first_line(std::string_view text) { return text.substr(0, text.find('\n')); }

namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::optional<std::string> closest(std::string_view given, const std::vector<std::string>& known) {
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const std::string& name : known) {
    const std::size_t distance = edit_distance(given, name);
    if (!best || distance < best_distance) {
      best = name;
      best_distance = distance;
    }
  }
  if (best && best_distance * 3 <= std::max<std::size_t>(given.size(), 3)) return best;
  return std::nullopt;
}

}  // namespace dsh::sandbox::text
