// SPDX-License-Identifier: Apache-2.0
// Text helpers: quoting any input for a message, ASCII case, the first line.
#include "base/text.h"

#include <gtest/gtest.h>

#include <string>

namespace dsh::sandbox::text {
namespace {

TEST(Text, QuotedEscapesQuotesBackslashesAndControlBytes) {
  EXPECT_EQ(text::quoted("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(text::quoted(std::string("n\0l\x1b\x7f", 5)), R"("n\x00l\x1b\x7f")");
}

TEST(Text, AsciiLowerLeavesOtherBytesAlone) {
  EXPECT_EQ(ascii_lower("API_Token\xc3\x89"), "api_token\xc3\x89");
}

TEST(Text, FirstLineStopsAtTheFirstNewline) {
  EXPECT_EQ(first_line("one\ntwo\n"), "one");
  EXPECT_EQ(first_line("alone"), "alone");
  EXPECT_EQ(first_line("\nsecond"), "");
}

}  // namespace
}  // namespace dsh::sandbox::text
