// SPDX-License-Identifier: Apache-2.0
// A close-on-exec pipe: the spawning code (exec/) and the channels a run's runner reports on.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <array>

#include "base/unique_fd.h"

namespace dsh::sandbox {

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

// Both ends close-on-exec, so only what a spawn maps explicitly reaches the child.
inline bool open_pipe(Pipe& pipe) {
  std::array<int, 2> fds{};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) return false;
  pipe.read.reset(fds[0]);
  pipe.write.reset(fds[1]);
  return true;
}

}  // namespace dsh::sandbox
