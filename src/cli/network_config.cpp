// SPDX-License-Identifier: Apache-2.0
#include "cli/network_config.h"

#include <algorithm>
#include <string>
#include <vector>

namespace dsh::sandbox::cli {

namespace {

// `front` then the entries of `list` it does not hold, each once.
std::vector<std::string> joined(const std::vector<std::string>& front,
                                const std::vector<std::string>& list) {
  std::vector<std::string> out = front;
  for (const std::string& entry : list) {
    if (std::find(out.begin(), out.end(), entry) == out.end()) out.push_back(entry);
  }
  return out;
}

void add(NetworkPolicy& network, NetworkAllowList& list, bool network_given,
         const local::ConfigNetworkRules& config) {
  if (!network_given && !config.allow.empty()) network = NetworkPolicy::kAllowList;
  if (network != NetworkPolicy::kAllowList) return;
  list.allow = joined(config.allow, list.allow);
  list.deny = joined(config.deny, list.deny);
}

}  // namespace

void add_config_network(SandboxExecutionPolicy& policy, bool network_given,
                        const local::ConfigNetworkRules& config) {
  if (policy.mode == SandboxMode::kDangerFullAccess) return;
  add(policy.network, policy.network_allow, network_given, config);
}

void add_config_network(SandboxPolicy& policy, bool network_given,
                        const local::ConfigNetworkRules& config) {
  add(policy.network, policy.network_allow, network_given, config);
}

}  // namespace dsh::sandbox::cli
