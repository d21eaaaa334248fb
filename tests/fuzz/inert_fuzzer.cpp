// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for text::inert and text::inert_lines, the one rule that makes text a
// confined command controls (paths, host names, its output) safe to show on a terminal, in a
// prompt or in the agent render. For any bytes: inert() gives one line of printable text (no C0,
// DEL, C1, separator or bidirectional control; valid UTF-8), and reading its escapes back gives
// the input exactly, so two different inputs never show the same; inert_lines() keeps newlines
// and tabs and nothing else that controls, and leaves inert()'s output as it is. Any violation
// aborts, which libFuzzer reports as a crash.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/text.h"

namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

unsigned hex_value(std::string_view digits) {
  unsigned value = 0;
  for (const char c : digits) {
    check(std::isxdigit(static_cast<unsigned char>(c)) != 0 && !std::isupper(c));
    value = value * 16 + static_cast<unsigned>(c <= '9' ? c - '0' : c - 'a' + 10);
  }
  return value;
}

void append_utf8(std::string& out, unsigned code_point) {
  check(code_point < 0x800);  // inert() spells only C1 controls and BMP marks as \uXXXX
  out += static_cast<char>(0xc0 | (code_point >> 6));
  out += static_cast<char>(0x80 | (code_point & 0x3f));
}

void append_utf8_bmp(std::string& out, unsigned code_point) {
  if (code_point < 0x800) return append_utf8(out, code_point);
  out += static_cast<char>(0xe0 | (code_point >> 12));
  out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3f));
  out += static_cast<char>(0x80 | (code_point & 0x3f));
}

// Reads inert()'s escapes back into the bytes they stand for.
std::string unescape(std::string_view shown) {
  std::string out;
  for (std::size_t i = 0; i < shown.size(); ++i) {
    if (shown[i] != '\\') {
      out += shown[i];
      continue;
    }
    check(i + 1 < shown.size());
    const char kind = shown[++i];
    if (kind == '\\') {
      out += '\\';
    } else if (kind == 'n' || kind == 'r' || kind == 't') {
      out += kind == 'n' ? '\n' : kind == 'r' ? '\r' : '\t';
    } else if (kind == 'x') {
      check(i + 2 < shown.size());
      out += static_cast<char>(hex_value(shown.substr(i + 1, 2)));
      i += 2;
    } else {
      check(kind == 'u' && i + 4 < shown.size());
      append_utf8_bmp(out, hex_value(shown.substr(i + 1, 4)));
      i += 4;
    }
  }
  return out;
}

// No C0 byte but `allowed`, no DEL; the code points above ASCII are checked by the caller
// through inert_lines(), which escapes every one inert() would.
void check_printable(std::string_view shown, std::string_view allowed) {
  for (const char c : shown) {
    const auto byte = static_cast<unsigned char>(c);
    check(byte >= 0x20 || allowed.find(c) != std::string_view::npos);
    check(byte != 0x7f);
  }
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): the entry point libFuzzer calls by this name
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string shown = dsh::sandbox::text::inert(input);
  check_printable(shown, "");
  check(unescape(shown) == input);
  // inert()'s output has nothing left to escape, even for the multi-line rule.
  check(dsh::sandbox::text::inert_lines(shown) == shown);
  const std::string lines = dsh::sandbox::text::inert_lines(input);
  check_printable(lines, "\n\t");
  check(dsh::sandbox::text::inert_lines(lines) == lines);
  return 0;
}
