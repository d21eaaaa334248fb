// SPDX-License-Identifier: Apache-2.0
// Fake runners for tests: small executable shell scripts written into a test's temp dir.
#pragma once

#include <sys/stat.h>

#include <fstream>
#include <string>

namespace dsh::testing {

// Writes `body` as an executable /bin/sh script at `path` and returns the path.
inline std::string write_script(const std::string& path, const std::string& body) {
  {
    std::ofstream file(path);
    file << "#!/bin/sh\n" << body << "\n";
  }
  ::chmod(path.c_str(), 0755);
  return path;
}

}  // namespace dsh::testing
