// SPDX-License-Identifier: Apache-2.0
// Thin wrappers over the three Landlock syscalls. Every function returns a value >= 0 or a
// negative errno; none prints or exits (main.cpp owns the failure lines).
#pragma once

#include <stdint.h>

#include "abi.h"

namespace landlock_run {

// The kernel's Landlock ABI version, or -ENOSYS / -EOPNOTSUPP when it cannot enforce.
long query_kernel_abi();

// A new ruleset fd (O_CLOEXEC by the kernel), or a negative errno.
int create_ruleset(const RulesetAttr& attr);

enum class RuleStage { kOpen, kAddRule };

// What one rule grants: --ro's read and execute, --rw's every handled right, --list's listing.
enum class RuleAccess { kReadOnly, kReadWrite, kList };

// Opens `path` O_PATH|O_CLOEXEC (fail-closed: an unopenable grant root never narrows silently)
// and adds a path-beneath rule for it. A rule left without rights (--list of a file) adds
// nothing and returns 0. On failure returns a negative errno and sets *stage.
int add_path_rule(int ruleset_fd, const char* path, uint64_t handled_fs, RuleAccess access,
                  RuleStage* stage);

// landlock_restrict_self(fd, 0): enforce on the calling thread and all its future children.
int restrict_self(int ruleset_fd);

}  // namespace landlock_run
