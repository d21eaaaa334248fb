// SPDX-License-Identifier: Apache-2.0
// The provider's config keys read from an already parsed document, so a caller that reads more
// keys of the same file (the CLI's `mode`) parses it once.
#pragma once

#include <nlohmann/json.hpp>

#include "dsh/sandbox/local_provider.h"

namespace dsh::sandbox::local {

// config_from_json on a parsed document.
Result<LocalSandboxConfig> config_from_document(const nlohmann::json& document);

}  // namespace dsh::sandbox::local
