// SPDX-License-Identifier: Apache-2.0
// A chain verdict as text, for a VerdictStore. Decoding is strict: anything unexpected is no
// verdict at all, and the provider probes again.
#pragma once

#include <optional>
#include <string>

#include "profiles.h"

namespace dsh::sandbox::local {

std::string encode_selection(const profiles::Selection& selection);
std::optional<profiles::Selection> decode_selection(const std::string& text);

}  // namespace dsh::sandbox::local
