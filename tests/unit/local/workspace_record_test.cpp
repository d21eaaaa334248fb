// SPDX-License-Identifier: Apache-2.0
// The per-user record of the directories confined runs could write: its format, its bounds, and
// a corrupt record refused rather than read as empty.
#include "local/workspace_record.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dsh/sandbox/roots.h"

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

// The record as written (printable ASCII paths) and as any other JSON spelling of the same
// document read alike; what the plain reading refuses is what the JSON reading refuses.
TEST(WorkspaceRecord, EverySpellingOfARecordReadsAlike) {
  const Roots odd = {"/a\"quote", "/back\\slash", "/caf\xc3\xa9", "/tab\there"};
  EXPECT_EQ(parse_workspace_record(format_workspace_record(odd)).value(), odd);
  EXPECT_EQ(parse_workspace_record("{ \"version\": 1, \"workspaces\": [ \"/a\" ] }").value(),
            Roots{"/a"});
  EXPECT_EQ(parse_workspace_record("{\"workspaces\":[\"/a\"],\"version\":1}").value(), Roots{"/a"});
  EXPECT_EQ(parse_workspace_record("{\"version\":1,\"workspaces\":[\"/a\"]}").value(), Roots{"/a"});
  EXPECT_EQ(parse_workspace_record("{\"version\":1,\"workspaces\":[\"/\"]}").value(), Roots{"/"});
  EXPECT_NE(error_of("{\"version\":1,\"workspaces\":[\"/a\",]}"), "valid");
  EXPECT_NE(error_of("{\"version\":1,\"workspaces\":[\"/a\"\"/b\"]}"), "valid");
  EXPECT_NE(error_of("{\"version\":1,\"workspaces\":[\"/a\"]}x"), "valid");
  EXPECT_NE(error_of("{\"version\":1,\"workspaces\":[\"/a//b\"]}"), "valid");
  EXPECT_NE(error_of("{\"version\":1,\"workspaces\":[\"/a/./b\"]}"), "valid");
  EXPECT_NE(error_of("{\"version\":1,\"workspaces\":[\"/a/.\"]}"), "valid");
  EXPECT_NE(error_of("{\"version\":1,\"workspaces\":[\"/a/..\"]}"), "valid");
  EXPECT_NE(error_of("{\"version\":1,\"workspaces\":[\"/a\x01\"]}"), "valid");  // raw control
  EXPECT_EQ(error_of("{\"version\":1,\"workspaces\":[\"/a/\"]}"),
            "\"/a/\" is not an absolute normalized path");
  EXPECT_EQ(error_of("{ \"version\":1,\"workspaces\":[\"/a/\"]}"),
            "\"/a/\" is not an absolute normalized path");
}

// The pairwise rule the merge is defined by, as it was written first: the merge must give what
// this gives, however it gets there.
Roots merged_pairwise(const Roots& recorded, const Roots& added, std::size_t limit) {
  Roots all(recorded.begin(), recorded.end());
  all.insert(all.end(), added.begin(), added.end());
  std::reverse(all.begin(), all.end());
  Roots kept;
  for (const std::string& root : all) {
    if (root.empty()) continue;
    if (std::any_of(kept.begin(), kept.end(),
                    [&root](const std::string& k) { return is_beneath(root, k); })) {
      continue;
    }
    const auto covered = std::find_if(
        kept.begin(), kept.end(), [&root](const std::string& k) { return is_beneath(k, root); });
    if (covered == kept.end()) {
      kept.push_back(root);
      continue;
    }
    *covered = root;
    kept.erase(std::remove_if(std::next(covered), kept.end(),
                              [&root](const std::string& k) { return is_beneath(k, root); }),
               kept.end());
  }
  if (kept.size() > limit) kept.resize(limit);
  std::reverse(kept.begin(), kept.end());
  return kept;
}

TEST(WorkspaceRecord, MergeGivesWhatThePairwiseRuleGives) {
  // Paths over a small alphabet, so that equal, nested and prefix-sharing ones are frequent.
  const std::vector<std::string> parts = {"a", "b", "ab", "a b"};
  std::mt19937 random(7);
  const auto path = [&] {
    std::string made;
    const std::size_t depth = random() % 4;
    for (std::size_t i = 0; i < depth; ++i) made += "/" + parts[random() % parts.size()];
    return made.empty() ? std::string(random() % 8 == 0 ? "/" : "") : made;
  };
  for (int round = 0; round < 3000; ++round) {
    Roots recorded;
    Roots added;
    for (std::size_t i = random() % 9; i > 0; --i) recorded.push_back(path());
    for (std::size_t i = random() % 3; i > 0; --i) added.push_back(path());
    const std::size_t limit = 1 + random() % 8;
    EXPECT_EQ(merge_workspace_record(recorded, added, limit),
              merged_pairwise(recorded, added, limit))
        << ::testing::PrintToString(recorded) << " + " << ::testing::PrintToString(added);
  }
}

}  // namespace
}  // namespace dsh::sandbox::local
