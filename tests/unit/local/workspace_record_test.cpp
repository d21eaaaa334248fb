// SPDX-License-Identifier: Apache-2.0
// The per-user record of the directories confined runs could write: its format, its bounds, and
// a corrupt record refused rather than read as empty.
#include "local/workspace_record.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

namespace dsh::sandbox::local {
namespace {

using Roots = std::vector<std::string>;

std::string error_of(std::string_view text) {
  const auto parsed = parse_workspace_record(text);
  return parsed ? std::string("valid") : parsed.error().message;
}

TEST(WorkspaceRecord, RoundTrips) {
  const Roots roots = {"/home/me/ws", "/data/work"};
  const std::string text = format_workspace_record(roots);
  EXPECT_EQ(text, "{\"version\":1,\"workspaces\":[\"/home/me/ws\",\"/data/work\"]}\n");
  const auto parsed = parse_workspace_record(text);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed.value(), roots);
  EXPECT_EQ(parse_workspace_record(format_workspace_record({})).value(), Roots{});
}

TEST(WorkspaceRecord, CorruptRecordsAreErrorsNeverEmpty) {
  EXPECT_NE(error_of(""), "valid");
  EXPECT_NE(error_of("{\"version\":1,\"workspaces\":[\"/a\""), "valid");  // truncated
  EXPECT_NE(error_of("[]"), "valid");
  EXPECT_NE(error_of("{\"workspaces\":[]}"), "valid");
  EXPECT_NE(error_of("{\"version\":2,\"workspaces\":[]}"), "valid");
  EXPECT_NE(error_of("{\"version\":\"1\",\"workspaces\":[]}"), "valid");
  EXPECT_NE(error_of("{\"version\":1,\"workspaces\":[],\"extra\":0}"), "valid");
  EXPECT_NE(error_of("{\"version\":1,\"workspaces\":{}}"), "valid");
  EXPECT_NE(error_of("{\"version\":1,\"workspaces\":[1]}"), "valid");
  EXPECT_NE(error_of("{\"version\":1,\"workspaces\":[\"\"]}"), "valid");
  EXPECT_NE(error_of("{\"version\":1,\"workspaces\":[\"relative\"]}"), "valid");
  EXPECT_NE(error_of("{\"version\":1,\"workspaces\":[\"/a/../b\"]}"), "valid");
  EXPECT_NE(error_of("{\"version\":1,\"workspaces\":[\"/a/\"]}"), "valid");
  EXPECT_NE(error_of("{\"version\":1,\"workspaces\":[\"/a\\u0000b\"]}"), "valid");
  EXPECT_EQ(error_of("{\"version\":1,\"workspaces\":[\"/a\",\"/a\"]}"), "\"/a\" is listed twice");
}

TEST(WorkspaceRecord, MoreThanTheBoundIsCorrupt) {
  Roots roots;
  for (std::size_t i = 0; i <= kMaxRecordedWorkspaces; ++i) roots.push_back(fmt::format("/w{}", i));
  EXPECT_NE(error_of(format_workspace_record(roots)), "valid");
  roots.pop_back();
  EXPECT_EQ(error_of(format_workspace_record(roots)), "valid");
}

TEST(WorkspaceRecord, MergeDeduplicatesAndMovesToNewest) {
  EXPECT_EQ(merge_workspace_record(Roots{"/a", "/b"}, Roots{"/a"}), (Roots{"/b", "/a"}));
  EXPECT_EQ(merge_workspace_record(Roots{}, Roots{"/a", "/a"}), (Roots{"/a"}));
  EXPECT_EQ(merge_workspace_record(Roots{"/a"}, Roots{}), (Roots{"/a"}));
}

TEST(WorkspaceRecord, ARootBeneathAnotherIsRedundant) {
  // A new root beneath a recorded one adds nothing but refreshes the covering root.
  EXPECT_EQ(merge_workspace_record(Roots{"/home/u", "/x"}, Roots{"/home/u/ws"}),
            (Roots{"/x", "/home/u"}));
  // A new root covering recorded ones replaces them all.
  EXPECT_EQ(merge_workspace_record(Roots{"/home/u/a", "/x", "/home/u/b"}, Roots{"/home/u"}),
            (Roots{"/x", "/home/u"}));
  // A sibling spelled with a common prefix is not beneath.
  EXPECT_EQ(merge_workspace_record(Roots{"/home/u"}, Roots{"/home/user"}),
            (Roots{"/home/u", "/home/user"}));
}

TEST(WorkspaceRecord, KeepsTheNewestWithinTheBound) {
  Roots recorded;
  for (std::size_t i = 0; i < kMaxRecordedWorkspaces; ++i) {
    recorded.push_back(fmt::format("/w{}", i));
  }
  const Roots merged = merge_workspace_record(recorded, Roots{"/new"});
  ASSERT_EQ(merged.size(), kMaxRecordedWorkspaces);
  EXPECT_EQ(merged.front(), "/w1");  // the oldest is forgotten
  EXPECT_EQ(merged.back(), "/new");
  EXPECT_EQ(merge_workspace_record(Roots{"/a", "/b", "/c"}, Roots{"/d"}, 2), (Roots{"/c", "/d"}));
}

}  // namespace
}  // namespace dsh::sandbox::local
