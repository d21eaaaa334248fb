// SPDX-License-Identifier: Apache-2.0
// Spec §5.5 output caps: a bounded tail, and a private spill of the full output up to a cap.
#include "capture.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "temp_dir.h"

namespace dsh::sandbox::exec {
namespace {

using dsh::testing::TempDir;

std::string slurp(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(StreamCapture, WithinTheLimitKeepsEverythingAndSpillsNothing) {
  TempDir dir;
  StreamCapture capture("stdout", 10, 100, dir.path());
  capture.append("hello ");
  capture.append("you!");
  const StreamOutput out = capture.finish();
  EXPECT_EQ(out.tail, "hello you!");
  EXPECT_EQ(out.total_bytes, 10U);
  EXPECT_FALSE(out.truncated);
  EXPECT_FALSE(out.spill_path.has_value());
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(StreamCapture, OverflowKeepsTheTailAndSpillsTheFullOutputPrivately) {
  TempDir dir;
  StreamCapture capture("stderr", 4, 1000, dir.path());
  std::string all;
  for (int i = 0; i < 50; ++i) {
    const std::string chunk = std::to_string(i) + ",";
    all += chunk;
    capture.append(chunk);
  }
  const StreamOutput out = capture.finish();
  EXPECT_EQ(out.tail, all.substr(all.size() - 4));
  EXPECT_TRUE(out.truncated);
  EXPECT_EQ(out.total_bytes, all.size());
  ASSERT_TRUE(out.spill_path.has_value());
  EXPECT_FALSE(out.spill_truncated);
  EXPECT_EQ(slurp(*out.spill_path), all);
  struct stat file {};
  struct stat parent {};
  ASSERT_EQ(::stat(out.spill_path->c_str(), &file), 0);
  ASSERT_EQ(::stat(std::filesystem::path(*out.spill_path).parent_path().c_str(), &parent), 0);
  EXPECT_EQ(file.st_mode & 0777, 0600U);
  EXPECT_EQ(parent.st_mode & 0777, 0700U);
  EXPECT_EQ(std::filesystem::path(*out.spill_path).filename().string().rfind("stderr-", 0), 0U);
}

TEST(StreamCapture, SpillStopsAtItsCap) {
  TempDir dir;
  StreamCapture capture("stdout", 8, 20, dir.path());
  const std::string all(100, 'x');
  for (std::size_t i = 0; i < all.size(); i += 7)
    capture.append(std::string_view(all).substr(i, 7));
  const StreamOutput out = capture.finish();
  ASSERT_TRUE(out.spill_path.has_value());
  EXPECT_TRUE(out.spill_truncated);
  EXPECT_EQ(slurp(*out.spill_path).size(), 20U);
  EXPECT_EQ(out.tail, std::string(8, 'x'));
  EXPECT_EQ(out.total_bytes, 100U);
}

TEST(StreamCapture, ASingleHugeChunkIsTrimmedToTheTail) {
  TempDir dir;
  StreamCapture capture("stdout", 3, 1000, dir.path());
  capture.append("abcdefghij");
  const StreamOutput out = capture.finish();
  EXPECT_EQ(out.tail, "hij");
  ASSERT_TRUE(out.spill_path.has_value());
  EXPECT_EQ(slurp(*out.spill_path), "abcdefghij");
}

TEST(StreamCapture, AnUnusableSpillRootLosesTheSpillNeverTheTail) {
  StreamCapture capture("stdout", 3, 1000, "/nonexistent/dsh-spill-root");
  capture.append("abcdef");
  const StreamOutput out = capture.finish();
  EXPECT_EQ(out.tail, "def");
  EXPECT_TRUE(out.truncated);
  EXPECT_FALSE(out.spill_path.has_value());
}

}  // namespace
}  // namespace dsh::sandbox::exec
