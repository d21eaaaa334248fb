// SPDX-License-Identifier: Apache-2.0
#include "plan/config_files.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/roots.h"
#include "dsh/sandbox/trust.h"
#include "seam/json_codec.h"
#include "seam/trusted_file.h"

namespace dsh::sandbox::plan {

namespace {

// A config is a few keys; anything this large is not one.
constexpr std::size_t kMaxConfigBytes = std::size_t{1} << 20;

constexpr const char* kSystemConfig = "/etc/dsh-sandbox/config.json";

// The user's file by the XDG base directory rule: $XDG_CONFIG_HOME when it is absolute, else
// ~/.config; none without either.
std::string user_config_path() {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read once per call, before any thread starts
  const char* config_home = std::getenv("XDG_CONFIG_HOME");
  if (config_home != nullptr && config_home[0] == '/') {
    return std::string(config_home) + "/dsh-sandbox/config.json";
  }
  const char* home = std::getenv("HOME");  // NOLINT(concurrency-mt-unsafe): as above
  if (home == nullptr || home[0] != '/') return {};
  return std::string(home) + "/.config/dsh-sandbox/config.json";
}

// Whether a default file is absent: nothing there, or a directory on the way this user may not
// search (root's ~/.config, for a call of nobody's that inherited HOME).
bool absent(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) == 0) return false;
  return errno == ENOENT || errno == ENOTDIR || errno == EACCES;
}

// The file's document, read through the trust check and parsed on its own, so an error names
// the file that has it.
nlohmann::json read_layer(const ConfigFile& file, std::span<const std::string> untrusted_roots) {
  const char* which = file.named                ? "config file"
                      : file.origin == "system" ? "system config file"
                                                : "user config file";
  auto opened = open_trusted_path(file.path, untrusted_roots, TrustedKind::kFile, true);
  if (!opened) {
    throw InvalidSandboxInputError(fmt::format(
        "{} \"{}\" cannot be trusted: {}; a confined run could have rewritten it to choose the "
        "next run's mode or runner. Keep the config outside the workspace, /tmp and $TMPDIR, in "
        "directories owned by you or root that nobody else can write{}",
        which, file.path, opened.error().message,
        file.named ? "" : ", or remove it if you did not write it"));
  }
  auto read = read_trusted_file(opened.value(), kMaxConfigBytes);
  if (!read) {
    throw InvalidSandboxInputError(
        fmt::format("{} \"{}\" cannot be read: {}", which, file.path, read.error().message));
  }
  auto document = json::parse(read.value(), "config").and_then([](nlohmann::json parsed) {
    return parse_setup_document(parsed).transform([&parsed](const Setup&) { return parsed; });
  });
  if (!document) {
    throw InvalidSandboxInputError(
        fmt::format("{} \"{}\": {}", which, file.path, document.error().message));
  }
  return std::move(document).value();
}

}  // namespace

std::vector<ConfigFile> config_files(const std::string& named_path) {
  std::vector<ConfigFile> files = {{kSystemConfig, "system", false}};
  if (std::string user = user_config_path(); !user.empty()) {
    files.push_back({std::move(user), "user", false});
  }
  if (!named_path.empty()) {
    files.push_back(
        {named_path.starts_with('/') ? named_path : working_directory() + "/" + named_path,
         "--config", true});
  }
  return files;
}

Setup load_setup(std::span<const ConfigFile> files, std::span<const std::string> untrusted_roots,
                 std::vector<ConfigFile>* consulted) {
  nlohmann::json merged = nlohmann::json::object();
  std::map<std::string, std::string> origins;
  for (const ConfigFile& file : files) {
    if (!file.named && absent(file.path)) continue;
    const nlohmann::json layer = read_layer(file, untrusted_roots);
    for (const auto& [key, value] : layer.items()) {
      merged[key] = value;
      origins[key] = file.path;
    }
    if (consulted != nullptr) consulted->push_back(file);
  }
  auto setup = parse_setup_document(merged);
  if (!setup) throw InvalidSandboxInputError(fmt::format("config: {}", setup.error().message));
  setup.value().origins = std::move(origins);
  return std::move(setup).value();
}

Setup load_setup(const std::string& named_path, std::span<const std::string> untrusted_roots) {
  return load_setup(config_files(named_path), untrusted_roots);
}

}  // namespace dsh::sandbox::plan
