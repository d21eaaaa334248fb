// SPDX-License-Identifier: Apache-2.0
// The per-user cache directory's check (internal to the local provider and the CLI).
#pragma once

#include <span>
#include <string>

#include "dsh/sandbox/result.h"
#include "seam/trusted_file.h"

namespace dsh::sandbox::local {

// A directory this user alone owns and alone can write (0700), which no confined run could have
// written for a call on `roots`: the trust check on the way, then owner and mode on the open
// descriptor. The verdict cache and the record of writable workspaces both live in one.
Result<TrustedPath> open_private_directory(const std::string& path,
                                           std::span<const std::string> roots);

}  // namespace dsh::sandbox::local
