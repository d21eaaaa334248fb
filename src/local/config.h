// SPDX-License-Identifier: Apache-2.0
// The provider's config keys read from an already parsed document, so a caller that reads more
// keys of the same file (the CLI's `mode`) parses it once.
#pragma once

#include <nlohmann/json.hpp>

#include "dsh/sandbox/local_provider.h"

namespace dsh::sandbox::local {

// config_from_json on a parsed document.
Result<LocalSandboxConfig> config_from_document(const nlohmann::json& document);

// The per-call path rules a config may add to every call (docs/boundary.md): allowWrite, denyWrite,
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

// The network allow-list a config may give every call (docs/evidence-and-network.md): networkAllow
// and networkDeny, arrays of entries in the --network allow: grammar, each canonicalised here once.
// A config networkAllow makes the allow-list the default network policy; an explicit --network
// on the command line replaces it (inherit, deny) or adds to it (allow:). networkDeny refines
// whichever allow-list is in force, and wins over it.
struct ConfigNetworkRules {
  std::vector<std::string> allow;
  std::vector<std::string> deny;
  std::vector<std::string> unix_sockets;  // allowUnixSockets

  bool operator==(const ConfigNetworkRules&) const = default;
};
Result<ConfigNetworkRules> network_rules_from_document(const nlohmann::json& document);

}  // namespace dsh::sandbox::local
