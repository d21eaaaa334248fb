// SPDX-License-Identifier: Apache-2.0
// output caps: a bounded tail, and a private spill of the full output up to a cap.
#include "exec/capture.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

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

// A request whose spill is kept (the render hands its path on): tail `max` per stream.
Request kept(std::size_t max, std::uint64_t spill_cap, const std::string& root) {
  Request request;
  request.stdout_max_bytes = max;
  request.stderr_max_bytes = max;
  request.max_spill_bytes = spill_cap;
  request.spill_root = root;
  request.keep_spill = true;
  return request;
}

std::size_t count_files(const std::string& dir) {
  std::error_code error;
  std::size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (entry.is_regular_file()) ++count;
  }
  return count;
}

TEST(StreamCapture, WithinTheLimitKeepsEverythingAndSpillsNothing) {
  TempDir dir;
  StreamCapture capture("stdout", kept(10, 100, dir.path()));
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
  StreamCapture capture("stderr", kept(4, 1000, dir.path()));
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
  StreamCapture capture("stdout", kept(8, 20, dir.path()));
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
  StreamCapture capture("stdout", kept(3, 1000, dir.path()));
  capture.append("abcdefghij");
  const StreamOutput out = capture.finish();
  EXPECT_EQ(out.tail, "hij");
  ASSERT_TRUE(out.spill_path.has_value());
  EXPECT_EQ(slurp(*out.spill_path), "abcdefghij");
}

TEST(StreamCapture, AnUnusableSpillRootLosesTheSpillNeverTheTail) {
  StreamCapture capture("stdout", kept(3, 1000, "/nonexistent/dsh-spill-root"));
  capture.append("abcdef");
  const StreamOutput out = capture.finish();
  EXPECT_EQ(out.tail, "def");
  EXPECT_TRUE(out.truncated);
  EXPECT_FALSE(out.spill_path.has_value());
}

TEST(StreamCapture, ASpillNotKeptIsRemovedWhenTheRunEnds) {
  TempDir dir;
  Request request = kept(4, 1000, dir.path());
  request.keep_spill = false;
  {
    StreamCapture capture("stdout", request);
    capture.append("0123456789");
    const StreamOutput out = capture.finish();
    EXPECT_TRUE(out.truncated);
    EXPECT_FALSE(out.spill_path.has_value());
  }
  {
    StreamCapture abandoned("stdout", request);  // destroyed unfinished (an exception)
    abandoned.append("0123456789");
  }
  const std::string user_dir = dir / ("dsh-sandbox-" + std::to_string(::geteuid()));
  EXPECT_EQ(count_files(user_dir), 0U);
}

TEST(StreamCapture, TheSpillGoesToAPrivatePerUserDirectory) {
  TempDir dir;
  StreamCapture capture("stdout", kept(2, 1000, dir.path()));
  capture.append("abcdef");
  const StreamOutput out = capture.finish();
  ASSERT_TRUE(out.spill_path.has_value());
  EXPECT_EQ(std::filesystem::path(*out.spill_path).parent_path().string(),
            dir / ("dsh-sandbox-" + std::to_string(::geteuid())));
}

TEST(StreamCapture, APlantedOrOpenUserDirectoryIsRefusedNotUsed) {
  TempDir dir;
  const std::string name = "dsh-sandbox-" + std::to_string(::geteuid());
  // A link in the per-user directory's place, to a directory the planter reads.
  TempDir elsewhere;
  ASSERT_EQ(::symlink(elsewhere.path().c_str(), (dir / name).c_str()), 0);
  {
    StreamCapture capture("stdout", kept(2, 1000, dir.path()));
    capture.append("abcdef");
    const StreamOutput out = capture.finish();
    EXPECT_EQ(out.tail, "ef");
    EXPECT_FALSE(out.spill_path.has_value());
  }
  EXPECT_EQ(count_files(elsewhere.path()), 0U);
  // A real directory, but open to others.
  TempDir other;
  ASSERT_EQ(::mkdir((other / name).c_str(), 0777), 0);
  ASSERT_EQ(::chmod((other / name).c_str(), 0777), 0);
  StreamCapture capture("stdout", kept(2, 1000, other.path()));
  capture.append("abcdef");
  EXPECT_FALSE(capture.finish().spill_path.has_value());
  EXPECT_EQ(count_files(other / name), 0U);
}

TEST(StreamCapture, KeptSpillsAreBoundedPerUserOldestFirst) {
  TempDir dir;
  Request request = kept(1, 1000, dir.path());
  request.kept_spill_bytes = 25;  // room for two spills of 10 bytes
  std::vector<std::string> paths;
  for (int i = 0; i < 4; ++i) {
    StreamCapture capture("stdout", request);
    capture.append("0123456789");
    const StreamOutput out = capture.finish();
    ASSERT_TRUE(out.spill_path.has_value());
    paths.push_back(*out.spill_path);
    // Distinct modification times, oldest first.
    const struct timespec times[2] = {{0, UTIME_OMIT}, {1000 + i, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, out.spill_path->c_str(), times, 0), 0);
  }
  EXPECT_FALSE(std::filesystem::exists(paths[0]));
  EXPECT_FALSE(std::filesystem::exists(paths[1]));
  EXPECT_TRUE(std::filesystem::exists(paths[2]));
  EXPECT_TRUE(std::filesystem::exists(paths[3]));
}

// A spill cap of 0: no spill file at all, even when the tail overflows; the tail stays exact.
TEST(StreamCapture, ZeroSpillCapMakesNoSpillFile) {
  TempDir dir;
  StreamCapture capture("stdout", kept(4, 0, dir.path()));
  capture.append("0123456789");
  const StreamOutput out = capture.finish();
  EXPECT_EQ(out.tail, "6789");
  EXPECT_EQ(out.total_bytes, 10U);
  EXPECT_TRUE(out.truncated);
  EXPECT_FALSE(out.spill_path.has_value());
  EXPECT_FALSE(out.spill_truncated);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

}  // namespace
}  // namespace dsh::sandbox::exec
