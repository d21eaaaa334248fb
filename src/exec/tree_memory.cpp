// SPDX-License-Identifier: Apache-2.0
// Kernel facts this relies on: /proc/<pid>/status, /proc/<pid>/task and
// /proc/<pid>/task/<tid>/children are world-readable (no ptrace access check), so the supervisor
// reads them for processes inside bwrap's user and PID namespaces too; RssAnon and RssShmem
// (Linux 4.5) are the resident private anonymous pages and the resident shared memory (MAP_SHARED
// anonymous mappings, memfd and tmpfs pages mapped) of the whole thread group, in kB. Shared
// memory is no data segment: RLIMIT_DATA does not count it.
#include "exec/tree_memory.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace dsh::sandbox::exec::detail {

namespace {

// A /proc path built from pieces without allocating: "/proc/" PID "/task/" TID "/children".
class ProcPath {
 public:
  ProcPath& text(const char* piece) {
    while (*piece != '\0' && size_ + 1 < buffer_.size()) buffer_[size_++] = *piece++;
    buffer_[size_] = '\0';
    return *this;
  }
  ProcPath& number(long value) {
    std::array<char, 24> digits{};
    std::size_t count = 0;
    do {
      digits[count++] = static_cast<char>('0' + value % 10);
      value /= 10;
    } while (value > 0 && count < digits.size());
    while (count > 0 && size_ + 1 < buffer_.size()) buffer_[size_++] = digits[--count];
    buffer_[size_] = '\0';
    return *this;
  }
  const char* c_str() const { return buffer_.data(); }

 private:
  std::array<char, 96> buffer_{};
  std::size_t size_ = 0;
};

// Calls `each` with every decimal number in the file at `path` (pids separated by spaces).
template <typename Each>
void for_each_number(const ProcPath& path, Each each) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  std::array<char, 512> buffer{};
  long value = -1;
  ssize_t n = 0;
  while ((n = ::read(fd, buffer.data(), buffer.size())) > 0 || (n < 0 && errno == EINTR)) {
    for (ssize_t i = 0; i < n; ++i) {
      const char c = buffer[static_cast<std::size_t>(i)];
      if (c >= '0' && c <= '9') {
        value = (value < 0 ? 0 : value * 10) + (c - '0');
      } else if (value >= 0) {
        each(value);
        value = -1;
      }
    }
  }
  if (value >= 0) each(value);
  ::close(fd);
}

// The value in kB of the line "Name:   N kB" in /proc status text, or 0.
std::uint64_t status_kb(const char* text, const char* name) {
  const char* at = std::strstr(text, name);
  if (at == nullptr) return 0;
  at += std::strlen(name);
  while (*at == ' ' || *at == '\t') ++at;
  std::uint64_t value = 0;
  while (*at >= '0' && *at <= '9') value = value * 10 + static_cast<std::uint64_t>(*at++ - '0');
  return value;
}

std::uint64_t process_bytes(pid_t pid) {
  const ProcPath path = ProcPath().text("/proc/").number(pid).text("/status");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  std::array<char, 4096> text{};
  std::size_t size = 0;
  ssize_t n = 0;
  while (size + 1 < text.size() &&
         ((n = ::read(fd, text.data() + size, text.size() - 1 - size)) > 0 ||
          (n < 0 && errno == EINTR))) {
    if (n > 0) size += static_cast<std::size_t>(n);
  }
  ::close(fd);
  text[size] = '\0';
  return (status_kb(text.data(), "\nRssAnon:") + status_kb(text.data(), "\nRssShmem:")) * 1024;
}

struct Queue {
  pid_t* pids;
  std::size_t capacity;
  std::size_t size = 0;

  void push(long pid) {
    if (size < capacity && pid > 0) pids[size++] = static_cast<pid_t>(pid);
  }
};

// Queues the children of every thread of `pid`.
void push_children(pid_t pid, Queue& queue) {
  const ProcPath task = ProcPath().text("/proc/").number(pid).text("/task");
  const int dir = ::open(task.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;
  alignas(dirent64) std::array<char, 2048> entries{};
  ssize_t n = 0;
  while ((n = ::getdents64(dir, entries.data(), entries.size())) > 0) {
    for (ssize_t offset = 0; offset < n;) {
      const auto* entry = reinterpret_cast<const dirent64*>(entries.data() + offset);
      offset += entry->d_reclen;
      if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
      const ProcPath children = ProcPath()
                                    .text("/proc/")
                                    .number(pid)
                                    .text("/task/")
                                    .text(entry->d_name)
                                    .text("/children");
      for_each_number(children, [&queue](long child) { queue.push(child); });
    }
  }
  ::close(dir);
}

}  // namespace

std::uint64_t tree_memory_bytes(pid_t* queue, std::size_t capacity) {
  Queue tree{queue, capacity};
  for_each_number(ProcPath().text("/proc/thread-self/children"),
                  [&tree](long child) { tree.push(child); });
  std::uint64_t total = 0;
  for (std::size_t next = 0; next < tree.size; ++next) {
    total += process_bytes(tree.pids[next]);
    push_children(tree.pids[next], tree);
  }
  return total;
}

}  // namespace dsh::sandbox::exec::detail
