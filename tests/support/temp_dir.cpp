// SPDX-License-Identifier: Apache-2.0
#include "temp_dir.h"

#include <ftw.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace dsh::testing {

TempDir::TempDir(const std::string& base) {
  std::string pattern = base + "/dsh-test-XXXXXX";
  if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  EXPECT_FALSE(path_.empty()) << "mkdtemp under " << base << " failed: " << std::strerror(errno);
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  const auto remove = [](const char* path, const struct stat*, int type, FTW*) {
    // A link is removed as itself: chmod and umount2 would act on what it points to (a test's
    // link to /tmp would take /tmp's mode with it).
    if (type != FTW_SL && type != FTW_SLN) {
      // A failed denial test may have left a mount; EINVAL (or EPERM) when there is none.
      ::umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW);
      ::chmod(path, 0700);
    }
    return ::remove(path);
  };
  ::nftw(path_.c_str(), remove, 16, FTW_DEPTH | FTW_PHYS);
}

std::string TempDir::mkdir(const std::string& name, int mode) const {
  const std::string path = *this / name;
  EXPECT_EQ(::mkdir(path.c_str(), static_cast<mode_t>(mode)), 0)
      << path << ": " << std::strerror(errno);
  ::chmod(path.c_str(), static_cast<mode_t>(mode));
  return path;
}

ScopedEnv::ScopedEnv(std::string name, const char* value) : name_(std::move(name)) {
  if (const char* old = ::getenv(name_.c_str())) old_ = old;
  if (value == nullptr) {
    ::unsetenv(name_.c_str());
  } else {
    ::setenv(name_.c_str(), value, 1);
  }
}

ScopedEnv::~ScopedEnv() {
  if (old_) {
    ::setenv(name_.c_str(), old_->c_str(), 1);
  } else {
    ::unsetenv(name_.c_str());
  }
}

std::string unique(const std::string& stem) {
  static std::atomic<int> counter{0};
  return stem + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
}

bool is_root() { return ::geteuid() == 0; }

}  // namespace dsh::testing
