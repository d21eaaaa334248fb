// SPDX-License-Identifier: Apache-2.0
// The launcher grammar through the pure parser.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli.h"

namespace landlock_run {
namespace {

struct Parsed {
  Options options;
  std::vector<Grant> storage;
  std::string message;
};

Parsed parse(const std::vector<const char*>& tail) {
  std::vector<const char*> args(tail.size() + 1, "landlock-run");
  for (std::size_t i = 0; i < tail.size(); ++i) args[i + 1] = tail[i];
  Parsed parsed;
  parsed.storage.resize(args.size());
  parsed.options = parse_args(static_cast<int>(args.size()), args.data(), parsed.storage.data());
  char text[512];
  format_usage_error(parsed.options, text, sizeof(text));
  parsed.message = text;
  return parsed;
}

std::string usage_message(const std::vector<const char*>& args) {
  const Parsed parsed = parse(args);
  EXPECT_EQ(parsed.options.action, Action::kUsageError);
  return parsed.message;
}

TEST(LandlockRunCli, NoArgumentsIsMissingCommand) {
  EXPECT_EQ(usage_message({}), "usage error: missing `-- <argv>...` command");
}

TEST(LandlockRunCli, DoubleDashWithoutCommandIsMissingCommand) {
  EXPECT_EQ(usage_message({"--ro", "/", "--"}), "usage error: missing `-- <argv>...` command");
  EXPECT_EQ(usage_message({"--ro", "/"}), "usage error: missing `-- <argv>...` command");
}

TEST(LandlockRunCli, UnknownArgumentIsNamed) {
  EXPECT_EQ(usage_message({"--bogus", "--", "true"}), "usage error: unknown argument: --bogus");
  EXPECT_EQ(usage_message({"true"}), "usage error: unknown argument: true");
}

TEST(LandlockRunCli, GrantWithoutPathNamesTheFlag) {
  EXPECT_EQ(usage_message({"--ro"}), "usage error: --ro requires a path");
  EXPECT_EQ(usage_message({"--rw"}), "usage error: --rw requires a path");
}

TEST(LandlockRunCli, ProbeOnlyAsSoleArgument) {
  EXPECT_EQ(parse({"--probe"}).options.action, Action::kProbe);
  const std::string expected = "usage error: --probe takes no other arguments";
  EXPECT_EQ(usage_message({"--probe", "--ro", "/"}), expected);
  EXPECT_EQ(usage_message({"--probe", "--"}), expected);
  EXPECT_EQ(usage_message({"--probe", "--probe"}), expected);
  EXPECT_EQ(usage_message({"--ro", "/", "--probe", "--", "true"}), expected);
}

TEST(LandlockRunCli, FeaturesOnlyAsSoleArgument) {
  EXPECT_EQ(parse({"--features"}).options.action, Action::kFeatures);
  EXPECT_EQ(usage_message({"--features", "--"}),
            "usage error: --features takes no other arguments");
}

TEST(LandlockRunCli, GrantsKeepArgvOrderAndKind) {
  const Parsed parsed = parse({"--rw", "/a", "--ro", "/b", "--ro", "/c", "--", "cmd", "--ro"});
  ASSERT_EQ(parsed.options.action, Action::kRun);
  ASSERT_EQ(parsed.options.grant_count, 3U);
  EXPECT_STREQ(parsed.options.grants[0].path, "/a");
  EXPECT_TRUE(parsed.options.grants[0].read_write);
  EXPECT_STREQ(parsed.options.grants[1].path, "/b");
  EXPECT_FALSE(parsed.options.grants[1].read_write);
  EXPECT_STREQ(parsed.options.grants[2].path, "/c");
  EXPECT_EQ(parsed.options.command_index, 8);
}

// Notes grant nothing: they are kept apart from the grants by their kind, in argv order.
TEST(LandlockRunCli, NotesAreKeptWithTheirKind) {
  const Parsed parsed = parse({"--evidence", "--note-unreadable", "/h/.ssh", "--rw", "/ws",
                               "--note-read-only", "/ws/.git/config", "--", "cmd"});
  ASSERT_EQ(parsed.options.action, Action::kRun);
  ASSERT_EQ(parsed.options.grant_count, 3U);
  EXPECT_STREQ(parsed.options.grants[0].path, "/h/.ssh");
  EXPECT_EQ(parsed.options.grants[0].note, Note::kUnreadable);
  EXPECT_EQ(parsed.options.grants[1].note, Note::kNone);
  EXPECT_TRUE(parsed.options.grants[1].read_write);
  EXPECT_EQ(parsed.options.grants[2].note, Note::kReadOnly);
  EXPECT_FALSE(parsed.options.grants[2].read_write);
  const Parsed guards = parse({"--evidence", "--contain-metadata", "--guard-read-only", "/ws/.git",
                               "--guard-unreadable", "/ws/.env", "--", "cmd"});
  ASSERT_EQ(guards.options.action, Action::kRun);
  EXPECT_TRUE(guards.options.contain_metadata);
  ASSERT_EQ(guards.options.grant_count, 2U);
  EXPECT_EQ(guards.options.grants[0].note, Note::kReadOnly);
  EXPECT_TRUE(guards.options.grants[0].guard);
  EXPECT_EQ(guards.options.grants[1].note, Note::kUnreadable);
  EXPECT_TRUE(guards.options.grants[1].guard);
  EXPECT_FALSE(parsed.options.grants[0].guard);
  EXPECT_EQ(usage_message({"--note-read-only"}), "usage error: --note-read-only requires a path");
  EXPECT_EQ(usage_message({"--note-unreadable"}), "usage error: --note-unreadable requires a path");
}

TEST(LandlockRunCli, GrantConsumesDoubleDashAsPath) {
  const Parsed parsed = parse({"--ro", "--", "--", "cmd"});
  ASSERT_EQ(parsed.options.action, Action::kRun);
  ASSERT_EQ(parsed.options.grant_count, 1U);
  EXPECT_STREQ(parsed.options.grants[0].path, "--");
  EXPECT_EQ(parsed.options.command_index, 4);
}

TEST(LandlockRunCli, NothingAfterDoubleDashIsParsed) {
  const Parsed parsed = parse({"--", "--bogus", "--probe", "--ro"});
  ASSERT_EQ(parsed.options.action, Action::kRun);
  EXPECT_EQ(parsed.options.grant_count, 0U);
  EXPECT_EQ(parsed.options.command_index, 2);
}

TEST(LandlockRunCli, ExtensionsInAnyOrder) {
  const Parsed parsed = parse({"--scope-ipc", "--ro", "/", "--status-fd", "7", "--deny-network",
                               "--deny-metadata", "--", "true"});
  ASSERT_EQ(parsed.options.action, Action::kRun);
  EXPECT_TRUE(parsed.options.deny_network);
  EXPECT_TRUE(parsed.options.deny_metadata);
  EXPECT_TRUE(parsed.options.scope_ipc);
  EXPECT_EQ(parsed.options.status_fd, 7);
  EXPECT_EQ(parsed.options.max_abi, -1);
}

// The ABI cap weakens enforcement: only the test build (landlock-run-testing) knows it; the
// grammar every shipped launcher is built from refuses it like any other unknown option.
TEST(LandlockRunCli, ShippedGrammarRefusesTheTestOnlyAbiCap) {
  EXPECT_EQ(usage_message({"--max-abi", "3", "--ro", "/", "--", "true"}),
            "usage error: unknown argument: --max-abi");
}

TEST(LandlockRunCli, DefaultsAreNoExtension) {
  const Parsed parsed = parse({"--", "true"});
  ASSERT_EQ(parsed.options.action, Action::kRun);
  EXPECT_FALSE(parsed.options.deny_network);
  EXPECT_FALSE(parsed.options.deny_metadata);
  EXPECT_FALSE(parsed.options.scope_ipc);
  EXPECT_EQ(parsed.options.status_fd, -1);
  EXPECT_EQ(parsed.options.max_abi, -1);
}

TEST(LandlockRunCli, NumbersMustBeDecimal) {
  EXPECT_EQ(usage_message({"--status-fd", "x", "--", "true"}),
            "usage error: --status-fd requires a number");
  EXPECT_EQ(usage_message({"--status-fd", "-1", "--", "true"}),
            "usage error: --status-fd requires a number");
  EXPECT_EQ(usage_message({"--status-fd", "1234567890", "--", "true"}),
            "usage error: --status-fd requires a number");
  EXPECT_EQ(usage_message({"--status-fd", "", "--", "true"}),
            "usage error: --status-fd requires a number");
  EXPECT_EQ(usage_message({"--status-fd"}), "usage error: --status-fd requires a number");
}

TEST(LandlockRunCli, StatusFdIsKnownEvenWhenALaterArgumentFails) {
  const Parsed parsed = parse({"--status-fd", "9", "--bogus"});
  EXPECT_EQ(parsed.options.action, Action::kUsageError);
  EXPECT_EQ(parsed.options.status_fd, 9);
}

TEST(LandlockRunCli, ValuedExtensionsMayNotRepeat) {
  EXPECT_EQ(usage_message({"--status-fd", "3", "--status-fd", "9", "--", "true"}),
            "usage error: --status-fd given more than once");
  EXPECT_EQ(usage_message({"--status-fd", "3", "--status-fd", "4", "--", "true"}),
            "usage error: --status-fd given more than once");
}

TEST(LandlockRunCli, ChdirIsKeptAndMayNotRepeat) {
  const Parsed parsed = parse({"--chdir", "/w", "--ro", "/", "--", "pwd"});
  ASSERT_EQ(parsed.options.action, Action::kRun);
  EXPECT_STREQ(parsed.options.chdir_path, "/w");
  EXPECT_EQ(parsed.options.grant_count, 1U);
  EXPECT_EQ(parse({"--ro", "/", "--", "pwd"}).options.chdir_path, nullptr);
  EXPECT_EQ(usage_message({"--chdir", "/a", "--chdir", "/b", "--", "true"}),
            "usage error: --chdir given more than once");
}

// --list is a grant of its own kind, tolerant of a missing path, in argv order with the rest.
TEST(LandlockRunCli, ListIsAListOnlyGrantThatToleratesAMissingPath) {
  const Parsed parsed = parse({"--ro-try", "/usr", "--list", "/", "--rw", "/w", "--", "ls"});
  ASSERT_EQ(parsed.options.action, Action::kRun);
  ASSERT_EQ(parsed.options.grant_count, 3U);
  EXPECT_STREQ(parsed.options.grants[1].path, "/");
  EXPECT_TRUE(parsed.options.grants[1].list_only);
  EXPECT_TRUE(parsed.options.grants[1].if_exists);
  EXPECT_FALSE(parsed.options.grants[1].read_write);
  EXPECT_FALSE(parsed.options.grants[0].list_only);
  EXPECT_FALSE(parsed.options.grants[2].list_only);
  EXPECT_EQ(usage_message({"--list"}), "usage error: --list requires a path");
}

TEST(LandlockRunCli, SanitizeLineKeepsOneLine) {
  char text[] = "unknown argument: a\nlandlock-run: forged\r\x1b";
  sanitize_line(text);
  EXPECT_STREQ(text, "unknown argument: a?landlock-run: forged??");
}

}  // namespace
}  // namespace landlock_run
