// SPDX-License-Identifier: Apache-2.0
// Small text helpers: messages that show a caller's input, and matching.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dsh::sandbox::text {

// ASCII lowercase; other bytes unchanged.
std::string ascii_lower(std::string_view text);

// `text` made inert (below) in double quotes, `"` escaped too, so a message can show any bad
// input or any name a confined command chose without corrupting the terminal or the log line.
std::string quoted(std::string_view text);

// Text a confined command controls (a path, a host name, a record's operation), made inert
// for a terminal, a prompt or a render, on one line. Every byte that is not printable text
// becomes a visible escape, so the text can neither drive a terminal (ESC starts CSI, OSC 52
// clipboard, title and conceal sequences; CR and the C1 controls move or erase) nor start a
// line of the caller's own:
//   - C0 bytes, ESC and DEL as \xNN (\n, \r, \t spelled so);
//   - C1 controls U+0080..U+009F (C2 80..C2 9F in UTF-8) as \u0080..\u009f;
//   - the Unicode line and paragraph separators and the bidirectional controls (they reorder
//     or break what a reader sees) as \uXXXX;
//   - each byte of invalid UTF-8 (stray continuation bytes, overlong forms, surrogates, code
//     points past U+10FFFF, truncated sequences) as \xNN;
//   - a backslash as \\, so that an escape in the result always means an escaped byte.
// Valid printable UTF-8 passes unchanged. Total and linear: any bytes in, printable text out.
std::string inert(std::string_view text);

// The same rule for multi-line text, a command's output embedded in a render: newlines and tabs
// stay as they are and a backslash stays single (the output reads as printed); every other
// control byte or code point is escaped as by inert().
std::string inert_lines(std::string_view text);

// The closest of `known` to `given` by edit distance, when it is close enough to be a typo: at
// most a third of the name changed (two letters swapped count as two). "did you mean" advice.
std::optional<std::string> closest(std::string_view given, const std::vector<std::string>& known);

// Everything before the first "\n" (all of `text` when it has none).
std::string_view first_line(std::string_view text);

}  // namespace dsh::sandbox::text
