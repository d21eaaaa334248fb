// SPDX-License-Identifier: Apache-2.0
#include "setup.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/roots.h"
#include "probe_cache.h"

namespace dsh::sandbox::cli {

// The config file holds the provider's keys and the default mode.
Setup load_setup(const std::string& path) {
  Setup setup;
  if (path.empty()) return setup;
  std::ifstream file(path);
  if (!file) {
    throw InvalidSandboxInputError(
        fmt::format("config file \"{}\" cannot be read; check the path", path));
  }
  std::stringstream contents;
  contents << file.rdbuf();
  const std::string text = contents.str();
  auto provider = config_from_json(text);
  if (!provider) {
    throw InvalidSandboxInputError(
        fmt::format("config file \"{}\": {}", path, provider.error().message));
  }
  setup.provider = std::move(provider).value();
  const nlohmann::json document = nlohmann::json::parse(text);
  if (document.contains("mode")) {
    const nlohmann::json& mode = document["mode"];
    if (!mode.is_string()) {
      throw InvalidSandboxInputError(
          fmt::format("config file \"{}\": mode must be a string", path));
    }
    setup.mode = parse_sandbox_mode(mode.get<std::string>()).value();
  }
  return setup;
}

// An absolute existing directory, resolved realpath-first.
std::string workspace_root(const std::string& given) {
  const std::string spelled = given.empty() ? working_directory() : given;
  if (spelled.empty() || spelled.front() != '/') {
    throw InvalidSandboxInputError(fmt::format(
        "--workspace \"{}\" is not an absolute path; pass an absolute directory", spelled));
  }
  struct stat info {};
  if (::stat(spelled.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    throw InvalidSandboxInputError(fmt::format(
        "--workspace \"{}\" is not an existing directory; create it or pass another", spelled));
  }
  return resolve_workspace_root(spelled);
}

LocalSandboxProvider make_provider(const LocalSandboxConfig& config) {
  return LocalSandboxProvider(config, {}, local::make_user_verdict_store(config));
}

}  // namespace dsh::sandbox::cli
