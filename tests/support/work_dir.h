// SPDX-License-Identifier: Apache-2.0
// Integration-test helpers shared by the suites that run confined commands for real: a private
// directory that is removed even when a test left it unwritable, and collision-free names for
// the caller and nobody legs that run at the same time.
#pragma once

#include <ftw.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

namespace dsh::testing {

// A private directory (mkdtemp: 0700) under `base`, removed recursively, modes restored first.
// The suites put it under /var/tmp, not /tmp: bwrap's workspace-write mounts a fresh tmpfs on
// /tmp, so a sibling of a workspace under /tmp would be writable (and ephemeral) inside.
class WorkDir {
 public:
  explicit WorkDir(const std::string& base = "/var/tmp") {
    std::string pattern = base + "/dsh-it-XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
    EXPECT_FALSE(path_.empty()) << "mkdtemp under " << base << " failed: " << std::strerror(errno);
  }
  ~WorkDir() {
    if (path_.empty()) return;
    const auto remove = [](const char* path, const struct stat*, int, FTW*) {
      ::chmod(path, 0700);
      return ::remove(path);
    };
    ::nftw(path_.c_str(), remove, 16, FTW_DEPTH | FTW_PHYS);
  }
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

  // Creates `name` with exactly `mode` (past the umask) and returns its path.
  std::string mkdir(const std::string& name, int mode = 0755) const {
    const std::string path = *this / name;
    EXPECT_EQ(::mkdir(path.c_str(), static_cast<mode_t>(mode)), 0)
        << path << ": " << std::strerror(errno);
    ::chmod(path.c_str(), static_cast<mode_t>(mode));
    return path;
  }

 private:
  std::string path_;
};

// stem-<pid>-<counter>: the caller and nobody legs run concurrently and never collide.
inline std::string unique(const std::string& stem) {
  static std::atomic<int> counter{0};
  return stem + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
}

inline bool is_root() { return ::geteuid() == 0; }

}  // namespace dsh::testing
