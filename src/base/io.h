// SPDX-License-Identifier: Apache-2.0
// Whole reads and writes on a descriptor: the loops around read(2) and write(2) that retry after
// EINTR and short transfers.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

namespace dsh::sandbox::io {

// Writes all `size` bytes, retrying after EINTR and short writes. Returns how many were written:
// fewer than `size` when a write failed (errno says why) or wrote nothing. Async-signal-safe
// (write(2) alone, no allocation), so the forked side of a run may use it.
std::size_t write_all(int fd, const void* data, std::size_t size) noexcept;
inline std::size_t write_all(int fd, std::string_view bytes) noexcept {
  return write_all(fd, bytes.data(), bytes.size());
}

// One read(2), retried after EINTR: its result.
ssize_t read_some(int fd, void* data, std::size_t size) noexcept;

// How read_all ended: at end of file (error 0), on a failed read (its errno; EAGAIN on an empty
// non-blocking descriptor), or before `limit` would have been passed.
struct ReadEnd {
  int error = 0;
  bool over_limit = false;
  bool ok() const { return error == 0 && !over_limit; }
};

// Appends what `fd` holds to `out` until end of file, retrying after EINTR. A chunk that would
// make this call's bytes pass `limit` is not appended: the read stops there with over_limit.
ReadEnd read_all(int fd, std::string& out,
                 std::size_t limit = std::numeric_limits<std::size_t>::max());

}  // namespace dsh::sandbox::io
