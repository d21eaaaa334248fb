// SPDX-License-Identifier: Apache-2.0
#include "profiles/runner_report.h"

#include <cerrno>
#include <cstring>

namespace dsh::sandbox::profiles {

std::optional<int> refused_errno(std::string_view line, std::string_view prefix) {
  if (!line.starts_with(prefix)) return std::nullopt;
  const std::size_t colon = line.rfind(": ");
  const std::string_view reason = colon == std::string_view::npos ? "" : line.substr(colon + 2);
  return reason == ::strerrordesc_np(ENOENT) ? ENOENT : EACCES;
}

std::optional<int> exec_refusal(std::string_view line, std::string_view prefix) {
  const std::optional<int> error = refused_errno(line, prefix);
  if (!error) return std::nullopt;
  return *error == ENOENT ? 127 : 126;
}

}  // namespace dsh::sandbox::profiles
