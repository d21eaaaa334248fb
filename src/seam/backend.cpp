// SPDX-License-Identifier: Apache-2.0
#include "dsh/sandbox/backend.h"

#include <stdexcept>

namespace dsh::sandbox {

std::string_view backend_name(SandboxBackend backend) {
  switch (backend) {
    case SandboxBackend::kBwrap:
      return "bwrap";
    case SandboxBackend::kLandlock:
      return "landlock";
    case SandboxBackend::kSeatbelt:
      return "seatbelt";
    case SandboxBackend::kWindowsAcl:
      return "windows-acl";
  }
  throw std::logic_error("unreachable variant in SandboxBackend");
}

}  // namespace dsh::sandbox
