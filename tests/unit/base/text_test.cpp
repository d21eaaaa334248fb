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

// Terminal controls and bytes that are not UTF-8 become visible \xNN escapes; printable text,
// newlines, tabs and valid UTF-8 (beyond the C1 controls) pass as they are.
TEST(Text, InertEscapesControlsC1AndInvalidUtf8) {
  EXPECT_EQ(inert("plain\ttext\n"), "plain\ttext\n");
  EXPECT_EQ(inert("\x1b]52;c;aGk=\x07"), R"(\x1b]52;c;aGk=\x07)");
  EXPECT_EQ(inert(std::string("\r\b\0\x7f", 4)), R"(\x0d\x08\x00\x7f)");
  EXPECT_EQ(inert("\xc2\x9b"
                  "2J \xc2\x85"),
            R"(\xc2\x9b2J \xc2\x85)");  // CSI, NEL
  EXPECT_EQ(inert("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\xa0"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\xa0");
  // A lone continuation byte, a truncated sequence, an overlong form, a surrogate, > U+10FFFF.
  EXPECT_EQ(inert("\x80"), R"(\x80)");
  EXPECT_EQ(inert("\xe2\x82"), R"(\xe2\x82)");
  EXPECT_EQ(inert("\xc0\xaf"), R"(\xc0\xaf)");
  EXPECT_EQ(inert("\xed\xa0\x80"), R"(\xed\xa0\x80)");
  EXPECT_EQ(inert("\xf4\x90\x80\x80"), R"(\xf4\x90\x80\x80)");
}

}  // namespace
}  // namespace dsh::sandbox::text
