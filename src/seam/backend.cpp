// SPDX-License-Identifier: Apache-2.0
#include "dsh/sandbox/backend.h"

#include <stdexcept>

#include "dsh/sandbox/confined_argv.h"

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

std::string_view layer_name(RunnerLayer layer) {
  switch (layer) {
    case RunnerLayer::kBwrap:
      return "bwrap";
    case RunnerLayer::kLandlockRun:
      return "landlock-run";
    case RunnerLayer::kRunnerCommand:
      return "runner-command";
    case RunnerLayer::kSeatbelt:
      return "seatbelt";
    case RunnerLayer::kWindowsAcl:
      return "windows-acl";
    case RunnerLayer::kNetProxy:
      return "netproxy";
    case RunnerLayer::kSeccompExec:
      return "seccomp-exec";
  }
  throw std::logic_error("unreachable variant in RunnerLayer");
}

SandboxEnforcement strict_reading(SandboxEnforcement enforcement,
                                  std::span<const std::string> ungoverned) {
  return enforcement == SandboxEnforcement::kPartial || !ungoverned.empty()
             ? SandboxEnforcement::kPartial
             : SandboxEnforcement::kFull;
}

std::string backend_label(std::span<const RunnerLayer> layers) {
  std::string label;
  for (const RunnerLayer layer : layers) {
    // A network runner and bwrap's exec shim confine nothing themselves.
    if (layer == RunnerLayer::kNetProxy || layer == RunnerLayer::kSeccompExec) continue;
    if (!label.empty()) label += '+';
    // The launcher's backend is named for its mechanism, as probe and the verdict cache name it.
    label += layer == RunnerLayer::kLandlockRun ? std::string_view("landlock") : layer_name(layer);
  }
  return label;
}

std::string_view status_format_name(StatusFormat format) {
  switch (format) {
    case StatusFormat::kBwrapJson:
      return "bwrap-json";
    case StatusFormat::kLauncherLines:
      return "launcher-lines";
    case StatusFormat::kProxyLines:
      return "proxy-lines";
  }
  throw std::logic_error("unreachable variant in StatusFormat");
}

}  // namespace dsh::sandbox
