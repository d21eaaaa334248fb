// SPDX-License-Identifier: Apache-2.0
// One call's memory of its trust checks: what it keeps while a scope is open, that it keeps
// nothing without one, forgets everything when a command starts, and is not seen by a forked
// child.
#include "seam/call_scope.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <climits>
#include <filesystem>
#include <fstream>

#include "dsh/sandbox/roots.h"
#include "temp_dir.h"

namespace dsh::sandbox {
namespace {

using dsh::testing::TempDir;

// A file the trust check accepts (outside every root, 0600, the caller's), in a 0755 directory.
struct Checked {
  TempDir dir;
  std::string path;
  Checked() : path(dir / "runner") {
    ::chmod(dir.path().c_str(), 0755);
    { std::ofstream(path) << "x"; }
    ::chmod(path.c_str(), 0600);
  }
};

bool trusted(const std::string& path, const std::vector<std::string>& roots) {
  return check_trusted_path(path, roots).has_value();
}

TEST(CallScope, AFileIsWalkedOncePerCallAndAgainAfterACommandStarts) {
  Checked file;
  const std::vector<std::string> roots = {"/nonexistent-root"};
  const CallScope call;
  ASSERT_TRUE(trusted(file.path, roots));
  ::chmod(file.path.c_str(), 0666);                   // world-writable now: a fresh walk refuses it
  EXPECT_TRUE(trusted(file.path, roots));             // the same call: the answer it already has
  EXPECT_FALSE(trusted(file.path, {"/other-root"}));  // other roots: walked afresh
  CallScope::forget();                                // a command started
  EXPECT_FALSE(trusted(file.path, roots));
}

TEST(CallScope, WithoutAScopeEveryCheckWalks) {
  Checked file;
  ASSERT_TRUE(trusted(file.path, {}));
  ::chmod(file.path.c_str(), 0666);
  EXPECT_FALSE(trusted(file.path, {}));
  {
    const CallScope call;
    EXPECT_FALSE(trusted(file.path, {}));
  }
  ::chmod(file.path.c_str(), 0600);
  EXPECT_TRUE(trusted(file.path, {}));  // the closed scope kept nothing past its end
}

TEST(CallScope, AnInnerScopeSharesTheOuterOnesMemory) {
  Checked file;
  const CallScope call;
  {
    const CallScope inner;
    ASSERT_TRUE(trusted(file.path, {}));
  }
  ::chmod(file.path.c_str(), 0666);
  EXPECT_TRUE(trusted(file.path, {}));
}

TEST(CallScope, AForkedChildWalksForItself) {
  Checked file;
  const CallScope call;
  ASSERT_TRUE(trusted(file.path, {}));
  ::chmod(file.path.c_str(), 0666);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(trusted(file.path, {}) ? 1 : 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child used the parent's walk";
}

TEST(CallScope, RootsKnownCanonicalAreTakenAsTheyAre) {
  TempDir dir;
  const std::string real = dir.mkdir("real", 0755);
  const std::string link = dir / "link";
  std::filesystem::create_directory_symlink(real, link);
  EXPECT_EQ(canonical_root(link), canonical_path(real));  // no scope: resolved
  const CallScope call;
  const std::vector<std::string> recorded = {link};
  CallScope::keep_canonical(recorded);
  EXPECT_EQ(canonical_root(link), link);
  CallScope::forget();
  EXPECT_EQ(canonical_root(link), canonical_path(real));
}

TEST(CallScope, TheRunningExecutableIsReadFromProc) {
  std::array<char, PATH_MAX> self{};
  const ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
  ASSERT_GT(n, 0);
  const std::string expected(self.data(), static_cast<std::size_t>(n));
  EXPECT_EQ(self_executable(), expected);
  const CallScope call;
  EXPECT_EQ(self_executable(), expected);
  EXPECT_EQ(self_executable(), expected);
}

}  // namespace
}  // namespace dsh::sandbox
