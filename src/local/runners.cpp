// SPDX-License-Identifier: Apache-2.0
#include "local/runners.h"

#include <unistd.h>

#include <array>
#include <climits>

namespace dsh::sandbox::local {

std::string locate_bwrap(const std::string& configured) {
  if (!configured.empty()) return configured;
  for (const char* path : {"/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap"}) {
    if (::access(path, X_OK) == 0) return path;
  }
  return "/usr/bin/bwrap";
}

std::string launcher_beside_self() {
  std::array<char, PATH_MAX> self{};
  const ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
  if (n <= 0) return {};
  std::string path(self.data(), static_cast<std::size_t>(n));
  return path.substr(0, path.rfind('/') + 1) + "landlock-run";
}

}  // namespace dsh::sandbox::local
