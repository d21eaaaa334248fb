// SPDX-License-Identifier: Apache-2.0
// The launcher writes denial lines with its own C encoder (it links no project code): both must
// write the same bytes, and the status parser must keep records apart from failure lines.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "denial_record.h"
#include "path_walk.h"
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

// The supervisor is told where something already refuses: inside bwrap every unreadable path
// and carve-out; on the host the unreadable paths outside the writable roots, while a carve-out
// or an unreadable path inside one, which nothing refuses there, is the supervisor's to refuse.
// The notes only with evidence; under workspace-write the supervisor decides the write-class
// calls (--rule-writes, and --rule-home per home a writable root covers) with evidence or not,
// on both places.
TEST(LauncherStatus, SupervisorArgsNameWhatAlreadyRefusesOnlyWithEvidence) {
  const SandboxPolicy policy{ConfinedSandboxMode::kWorkspaceWrite, "/ws", std::nullopt};
  FsPlan plan;
  // The sandbox's own state is hidden too, but noting it would make every run's opens
  // notifications: it is left out, except where only the supervisor's guard refuses it.
  plan.unreadable = {
      {"/h/.ssh", true}, {"/ws/.env", false}, {"/var/tmp/dsh-sandbox-0", true, true}};
  plan.read_only = {{"/ws/.git/config", false}};
  plan.startup_guarded = {"/ws/.bashrc"};
  plan.homes = {"/ws"};
  const RunNeeds evidence{"", true, true};
  EXPECT_EQ(
      landlock_supervisor_args(evidence, policy, LandlockPlace::kInsideBwrap, plan),
      (std::vector<std::string>{"--rule-writes", "--rule-home", "/ws", "--note-unreadable",
                                "/h/.ssh", "--note-unreadable", "/ws/.env", "--note-read-only",
                                "/ws/.git/config", "--note-read-only", "/ws/.bashrc"}));
  EXPECT_EQ(landlock_supervisor_args(evidence, policy, LandlockPlace::kHost, plan),
            (std::vector<std::string>{"--contain-metadata", "--rule-writes", "--rule-home", "/ws",
                                      "--note-unreadable", "/h/.ssh", "--guard-unreadable",
                                      "/ws/.env", "--guard-read-only", "/ws/.git/config"}));
  // On the host the supervisor keeps file metadata inside the writable roots even where no
  // status channel reads its records; without evidence it still decides the writes.
  EXPECT_EQ(landlock_supervisor_args({"", false, true}, policy, LandlockPlace::kHost, plan),
            (std::vector<std::string>{"--evidence", "--contain-metadata", "--rule-writes",
                                      "--rule-home", "/ws"}));
  EXPECT_EQ(landlock_supervisor_args({"", true, false}, policy, LandlockPlace::kHost, plan),
            (std::vector<std::string>{"--evidence", "--rule-writes", "--rule-home", "/ws"}));
  EXPECT_TRUE(landlock_metadata_refusal(policy, {"", true, false}, true).has_value());
  EXPECT_FALSE(landlock_metadata_refusal(policy, {"", true, false}, false).has_value());
  EXPECT_FALSE(landlock_metadata_refusal(policy, {"", false, true}, true).has_value());
  const SandboxPolicy read_only{ConfinedSandboxMode::kReadOnly, "/ws", std::nullopt};
  EXPECT_FALSE(landlock_metadata_refusal(read_only, {"", true, false}, true).has_value());
  EXPECT_EQ(
      landlock_supervisor_args({"", false, false}, read_only, LandlockPlace::kInsideBwrap, plan),
      (std::vector<std::string>{}));
  EXPECT_EQ(landlock_supervisor_args({"", true, false}, policy, LandlockPlace::kInsideBwrap, plan),
            (std::vector<std::string>{"--evidence", "--rule-writes", "--rule-home", "/ws"}));
  EXPECT_EQ(landlock_supervisor_args({"", false, true}, policy, LandlockPlace::kInsideBwrap, plan),
            (std::vector<std::string>{"--evidence", "--rule-writes", "--rule-home", "/ws"}));
}

TEST(SupervisorPaths, ComparesComponentWise) {
  EXPECT_TRUE(landlock_run::path_beneath("/a/b/c", "/a/b"));
  EXPECT_TRUE(landlock_run::path_beneath("/a/b", "/a/b"));
  EXPECT_FALSE(landlock_run::path_beneath("/a/bc", "/a/b"));
  EXPECT_TRUE(landlock_run::path_beneath("/anything", "/"));
}

void expect_split(const char* path, const char* parent, const char* last, bool plain,
                  bool trailing_slash) {
  landlock_run::SpelledPath split{};
  ASSERT_TRUE(landlock_run::split_spelled(path, &split)) << path;
  EXPECT_STREQ(split.parent, parent) << path;
  EXPECT_STREQ(split.last, last) << path;
  EXPECT_EQ(split.plain, plain) << path;
  EXPECT_EQ(split.trailing_slash, trailing_slash) << path;
}

// The split is the kernel's: ".." and "." are never folded into the text (a link before them
// changes where they lead), trailing slashes belong to the last component.
TEST(SupervisorPaths, SplitsWhereTheKernelSplitsAndFoldsNothing) {
  expect_split("link/../../root/.ssh/keys", "link/../../root/.ssh/", "keys", true, false);
  expect_split("/dir//", "/", "dir", true, true);
  expect_split("name", "", "name", true, false);
  expect_split("a/..", "a/", "..", false, false);
  expect_split("///", "/", "", false, false);
  landlock_run::SpelledPath split{};
  EXPECT_FALSE(landlock_run::split_spelled("", &split));
}

TEST(SupervisorPaths, WalksComponentsAndSplicesALinksTargetBeforeTheRest) {
  char buffer[64] = "a//b/../c/";
  const char* cursor = buffer;
  char component[16];
  std::vector<std::string> seen;
  while (landlock_run::next_component(&cursor, component, sizeof(component))) {
    seen.emplace_back(component);
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "..", "c"}));
  char out[32] = "rest/x";
  ASSERT_TRUE(landlock_run::splice_link("/t/../u", out, out, sizeof(out)));
  EXPECT_STREQ(out, "/t/../u/rest/x");
  ASSERT_TRUE(landlock_run::splice_link("t", "", out, sizeof(out)));
  EXPECT_STREQ(out, "t");
  EXPECT_FALSE(landlock_run::splice_link("0123456789012345678901234567890", "x", out, sizeof(out)));
}

// The launcher's exec line and the consumer's are the same bytes.
TEST(LauncherStatus, ExecLineAgrees) {
  EXPECT_EQ(std::string_view(landlock_run::kExecLine), kLauncherExecLine);
}

// Only the exec line: the command ran, no failure. Nothing at all: silent, the in-band rule
// decides. The exec line then a failure: that failure.
TEST(LauncherStatus, TheExecLineIsNoFailureAndSilenceIsNotSuccess) {
  EXPECT_EQ(landlock_status_report("exec\n"), RunnerReport{});
  EXPECT_EQ(landlock_status_report("exec"), RunnerReport{});  // a reader dropped the newline
  EXPECT_FALSE(landlock_status_silent("exec\n"));
  EXPECT_TRUE(landlock_status_silent(""));
  EXPECT_EQ(landlock_status_report("exec\nlandlock-run: exec failed: No such file or directory\n")
                .exec_refused,
            127);
  EXPECT_EQ(landlock_status_report("landlock-run: seccomp filter error: EIO\n").failure,
            "landlock-run: seccomp filter error: EIO");
}

}  // namespace
}  // namespace dsh::sandbox::profiles
