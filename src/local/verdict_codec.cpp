// SPDX-License-Identifier: Apache-2.0
#include "local/verdict_codec.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

namespace dsh::sandbox::local {

namespace {

using nlohmann::json;

// Landlock ABIs this build can name; a larger number is not a kernel's answer.
constexpr int kMaxLandlockAbi = 64;

bool has_exactly(const json& object, const std::set<std::string>& required,
                 const std::set<std::string>& optional = {}) {
  if (!object.is_object()) return false;
  for (const std::string& key : required) {
    if (!object.contains(key)) return false;
  }
  return std::all_of(object.items().begin(), object.items().end(), [&](const auto& item) {
    return required.contains(item.key()) || optional.contains(item.key());
  });
}

std::optional<SandboxBackend> backend_named(const json& name,
                                            std::span<const SandboxBackend> chain) {
  if (!name.is_string()) return std::nullopt;
  for (const SandboxBackend backend : chain) {
    if (backend_name(backend) == name.get<std::string>()) return backend;
  }
  return std::nullopt;
}

// What landlock_features() derives from a probe: IPC scoping exactly from ABI 6, and one
// seccomp answer behind both network and metadata filtering.
std::optional<profiles::LandlockFeatures> features_from(const json& value) {
  if (!has_exactly(value, {"enforcement", "abi", "denyNetwork", "scopeIpc", "denyMetadata"})) {
    return std::nullopt;
  }
  const json& enforcement = value.at("enforcement");
  const json& abi = value.at("abi");
  if (!enforcement.is_string() || !abi.is_number_integer() ||
      !value.at("denyNetwork").is_boolean() || !value.at("scopeIpc").is_boolean() ||
      !value.at("denyMetadata").is_boolean()) {
    return std::nullopt;
  }
  profiles::LandlockFeatures features;
  if (enforcement == "full") {
    features.enforcement = SandboxEnforcement::kFull;
  } else if (enforcement == "partial") {
    features.enforcement = SandboxEnforcement::kPartial;
  } else {
    return std::nullopt;
  }
  const auto level = abi.get<long long>();
  // 0 was a launcher that does not answer --features: no longer usable (it knows none of the
  // flags a run passes), so such a verdict is stale and the launcher is probed again.
  if (level < 1 || level > kMaxLandlockAbi) return std::nullopt;
  features.abi = static_cast<int>(level);
  features.deny_network = value.at("denyNetwork").get<bool>();
  features.scope_ipc = value.at("scopeIpc").get<bool>();
  features.deny_metadata = value.at("denyMetadata").get<bool>();
  if (features.scope_ipc != (features.abi >= 6) ||
      features.deny_metadata != features.deny_network) {
    return std::nullopt;
  }
  return features;
}

}  // namespace

std::string encode_selection(const profiles::Selection& selection, const std::string& launcher) {
  json value = {{"backend", backend_name(selection.backend)}};
  if (selection.landlock) {
    const profiles::LandlockFeatures& features = *selection.landlock;
    value["landlock"] = {{"enforcement", wire_name(features.enforcement)},
                         {"abi", features.abi},
                         {"denyNetwork", features.deny_network},
                         {"scopeIpc", features.scope_ipc},
                         {"denyMetadata", features.deny_metadata}};
    value["launcher"] = launcher;
  }
  return value.dump();
}

std::optional<profiles::Selection> decode_selection(const std::string& text,
                                                    std::span<const SandboxBackend> chain,
                                                    const std::string& launcher) {
  if (text.size() > kMaxVerdictBytes) return std::nullopt;
  try {
    const json value = json::parse(text);
    if (!has_exactly(value, {"backend"}, {"landlock", "launcher"})) return std::nullopt;
    const std::optional<SandboxBackend> backend = backend_named(value.at("backend"), chain);
    if (!backend) return std::nullopt;
    profiles::Selection selection{*backend, std::nullopt};
    const bool layered = value.contains("landlock");
    if (layered != value.contains("launcher")) return std::nullopt;
    if (layered) {
      // Only bwrap layers the launcher inside; Landlock alone always carries its features.
      if (*backend != SandboxBackend::kBwrap && *backend != SandboxBackend::kLandlock) {
        return std::nullopt;
      }
      const json& named = value.at("launcher");
      if (!named.is_string() || launcher.empty() || !launcher.starts_with('/') ||
          named.get<std::string>() != launcher) {
        return std::nullopt;
      }
      selection.landlock = features_from(value.at("landlock"));
      if (!selection.landlock) return std::nullopt;
    }
    if (*backend == SandboxBackend::kLandlock && !selection.landlock) return std::nullopt;
    return selection;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

}  // namespace dsh::sandbox::local
