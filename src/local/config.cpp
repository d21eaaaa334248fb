// SPDX-License-Identifier: Apache-2.0
// The provider's config: the reference's checks in its order with its messages.
#include <cmath>

#include <fmt/format.h>

#include "dsh/sandbox/local_provider.h"
#include "seam/json_codec.h"

namespace dsh::sandbox {

namespace {

bool is_blank(std::string_view text) {
  return text.find_first_not_of(" \t\n\r\f\v") == std::string_view::npos;
}

bool has_nul(std::string_view text) { return text.find('\0') != std::string_view::npos; }

constexpr std::string_view kKnownKeys =
    "mode, runnerCommand, runnerFailureSignatures, probeTimeoutMs, bwrapPath";

Result<void> check_known_keys(const nlohmann::json& document) {
  for (const auto& [key, value] : document.items()) {
    if (key != "mode" && key != "runnerCommand" && key != "runnerFailureSignatures" &&
        key != "probeTimeoutMs" && key != "bwrapPath") {
      return InvalidInput{
          fmt::format("config: unknown key \"{}\"; known keys: {}", key, kKnownKeys)};
    }
  }
  return {};
}

}  // namespace

Result<void> validate_config(const LocalSandboxConfig& config) {
  const bool has_runner = !config.runner_command.empty();
  const bool has_signatures = !config.runner_failure_signatures.empty();
  if (!has_runner && has_signatures) {
    return InvalidInput{"sandbox-local: runnerFailureSignatures requires runnerCommand"};
  }
  if (has_runner && !has_signatures) {
    return InvalidInput{
        "sandbox-local: runnerCommand requires at least one runnerFailureSignatures entry"};
  }
  for (const std::string& signature : config.runner_failure_signatures) {
    if (is_blank(signature) || signature.find_first_of("\r\n") != std::string::npos) {
      return InvalidInput{
          "sandbox-local: runnerFailureSignatures entries must be non-empty single-line strings"};
    }
  }
  if (!std::isfinite(config.probe_timeout_ms) || config.probe_timeout_ms <= 0) {
    return InvalidInput{"sandbox-local: probeTimeoutMs must be a positive finite number"};
  }
  for (const std::string& word : config.runner_command) {
    if (has_nul(word)) {
      return InvalidInput{"sandbox-local: runnerCommand entries must not contain NUL bytes"};
    }
  }
  if (has_runner && config.runner_command.front().empty()) {
    return InvalidInput{"sandbox-local: runnerCommand must start with the runner program"};
  }
  // A bare name would be looked up through the caller's PATH, a relative one in its working
  // directory: both places a confined run may have written.
  if (has_runner && config.runner_command.front().front() != '/') {
    return InvalidInput{
        "sandbox-local: runnerCommand must start with the runner program's absolute path"};
  }
  if (!config.bwrap_path.empty() &&
      (config.bwrap_path.front() != '/' || has_nul(config.bwrap_path))) {
    return InvalidInput{"sandbox-local: bwrapPath must be an absolute path"};
  }
  return {};
}

Result<LocalSandboxConfig> config_from_json(std::string_view text) {
  auto document = json::parse(text, "config");
  if (!document) return document.error();
  const nlohmann::json& value = document.value();
  if (!value.is_object()) return InvalidInput{"config JSON must be an object"};
  if (auto known = check_known_keys(value); !known) return known.error();
  LocalSandboxConfig config;
  if (value.contains("runnerCommand")) {
    auto runner = json::string_array(value, "runnerCommand", "config");
    if (!runner) return runner.error();
    config.runner_command = std::move(runner).value();
  }
  if (value.contains("runnerFailureSignatures")) {
    auto signatures = json::string_array(value, "runnerFailureSignatures", "config");
    if (!signatures) return signatures.error();
    config.runner_failure_signatures = std::move(signatures).value();
  }
  if (value.contains("probeTimeoutMs")) {
    if (!value["probeTimeoutMs"].is_number()) {
      return InvalidInput{"config JSON: field \"probeTimeoutMs\" must be a number"};
    }
    config.probe_timeout_ms = value["probeTimeoutMs"].get<double>();
  }
  if (value.contains("bwrapPath")) {
    if (!value["bwrapPath"].is_string()) {
      return InvalidInput{"config JSON: field \"bwrapPath\" must be a string"};
    }
    config.bwrap_path = value["bwrapPath"].get<std::string>();
  }
  if (auto valid = validate_config(config); !valid) return valid.error();
  return config;
}

}  // namespace dsh::sandbox
