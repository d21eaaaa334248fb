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

}  // namespace dsh::sandbox::text
