// SPDX-License-Identifier: Apache-2.0
// Path helpers for tests: the native realpath(3) to compare canonicalization against, and a
// scoped change of the working directory.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

namespace dsh::testing {

// realpath(3) of `path`, or empty when it cannot be resolved.
inline std::string native_realpath(const std::string& path) {
  std::unique_ptr<char, decltype(&std::free)> resolved(::realpath(path.c_str(), nullptr),
                                                       &std::free);
  return resolved ? std::string(resolved.get()) : std::string();
}

class CwdGuard {
 public:
  explicit CwdGuard(const std::string& dir) : old_(std::filesystem::current_path()) {
    std::filesystem::current_path(dir);
  }
  ~CwdGuard() { std::filesystem::current_path(old_); }
  CwdGuard(const CwdGuard&) = delete;
  CwdGuard& operator=(const CwdGuard&) = delete;

 private:
  std::filesystem::path old_;
};

}  // namespace dsh::testing
