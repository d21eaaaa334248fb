// SPDX-License-Identifier: Apache-2.0
#include "profiles/denial_line.h"

#include <gtest/gtest.h>

#include <string>

namespace dsh::sandbox::profiles {
namespace {

TEST(DenialLine, EncodesEveryFieldInOneLine) {
  const Denial denial{.op = "open-write",
                      .rule = "outside-writable-roots",
                      .path = "/etc/a b\n%",
                      .pid = 42,
                      .exe = "/usr/bin/touch"};
  EXPECT_EQ(encode_denial_line(denial),
            "denial op=open-write rule=outside-writable-roots pid=42 exe=/usr/bin/touch "
            "path=/etc/a%20b%0A%25\n");
}

TEST(DenialLine, RoundTripsArbitraryBytesAndAnUnknownPid) {
  std::string bytes;
  for (int byte = 0; byte < 256; ++byte) bytes += static_cast<char>(byte);
  const Denial denial{.op = "connect", .rule = "network-denied", .path = bytes, .exe = bytes};
  const std::string line = encode_denial_line(denial);
  ASSERT_EQ(line.find('\n'), line.size() - 1);
  EXPECT_EQ(decode_denial_line(std::string_view(line).substr(0, line.size() - 1)), denial);
}

TEST(DenialLine, RefusesAnythingThatIsNotExactlyARecord) {
  for (const std::string_view line : {
           "",
           "denial",
           "denial op=x rule=y pid=1 exe=a",                 // no path
           "denial rule=y op=x pid=1 exe=a path=b",          // out of order
           "denial op=x rule=y pid=1 exe=a path=b extra=c",  // trailing field
           "denial op=X rule=y pid=1 exe=a path=b",          // not a word
           "denial op=x rule=y pid=0 exe=a path=b",          // no such pid
           "denial op=x rule=y pid=1x exe=a path=b",         // not a number
           "denial op=x rule=y pid=1 exe=a path=%2",         // truncated escape
           "denial op=x rule=y pid=1 exe=a path=%2a",        // lower-case escape
           "denial op=x rule=y pid=1 exe=a path=b\tc",       // raw control byte
           "landlock-run: permission denied",
       }) {
    EXPECT_EQ(decode_denial_line(line), std::nullopt) << line;
  }
}

TEST(DenialLine, CollectsRecordsAndDroppedCountsAmongOtherLines) {
  std::string status = "landlock-run: something\n";
  for (int i = 0; i < 70; ++i) {
    status += encode_denial_line(Denial{.op = "unlink", .rule = "read-only-mode", .path = "/x"});
  }
  status += encode_dropped_line(1000);
  status += "denial op=forged";  // an unfinished line is not a record
  DenialEvidence evidence;
  EXPECT_TRUE(collect_denials(status, evidence));
  EXPECT_EQ(evidence.records.size(), kMaxDenialRecords);
  EXPECT_EQ(evidence.total, 1070U);
  DenialEvidence none;
  EXPECT_FALSE(collect_denials("landlock-run: exec: No such file\n", none));
  EXPECT_EQ(none, DenialEvidence{});
}

}  // namespace
}  // namespace dsh::sandbox::profiles
