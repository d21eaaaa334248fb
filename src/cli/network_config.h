// SPDX-License-Identifier: Apache-2.0
// The config file's network allow-list (local/config.h, networkAllow and networkDeny) folded into
// one call's network policy, after the command line's --network.
#pragma once

#include "dsh/sandbox/modes.h"
#include "dsh/sandbox/policy.h"
#include "local/config.h"

namespace dsh::sandbox::cli {

// `network_given`: the command line named --network. Without it, a config networkAllow makes the
// call's policy the allow-list; with it, inherit and deny stand as given and an allow: list gets
// the config's entries in front. networkDeny joins whichever allow-list is then in force.
// danger-full-access takes nothing from the config: it runs unconfined, and refusing it for a
// default it never asked for would break it.
void add_config_network(SandboxExecutionPolicy& policy, bool network_given,
                        const local::ConfigNetworkRules& config);
void add_config_network(SandboxPolicy& policy, bool network_given,
                        const local::ConfigNetworkRules& config);

}  // namespace dsh::sandbox::cli
