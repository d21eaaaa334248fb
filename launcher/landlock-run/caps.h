// SPDX-License-Identifier: Apache-2.0
// Capability drop for callers that hold capabilities (root, or root in a user namespace).
#pragma once

namespace landlock_run {

// Empties the effective, permitted, inheritable and ambient sets and, when the caller holds
// CAP_SETPCAP, the bounding set, and locks the securebits so uid 0 never regains capabilities
// on exec. Verifies the result. Returns 0 or a negative errno.
int drop_capabilities();

}  // namespace landlock_run
