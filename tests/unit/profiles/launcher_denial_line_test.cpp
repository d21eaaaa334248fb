// SPDX-License-Identifier: Apache-2.0
// The launcher writes denial lines with its own C encoder (it links no project code): both must
// write the same bytes, and the status parser must keep records apart from failure lines.
#include <gtest/gtest.h>

#include <string>

#include "denial_record.h"
#include "profiles/denial_line.h"
#include "profiles/landlock_run.h"
#include "supervisor.h"

namespace dsh::sandbox::profiles {
namespace {

std::string launcher_line(const Denial& denial) {
  char line[landlock_run::kDenialLineMax];
  const std::size_t length = landlock_run::format_denial_line(
      line, sizeof(line), denial.op.c_str(), denial.rule.c_str(), denial.pid.value_or(0),
      denial.exe.c_str(), denial.path.c_str());
  return {line, length};
}

TEST(LauncherDenialLine, AgreesByteForByteWithTheCppEncoder) {
  std::string every_byte;
  for (int byte = 1; byte < 256; ++byte) every_byte += static_cast<char>(byte);
  const Denial cases[] = {
      {"open-write", "outside-writable-roots", "/etc/a b\n%", 42, "/usr/bin/touch"},
      {"create", "read-only-mode", every_byte, std::nullopt, ""},
      {"socket", "network-denied", "af-inet", 1, every_byte},
  };
  for (const Denial& denial : cases) {
    EXPECT_EQ(launcher_line(denial), encode_denial_line(denial));
    EXPECT_EQ(decode_denial_line(
                  encode_denial_line(denial).substr(0, encode_denial_line(denial).size() - 1)),
              denial);
  }
  char line[64];
  const std::size_t length = landlock_run::format_dropped_line(line, sizeof(line), 99936);
  EXPECT_EQ(std::string(line, length), encode_dropped_line(99936));
}

TEST(LauncherDenialLine, RefusesToTruncate) {
  char line[16];
  EXPECT_EQ(landlock_run::format_denial_line(line, sizeof(line), "create", "x", 1, "", "/etc/x"),
            0U);
}

TEST(LauncherStatus, RecordsAreNoFailure) {
  const std::string records =
      "denial op=create rule=outside-writable-roots pid=3 exe=/bin/sh path=/etc/x\n"
      "denials-dropped 5\n";
  EXPECT_EQ(landlock_status_report(records), RunnerReport{});
  const RunnerReport refused =
      landlock_status_report(records + "landlock-run: exec failed: No such file or directory\n");
  EXPECT_EQ(refused.exec_refused, 127);
  EXPECT_EQ(
      landlock_status_report(records + "landlock-run: cannot open rule path: /x: boom\n").failure,
      "landlock-run: cannot open rule path: /x: boom");
}

TEST(LauncherStatus, EvidenceIsAskedForWithStatusChannelsUnlessSwitchedOff) {
  EXPECT_EQ(landlock_run_args({"", true, true}),
            (std::vector<std::string>{"--status-fd", "4", "--evidence"}));
  EXPECT_EQ(landlock_run_args({"", true, false}), (std::vector<std::string>{"--status-fd", "4"}));
  EXPECT_TRUE(landlock_run_args({"", false, true}).empty());
}

TEST(SupervisorPaths, JoinsAndComparesComponentWise) {
  char out[4096];
  ASSERT_TRUE(landlock_run::join_lexically("/work/ws", "../x/./y//z/..", out, sizeof(out)));
  EXPECT_STREQ(out, "/work/x/y");
  ASSERT_TRUE(landlock_run::join_lexically("/a", "/../..", out, sizeof(out)));
  EXPECT_STREQ(out, "/");
  EXPECT_TRUE(landlock_run::path_beneath("/a/b/c", "/a/b"));
  EXPECT_TRUE(landlock_run::path_beneath("/a/b", "/a/b"));
  EXPECT_FALSE(landlock_run::path_beneath("/a/bc", "/a/b"));
  EXPECT_TRUE(landlock_run::path_beneath("/anything", "/"));
}

}  // namespace
}  // namespace dsh::sandbox::profiles
