// SPDX-License-Identifier: Apache-2.0
// The one temporary directory of every suite, and a scoped environment variable override.
#pragma once

#include <optional>
#include <string>

namespace dsh::testing {

// A private directory (mkdtemp: 0700) under `base`, removed recursively on scope exit, even when
// a test left parts of it unwritable or a failed denial test left a mount in it.
// The default base is /var/tmp, not /tmp: bwrap's workspace-write mounts a fresh tmpfs on /tmp,
// so a sibling of a workspace under /tmp would be writable (and ephemeral) inside.
// A failed mkdtemp fails the current test and leaves path() empty.
class TempDir {
 public:
  static constexpr const char* kDefaultBase = "/var/tmp";

  explicit TempDir(const std::string& base = kDefaultBase);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

  // Creates `name` with exactly `mode` (past the umask) and returns its path.
  std::string mkdir(const std::string& name, int mode = 0755) const;

 private:
  std::string path_;
};

class ScopedEnv {
 public:
  ScopedEnv(std::string name, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// stem-<pid>-<counter>: the caller and nobody legs run at the same time and never collide.
std::string unique(const std::string& stem);

bool is_root();

}  // namespace dsh::testing
