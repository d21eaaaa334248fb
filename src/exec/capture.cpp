// SPDX-License-Identifier: Apache-2.0
#include "exec/capture.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <vector>

#include "base/io.h"

namespace dsh::sandbox::exec {

StreamCapture::StreamCapture(std::string_view name, const Request& request)
    : name_(name),
      max_bytes_(name == "stderr" ? request.stderr_max_bytes : request.stdout_max_bytes),
      max_spill_bytes_(request.max_spill_bytes),
      spill_root_(request.spill_root.empty() ? default_spill_root() : request.spill_root),
      keep_spill_(request.keep_spill),
      kept_spill_bytes_(request.kept_spill_bytes) {}

StreamCapture::~StreamCapture() {
  if (spill_fd_ >= 0) ::close(spill_fd_);
  if (!spill_path_.empty() && !keep_spill_) ::unlink(spill_path_.c_str());  // never finished
}

void StreamCapture::append(std::string_view chunk) {
  // The spill holds the full output: it starts with everything the tail held before its first
  // overflow, so it must be opened before the tail drops anything.
  if (total_ + chunk.size() > max_bytes_ && max_spill_bytes_ > 0) {
    if (spill_fd_ < 0 && !spill_failed_ && open_spill()) spill(buffer_);
    spill(chunk);
  }
  total_ += chunk.size();
  buffer_.append(chunk);
  if (buffer_.size() > 2 * max_bytes_) buffer_.erase(0, buffer_.size() - max_bytes_);
}

// The per-user directory is checked (ours, 0700, not a link) and mkostemp makes the file 0600
// with O_EXCL: no other user can read the output or plant a file or link in its place. In a
// sticky /var/tmp nobody else can rename or replace our directory once checked.
bool StreamCapture::open_spill() {
  const std::string dir = user_spill_dir(spill_root_);
  if (dir.empty()) {
    spill_failed_ = true;
    return false;
  }
  std::string path = dir + "/" + name_ + "-XXXXXX";
  spill_fd_ = ::mkostemp(path.data(), O_CLOEXEC);
  if (spill_fd_ < 0) {
    spill_failed_ = true;
    return false;
  }
  spill_path_ = path;
  return true;
}

void StreamCapture::spill(std::string_view chunk) {
  if (spill_fd_ < 0) return;
  const std::uint64_t room = max_spill_bytes_ - std::min(max_spill_bytes_, spilled_);
  const std::string_view left =
      chunk.substr(0, static_cast<std::size_t>(std::min<std::uint64_t>(room, chunk.size())));
  // A full disk loses the rest of the spill, never the run.
  spilled_ += io::write_all(spill_fd_, left);
}

StreamOutput StreamCapture::finish() {
  StreamOutput out;
  if (buffer_.size() > max_bytes_) buffer_.erase(0, buffer_.size() - max_bytes_);
  out.tail = std::move(buffer_);
  out.total_bytes = total_;
  out.truncated = total_ > max_bytes_;
  out.spill_truncated = !spill_path_.empty() && total_ > spilled_;
  if (spill_fd_ >= 0) ::close(spill_fd_);
  spill_fd_ = -1;
  if (!spill_path_.empty()) {
    if (keep_spill_) {
      out.spill_path = spill_path_;
      prune_spills(spill_path_.substr(0, spill_path_.rfind('/')), kept_spill_bytes_, spill_path_);
    } else {
      ::unlink(spill_path_.c_str());
    }
    spill_path_.clear();
  }
  return out;
}

std::string default_spill_root() { return "/var/tmp"; }

std::string user_spill_path(const std::string& root) {
  return root + "/dsh-sandbox-" + std::to_string(::geteuid());
}

std::string user_spill_dir(const std::string& root) {
  const std::string dir = user_spill_path(root);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return "";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return "";
  struct stat info {};
  const bool ours = ::fstat(fd, &info) == 0 && S_ISDIR(info.st_mode) &&
                    info.st_uid == ::geteuid() && (info.st_mode & 077) == 0;
  ::close(fd);
  return ours ? dir : "";
}

void prune_spills(const std::string& dir, std::uint64_t cap, const std::string& keep) {
  struct Entry {
    std::string path;
    std::uint64_t size;
    struct timespec mtime;
  };
  std::vector<Entry> entries;
  std::uint64_t total = 0;
  DIR* listing = ::opendir(dir.c_str());
  if (listing == nullptr) return;
  while (const dirent* entry = ::readdir(listing)) {  // NOLINT(concurrency-mt-unsafe): own DIR
    const std::string path = dir + "/" + entry->d_name;
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) continue;
    total += static_cast<std::uint64_t>(info.st_size);
    if (path != keep) {
      entries.push_back({path, static_cast<std::uint64_t>(info.st_size), info.st_mtim});
    }
  }
  ::closedir(listing);
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.mtime.tv_sec != b.mtime.tv_sec ? a.mtime.tv_sec < b.mtime.tv_sec
                                            : a.mtime.tv_nsec < b.mtime.tv_nsec;
  });
  for (const Entry& entry : entries) {
    if (total <= cap) break;
    if (::unlink(entry.path.c_str()) == 0) total -= entry.size;
  }
}

}  // namespace dsh::sandbox::exec
