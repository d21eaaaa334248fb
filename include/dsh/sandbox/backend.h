// SPDX-License-Identifier: Apache-2.0
// The backends a provider can select (an extension: the reference names them only in strings).
#pragma once

#include <string_view>

namespace dsh::sandbox {

enum class SandboxBackend { kBwrap, kLandlock, kSeatbelt, kWindowsAcl };

// "bwrap", "landlock", "seatbelt", "windows-acl"; std::logic_error for a value outside the enum
// ("unreachable variant"), so a corrupted selection can never produce a wrap.
std::string_view backend_name(SandboxBackend backend);

}  // namespace dsh::sandbox
