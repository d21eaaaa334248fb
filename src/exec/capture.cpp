// SPDX-License-Identifier: Apache-2.0
#include "capture.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace dsh::sandbox::exec {

StreamCapture::StreamCapture(std::string_view name, std::size_t max_bytes,
                             std::uint64_t max_spill_bytes, std::string spill_root)
    : name_(name),
      max_bytes_(max_bytes),
      max_spill_bytes_(max_spill_bytes),
      spill_root_(spill_root.empty() ? default_spill_root() : std::move(spill_root)) {}

StreamCapture::~StreamCapture() {
  if (spill_fd_ >= 0) ::close(spill_fd_);
}

void StreamCapture::append(std::string_view chunk) {
  // The spill holds the full output: it starts with everything the tail held before its first
  // overflow, so it must be opened before the tail drops anything.
  if (total_ + chunk.size() > max_bytes_) {
    if (spill_fd_ < 0 && !spill_failed_ && open_spill()) spill(buffer_);
    spill(chunk);
  }
  total_ += chunk.size();
  buffer_.append(chunk);
  if (buffer_.size() > 2 * max_bytes_) buffer_.erase(0, buffer_.size() - max_bytes_);
}

// mkdtemp makes the directory 0700 and mkstemp the file 0600 with O_EXCL: no other user can
// read the output or plant a file or link in its place.
bool StreamCapture::open_spill() {
  std::string dir = spill_root_ + "/dsh-exec-XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) {
    spill_failed_ = true;
    return false;
  }
  std::string path = dir + "/" + name_ + "-XXXXXX";
  spill_fd_ = ::mkostemp(path.data(), O_CLOEXEC);
  if (spill_fd_ < 0) {
    ::rmdir(dir.c_str());
    spill_failed_ = true;
    return false;
  }
  spill_path_ = path;
  return true;
}

void StreamCapture::spill(std::string_view chunk) {
  if (spill_fd_ < 0) return;
  const std::uint64_t room = max_spill_bytes_ - std::min(max_spill_bytes_, spilled_);
  std::string_view left =
      chunk.substr(0, static_cast<std::size_t>(std::min<std::uint64_t>(room, chunk.size())));
  while (!left.empty()) {
    const ssize_t n = ::write(spill_fd_, left.data(), left.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // a full disk loses the rest of the spill, never the run
    spilled_ += static_cast<std::uint64_t>(n);
    left.remove_prefix(static_cast<std::size_t>(n));
  }
}

StreamOutput StreamCapture::finish() {
  StreamOutput out;
  if (buffer_.size() > max_bytes_) buffer_.erase(0, buffer_.size() - max_bytes_);
  out.tail = std::move(buffer_);
  out.total_bytes = total_;
  out.truncated = total_ > max_bytes_;
  if (!spill_path_.empty()) out.spill_path = spill_path_;
  out.spill_truncated = out.spill_path.has_value() && total_ > spilled_;
  if (spill_fd_ >= 0) ::close(spill_fd_);
  spill_fd_ = -1;
  return out;
}

std::string default_spill_root() {
  const char* tmpdir = ::secure_getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe): read-only
  if (tmpdir != nullptr && tmpdir[0] == '/') return tmpdir;
  return "/tmp";
}

}  // namespace dsh::sandbox::exec
