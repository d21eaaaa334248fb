// SPDX-License-Identifier: Apache-2.0
// The provider's config: the reference's checks in its order with its messages.
#include <cmath>

#include <fmt/format.h>

#include "base/text.h"
#include "dsh/sandbox/local_provider.h"
#include "dsh/sandbox/modes.h"
#include "local/config.h"
#include "seam/json_codec.h"

namespace dsh::sandbox {

namespace {

bool is_blank(std::string_view text) {
  return text.find_first_not_of(" \t\n\r\f\v") == std::string_view::npos;
}

bool has_nul(std::string_view text) { return text.find('\0') != std::string_view::npos; }

constexpr std::string_view kKnownKeys =
    "mode, runnerCommand, runnerFailureSignatures, runnerAcceptsHardening, probeTimeoutMs, "
    "bwrapPath, allowWrite, denyWrite, denyRead, allowCache, networkAllow, networkDeny, "
    "allowUnixSockets";

Result<void> check_known_keys(const nlohmann::json& document) {
  for (const auto& [key, value] : document.items()) {
    if (key != "mode" && key != "runnerCommand" && key != "runnerFailureSignatures" &&
        key != "probeTimeoutMs" && key != "bwrapPath" && key != "runnerAcceptsHardening" &&
        key != "allowWrite" && key != "denyWrite" && key != "denyRead" && key != "allowCache" &&
        key != "networkAllow" && key != "networkDeny" && key != "allowUnixSockets") {
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
  // It speaks of the operator's runner only; alone it would silently mean nothing.
  if (config.runner_accepts_hardening && !has_runner) {
    return InvalidInput{"sandbox-local: runnerAcceptsHardening requires runnerCommand"};
  }
  return {};
}

namespace local {

namespace {

// Each optional key, read into `out` when present: its type checked, its value kept.
Result<void> read_strings(const nlohmann::json& value, const char* key,
                          std::vector<std::string>& out) {
  if (!value.contains(key)) return {};
  return json::string_array(value, key, "config").transform([&out](std::vector<std::string> read) {
    out = std::move(read);
  });
}

Result<void> read_number(const nlohmann::json& value, const char* key, double& out) {
  if (!value.contains(key)) return {};
  if (!value[key].is_number()) {
    return InvalidInput{fmt::format("config JSON: field \"{}\" must be a number", key),
                        ErrorCode::kMalformed};
  }
  out = value[key].get<double>();
  return {};
}

Result<void> read_bool(const nlohmann::json& value, const char* key, bool& out) {
  if (!value.contains(key)) return {};
  if (!value[key].is_boolean()) {
    return InvalidInput{fmt::format("config JSON: field \"{}\" must be true or false", key),
                        ErrorCode::kMalformed};
  }
  out = value[key].get<bool>();
  return {};
}

Result<void> read_string(const nlohmann::json& value, const char* key, std::string& out) {
  if (!value.contains(key)) return {};
  if (!value[key].is_string()) {
    return InvalidInput{fmt::format("config JSON: field \"{}\" must be a string", key),
                        ErrorCode::kMalformed};
  }
  out = value[key].get<std::string>();
  return {};
}

}  // namespace

Result<LocalSandboxConfig> config_from_document(const nlohmann::json& value) {
  if (!value.is_object()) {
    return InvalidInput{"config JSON must be an object", ErrorCode::kMalformed};
  }
  LocalSandboxConfig config;
  return check_known_keys(value)
      .and_then([&] { return read_strings(value, "runnerCommand", config.runner_command); })
      .and_then([&] {
        return read_strings(value, "runnerFailureSignatures", config.runner_failure_signatures);
      })
      .and_then([&] { return read_number(value, "probeTimeoutMs", config.probe_timeout_ms); })
      .and_then([&] { return read_string(value, "bwrapPath", config.bwrap_path); })
      .and_then([&] {
        return read_bool(value, "runnerAcceptsHardening", config.runner_accepts_hardening);
      })
      .and_then([&] { return validate_config(config); })
      .transform([&] { return std::move(config); });
}

Result<ConfigPathRules> path_rules_from_document(const nlohmann::json& value) {
  if (!value.is_object()) {
    return InvalidInput{"config JSON must be an object", ErrorCode::kMalformed};
  }
  ConfigPathRules rules;
  return read_strings(value, "allowWrite", rules.allow_write)
      .and_then([&] { return read_strings(value, "denyWrite", rules.deny_write); })
      .and_then([&] { return read_strings(value, "denyRead", rules.deny_read); })
      .and_then([&] { return read_strings(value, "allowCache", rules.allow_cache); })
      .transform([&] { return std::move(rules); });
}

Result<ConfigNetworkRules> network_rules_from_document(const nlohmann::json& value) {
  if (!value.is_object()) {
    return InvalidInput{"config JSON must be an object", ErrorCode::kMalformed};
  }
  ConfigNetworkRules rules;
  for (const auto& [key, out] :
       {std::pair<const char*, std::vector<std::string>*>{"networkAllow", &rules.allow},
        {"networkDeny", &rules.deny}}) {
    std::vector<std::string> entries;
    if (auto read = read_strings(value, key, entries); !read) return read.error();
    for (const std::string& entry : entries) {
      auto canonical = canonical_network_entry(entry);
      if (!canonical) {
        return InvalidInput{fmt::format("config: {} entry {}: {}", key, text::quoted(entry),
                                        canonical.error().message)};
      }
      out->push_back(std::move(canonical).value());
    }
  }
  // Absolute paths of host Unix sockets the network lets through when it is not inherited.
  if (auto read = read_strings(value, "allowUnixSockets", rules.unix_sockets); !read) {
    return read.error();
  }
  for (const std::string& path : rules.unix_sockets) {
    if (!path.starts_with('/')) {
      return InvalidInput{fmt::format("config: allowUnixSockets entry {} is not an absolute path",
                                      text::quoted(path))};
    }
  }
  return rules;
}

}  // namespace local

Result<LocalSandboxConfig> config_from_json(std::string_view text) {
  return json::parse(text, "config").and_then(local::config_from_document);
}

}  // namespace dsh::sandbox
