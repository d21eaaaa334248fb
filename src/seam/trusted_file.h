// SPDX-License-Identifier: Apache-2.0
// The trust check's descriptor form (internal): the file stays open, so it is read through the
// very descriptor that was checked, never reopened by name.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "base/unique_fd.h"
#include "dsh/sandbox/result.h"
#include "dsh/sandbox/trust.h"

namespace dsh::sandbox {

struct TrustedPath {
  UniqueFd fd;       // O_RDONLY for a file opened to read, O_PATH otherwise
  std::string path;  // canonical
};

// check_trusted_path, keeping the checked descriptor. `readable`: open the file O_RDONLY (to
// read it), else O_PATH (a runner to execute, a directory to check).
Result<TrustedPath> open_trusted_path(std::string_view path,
                                      std::span<const std::string> untrusted_roots,
                                      TrustedKind kind, bool readable);

// The whole file behind a checked descriptor; InvalidInput when it exceeds `limit` bytes or
// cannot be read.
Result<std::string> read_trusted_file(const TrustedPath& file, std::size_t limit);

}  // namespace dsh::sandbox
