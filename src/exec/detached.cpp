// SPDX-License-Identifier: Apache-2.0
#include "exec/detached.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <vector>

#include "exec/supervisor.h"

namespace dsh::sandbox::exec {

namespace {

// The detached process's descriptors: /dev/null as stdin, stdout and stderr, `keep`, nothing else.
void keep_only(std::span<const int> keep) {
  const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd <= 2 && null >= 0; ++fd) ::dup2(null, fd);
  std::vector<int> kept = {0, 1, 2};
  std::copy_if(keep.begin(), keep.end(), std::back_inserter(kept), [](int fd) { return fd > 2; });
  std::sort(kept.begin(), kept.end());
  kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
  detail::close_all_except(kept);
}

}  // namespace

int start_detached(const std::function<void()>& body, std::span<const int> keep) {
  const pid_t middle = ::fork();
  if (middle < 0) return errno;
  if (middle == 0) {
    // A new session without a terminal, then a second fork so the body's process is no session
    // leader and can never acquire one; the caller goes on once this one has exited.
    ::setsid();
    const pid_t detached = ::fork();
    if (detached != 0) ::_exit(detached < 0 ? 1 : 0);
    keep_only(keep);
    body();
    ::_exit(0);
  }
  while (::waitpid(middle, nullptr, 0) < 0 && errno == EINTR) {
  }
  return 0;
}

}  // namespace dsh::sandbox::exec
