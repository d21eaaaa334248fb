// SPDX-License-Identifier: Apache-2.0
// The child's environment: ambient secrets and DSH_* never reach a command unless
// the caller passes them on purpose; terminal overrides keep tools from paging or colouring.
#include <algorithm>
#include <array>
#include <initializer_list>

#include "base/text.h"
#include "exec/exec.h"

namespace dsh::sandbox::exec {

namespace {

constexpr std::array<std::string_view, 4> kSecretWords = {"key", "password", "secret", "token"};

// `merged` with each layer over it, in order, as NAME=VALUE strings.
std::vector<std::string> entries(EnvMap merged, std::initializer_list<const EnvMap*> layers) {
  for (const EnvMap* layer : layers) {
    for (const auto& [name, value] : *layer) merged.insert_or_assign(name, value);
  }
  std::vector<std::string> out;
  out.reserve(merged.size());
  for (const auto& [name, value] : merged) {
    std::string entry = name;
    entry.append("=").append(value);
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

bool is_scrubbed_name(std::string_view name) {
  if (name.starts_with("DSH_")) return true;
  const std::string name_lower = text::ascii_lower(name);
  return std::any_of(kSecretWords.begin(), kSecretWords.end(), [&](std::string_view word) {
    return name_lower.find(word) != std::string::npos;
  });
}

std::vector<std::string> build_environment(const std::vector<std::string>& ambient,
                                           const EnvMap& caller, const EnvMap& managed) {
  EnvMap merged;
  for (const std::string& entry : ambient) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;  // not NAME=VALUE: never passed on
    const std::string name = entry.substr(0, eq);
    if (!is_scrubbed_name(name)) merged.emplace(name, entry.substr(eq + 1));  // first wins
  }
  const EnvMap overrides = {
      {"NO_COLOR", "1"}, {"TERM", "dumb"}, {"PAGER", "cat"}, {"GIT_PAGER", "cat"}};
  return entries(std::move(merged), {&overrides, &caller, &managed});
}

std::vector<std::string> exact_environment(const EnvMap& caller, const EnvMap& managed) {
  return entries({}, {&caller, &managed});
}

}  // namespace dsh::sandbox::exec
