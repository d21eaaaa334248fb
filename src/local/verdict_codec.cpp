// SPDX-License-Identifier: Apache-2.0
#include "verdict_codec.h"

#include <nlohmann/json.hpp>

namespace dsh::sandbox::local {

namespace {

using nlohmann::json;

std::optional<SandboxBackend> backend_named(const std::string& name) {
  for (const auto backend : {SandboxBackend::kBwrap, SandboxBackend::kLandlock,
                             SandboxBackend::kSeatbelt, SandboxBackend::kWindowsAcl}) {
    if (backend_name(backend) == name) return backend;
  }
  return std::nullopt;
}

profiles::LandlockFeatures features_from(const json& value) {
  return {value.at("enforcement").get<std::string>() == "full" ? SandboxEnforcement::kFull
                                                               : SandboxEnforcement::kPartial,
          value.at("abi").get<int>(), value.at("denyNetwork").get<bool>(),
          value.at("scopeIpc").get<bool>(), value.at("denyMetadata").get<bool>()};
}

}  // namespace

std::string encode_selection(const profiles::Selection& selection) {
  json value = {{"backend", backend_name(selection.backend)}};
  if (selection.landlock) {
    const profiles::LandlockFeatures& features = *selection.landlock;
    value["landlock"] = {{"enforcement", wire_name(features.enforcement)},
                         {"abi", features.abi},
                         {"denyNetwork", features.deny_network},
                         {"scopeIpc", features.scope_ipc},
                         {"denyMetadata", features.deny_metadata}};
  }
  return value.dump();
}

std::optional<profiles::Selection> decode_selection(const std::string& text) {
  try {
    const json value = json::parse(text);
    const std::optional<SandboxBackend> backend = backend_named(value.at("backend"));
    if (!backend) return std::nullopt;
    profiles::Selection selection{*backend, std::nullopt};
    if (value.contains("landlock")) selection.landlock = features_from(value.at("landlock"));
    if (*backend == SandboxBackend::kLandlock && !selection.landlock) return std::nullopt;
    return selection;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

}  // namespace dsh::sandbox::local
