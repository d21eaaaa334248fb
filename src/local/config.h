// SPDX-License-Identifier: Apache-2.0
// The provider's config keys read from an already parsed document, so a caller that reads more
// keys of the same file (the CLI's `mode`) parses it once.
#pragma once

#include <nlohmann/json.hpp>

#include "dsh/sandbox/local_provider.h"

namespace dsh::sandbox::local {

// config_from_json on a parsed document.
Result<LocalSandboxConfig> config_from_document(const nlohmann::json& document);

// The per-call path rules a config may add to every call (docs/policy.md): allowWrite, denyWrite,
// denyRead (arrays of absolute or "~/" paths, "!" in front lifts a default) and allowCache
// (preset names). The config is trusted state (docs/trust.md): a confined run cannot write it.
struct ConfigPathRules {
  std::vector<std::string> allow_write;
  std::vector<std::string> deny_write;
  std::vector<std::string> deny_read;
  std::vector<std::string> allow_cache;

  bool operator==(const ConfigPathRules&) const = default;
};
Result<ConfigPathRules> path_rules_from_document(const nlohmann::json& document);

}  // namespace dsh::sandbox::local
