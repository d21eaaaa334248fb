// SPDX-License-Identifier: Apache-2.0
// Small text helpers: messages that show a caller's input, and matching.
#pragma once

#include <string>
#include <string_view>

namespace dsh::sandbox::text {

// ASCII lowercase; other bytes unchanged.
std::string ascii_lower(std::string_view text);

// `text` in double quotes with `"`, `\` and control bytes escaped, so a message can show any
// bad input (NUL bytes, escape sequences) without corrupting the terminal or the log line.
std::string quoted(std::string_view text);

// Everything before the first "\n" (all of `text` when it has none).
std::string_view first_line(std::string_view text);

// Untrusted bytes (a confined command's output) made inert for a terminal, a prompt or a render:
// every C0 control byte but "\n" and "\t", DEL, every C1 control (U+0080..U+009F, UTF-8 C2 80..C2
// 9F, which some terminals take as CSI, OSC or NEL) and every byte that is not part of valid UTF-8
// is shown as a visible `\xNN` escape, one per byte. No escape sequence (OSC 52 clipboard
// writes, titles, cursor moves, conceal) and no carriage return can then reach the reader.
std::string inert(std::string_view text);

}  // namespace dsh::sandbox::text
