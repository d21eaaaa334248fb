// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the provider's config reader: the CLI reads the config from a file the
// caller names, so the reader must take any bytes without crashing, every config it accepts must
// pass validate_config, and writing an accepted config back as JSON and reading it again must
// give the same config. Any violation aborts, which libFuzzer reports as a crash.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "dsh/sandbox/local_provider.h"

namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

// The config as the JSON document a caller would write for it, defaults left out.
std::string to_document(const dsh::sandbox::LocalSandboxConfig& config) {
  nlohmann::json document = nlohmann::json::object();
  if (!config.runner_command.empty()) document["runnerCommand"] = config.runner_command;
  if (!config.runner_failure_signatures.empty()) {
    document["runnerFailureSignatures"] = config.runner_failure_signatures;
  }
  document["probeTimeoutMs"] = config.probe_timeout_ms;
  if (!config.bwrap_path.empty()) document["bwrapPath"] = config.bwrap_path;
  return document.dump();
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): the entry point libFuzzer calls by this name
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);  // NOLINT: bytes as text
  const auto config = dsh::sandbox::config_from_json(text);
  if (!config) {
    check(!config.error().message.empty());
    return 0;
  }
  check(static_cast<bool>(dsh::sandbox::validate_config(config.value())));
  check(std::isfinite(config.value().probe_timeout_ms) && config.value().probe_timeout_ms > 0);
  check(config.value().runner_command.empty() == config.value().runner_failure_signatures.empty());
  const auto again = dsh::sandbox::config_from_json(to_document(config.value()));
  check(again && again.value() == config.value());
  return 0;
}
