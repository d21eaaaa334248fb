// SPDX-License-Identifier: Apache-2.0
// Text helpers shared by the integration harnesses.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace dsh::testing {

// The lines of `text`, without their newlines.
inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

}  // namespace dsh::testing
