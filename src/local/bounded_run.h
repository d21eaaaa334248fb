// SPDX-License-Identifier: Apache-2.0
// Runs a probe to completion or to its deadline, whichever comes first, leaving nothing behind:
// the probe runs in its own process group, and when it exits or times out the whole group is
// killed before the leader is reaped (a zombie leader keeps the group id from being reused).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dsh::sandbox::local {

struct BoundedRun {
  int spawn_error = 0;  // errno when the program could not be started
  bool timed_out = false;
  std::optional<int> exit_code;  // nullopt when it died by a signal or timed out
  std::string out;               // stdout, at most kCaptureLimit bytes
  std::string err;               // stderr, at most kCaptureLimit bytes

  bool succeeded() const { return spawn_error == 0 && !timed_out && exit_code == 0; }
};

inline constexpr std::size_t kCaptureLimit = std::size_t{16} * 1024;

// `argv[0]` must be an absolute path (EINVAL otherwise: no PATH or working-directory lookup).
// The probe runs in /, with PATH=/usr/bin:/bin as its whole environment, so nothing of the
// caller's environment or working directory changes a verdict. stdin is /dev/null; no descriptor of
// the caller leaks into the child.
BoundedRun run_bounded(const std::vector<std::string>& argv, double timeout_ms);

}  // namespace dsh::sandbox::local
