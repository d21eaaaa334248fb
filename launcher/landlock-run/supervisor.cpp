// SPDX-License-Identifier: Apache-2.0
#include "supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "denial_record.h"
#include "net_allow.h"
#include "seccomp_rules.h"

// Linux 6.6: the supervisor's wake-up runs on the notifying task's CPU (a lower round trip).
// Debian 12's headers predate it.
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

namespace landlock_run {
namespace {

constexpr size_t kPathMax = 4096;
constexpr int kAtFdcwd = -100;
constexpr int kAtRemovedir = 0x200;
constexpr int kMaxLinks = 40;

// musl declares ioctl() with an int request, which the seccomp requests overflow: the raw call.
long notif_ioctl(int fd, unsigned long request, void* arg) {
  return syscall(SYS_ioctl, fd, request, arg);
}

struct Recorder {
  const SupervisorConfig* config;
  size_t written = 0;
  uint64_t dropped = 0;

  void record(const char* op, const char* rule, int pid, const char* path) {
    if (written >= kMaxRecords || config->status_fd < 0) {
      ++dropped;
      return;
    }
    char proc[64];
    char exe[kPathMax] = "";
    snprintf(proc, sizeof(proc), "/proc/%d/exe", pid);
    const ssize_t n = readlink(proc, exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = '\0';
    static char line[kDenialLineMax];
    const size_t length = format_denial_line(line, sizeof(line), op, rule, pid, exe, path);
    if (length == 0) {
      ++dropped;
      return;
    }
    ++written;
    write_out(line, length);
  }

  void finish() {
    if (dropped == 0 || config->status_fd < 0) return;
    char line[64];
    const size_t length = format_dropped_line(line, sizeof(line), dropped);
    if (length > 0) write_out(line, length);
  }

  void write_out(const char* data, size_t size) const {
    while (size > 0) {
      const ssize_t n = write(config->status_fd, data, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      data += n;
      size -= static_cast<size_t>(n);
    }
  }
};

// A NUL-terminated string at `address` in the task's memory, read a page at a time (a path may end
// just before an unmapped page). False when it cannot be read or does not fit.
bool read_string(int pid, uint64_t address, char* out, size_t capacity) {
  if (address == 0) return false;
  size_t have = 0;
  while (have + 1 < capacity) {
    const uint64_t at = address + have;
    size_t chunk = 4096 - static_cast<size_t>(at % 4096);
    if (chunk > capacity - 1 - have) chunk = capacity - 1 - have;
    iovec local{out + have, chunk};
    iovec remote{reinterpret_cast<void*>(static_cast<uintptr_t>(at)), chunk};
    const long n = syscall(SYS_process_vm_readv, pid, &local, 1UL, &remote, 1UL, 0UL);
    if (n <= 0) return false;
    const void* nul = memchr(out + have, '\0', static_cast<size_t>(n));
    if (nul != nullptr) return true;
    have += static_cast<size_t>(n);
  }
  return false;
}

// The directory a relative path starts from: the task's cwd, or the directory `dirfd` names.
bool base_directory(int pid, int dirfd, char* out, size_t capacity) {
  char proc[64];
  if (dirfd == kAtFdcwd) {
    snprintf(proc, sizeof(proc), "/proc/%d/cwd", pid);
  } else {
    snprintf(proc, sizeof(proc), "/proc/%d/fd/%d", pid, dirfd);
  }
  const ssize_t n = readlink(proc, out, capacity - 1);
  if (n <= 0 || out[0] != '/') return false;  // "pipe:[...]", "anon_inode:...": no directory
  out[n] = '\0';
  return true;
}

// Resolves `path` (absolute, folded) through the symbolic links of its directories, and of its
// last component when `follow_last`, in the task's view: /proc/self and /proc/thread-self name
// the task, not the supervisor. Components that do not exist are kept as spelled. False when a
// link leads out of the filesystem (a pipe or socket behind /proc/PID/fd/N: no path to govern),
// or loops.
bool walk(int pid, const char* path, bool follow_last, char* out, size_t capacity) {
  char pending[kPathMax];  // what is left to walk, absolute
  if (strlen(path) >= sizeof(pending)) return false;
  strcpy(pending, path);
  int links = 0;
  for (;;) {
    char done[kPathMax] = "";
    size_t done_length = 0;
    const char* rest = pending;
    bool restarted = false;
    while (*rest != '\0') {
      while (*rest == '/') ++rest;
      if (*rest == '\0') break;
      const char* end = strchr(rest, '/');
      const size_t length = end != nullptr ? static_cast<size_t>(end - rest) : strlen(rest);
      const bool last = end == nullptr || end[strspn(end, "/")] == '\0';
      char component[kPathMax];
      memcpy(component, rest, length);
      component[length] = '\0';
      rest += length;
      if (strcmp(done, "/proc") == 0 &&
          (strcmp(component, "self") == 0 || strcmp(component, "thread-self") == 0)) {
        snprintf(component, sizeof(component), "%d", pid);
      }
      if (done_length + 1 + strlen(component) >= sizeof(done)) return false;
      done[done_length++] = '/';
      strcpy(done + done_length, component);
      done_length += strlen(component);
      if (last && !follow_last) break;
      struct stat st;
      if (lstat(done, &st) != 0 || !S_ISLNK(st.st_mode)) continue;
      if (++links > kMaxLinks) return false;
      char target[kPathMax];
      const ssize_t n = readlink(done, target, sizeof(target) - 1);
      if (n <= 0) return false;
      target[n] = '\0';
      if (strncmp(done, "/proc/", 6) == 0 && target[0] != '/') {
        // A magic link of procfs naming no path ("pipe:[12]", "socket:[3]").
        if (strchr(target, ':') != nullptr) return false;
      }
      char parent[kPathMax];
      strcpy(parent, done);
      *strrchr(parent, '/') = '\0';
      char joined[kPathMax];
      char next[kPathMax];
      if (!join_lexically(parent[0] != '\0' ? parent : "/", target, joined, sizeof(joined))) {
        return false;
      }
      if (snprintf(next, sizeof(next), "%s/%s", joined, rest) >= static_cast<int>(sizeof(next))) {
        return false;
      }
      if (!join_lexically("/", next, pending, sizeof(pending))) return false;
      restarted = true;
      break;
    }
    if (restarted) continue;
    if (done_length == 0) strcpy(done, "/");
    if (strlen(done) >= capacity) return false;
    return join_lexically("/", done, out, capacity);
  }
}

// The canonical name of the directory `link` leads to, as procfs prints it: `link` is
// /proc/self/fd/N for a descriptor the supervisor opened, or the task's /proc/PID/cwd or
// /proc/PID/fd/N. False for what names no usable directory: a pipe, a directory deleted meanwhile
// (" (deleted)"), or one inside /proc, whose self links would name the supervisor.
bool directory_name(const char* link, char* out, size_t capacity) {
  const ssize_t n = readlink(link, out, capacity - 1);
  if (n <= 0 || out[0] != '/') return false;
  out[n] = '\0';
  constexpr char kDeleted[] = " (deleted)";
  constexpr size_t kDeletedLength = sizeof(kDeleted) - 1;
  if (static_cast<size_t>(n) >= kDeletedLength && strcmp(out + n - kDeletedLength, kDeleted) == 0) {
    return false;
  }
  return !path_beneath(out, "/proc");
}

// The canonical name of the directory `path` (relative to the supervisor's cwd, or absolute)
// leads to, from one kernel lookup: open it O_PATH (Linux 2.6.39) and read the name back.
bool opened_directory_name(const char* path, char* out, size_t capacity) {
  const int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  char self[64];
  snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
  const bool named = directory_name(self, out, capacity);
  close(fd);
  return named;
}

// `directory`/`last`, with `last` followed when it is a link and the call follows it.
bool join_last(int pid, const char* directory, const char* last, bool follow_last, char* out,
               size_t capacity) {
  const bool root = directory[0] == '/' && directory[1] == '\0';
  const int written = snprintf(out, capacity, "%s/%s", root ? "" : directory, last);
  if (written < 0 || static_cast<size_t>(written) >= capacity) return false;
  if (follow_last) {
    struct stat st;
    if (lstat(out, &st) == 0 && S_ISLNK(st.st_mode)) {
      char link_path[kPathMax];
      strcpy(link_path, out);
      return walk(pid, link_path, true, out, capacity);
    }
  }
  return true;
}

// Splits `path` (absolute, shorter than kPathMax) at its last slash: `parent` gets the directory
// ("/" for a name at the top), the result points at the last component inside `path`.
const char* split_last(const char* path, char* parent) {
  const char* slash = strrchr(path, '/');
  const size_t length = slash == path ? 1 : static_cast<size_t>(slash - path);
  memcpy(parent, path, length);
  parent[length] = '\0';
  return slash + 1;
}

bool is_dot_or_dotdot(const char* name) {
  return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

// `path` (absolute, folded) resolved as the task sees it. The supervisor shares the task's mount
// namespace and root, so the kernel can resolve the parent directory in one lookup where the walk
// above lstats each prefix anew; the walk remains for /proc, a parent that does not exist
// (components kept as spelled), and a directory deleted meanwhile.
bool resolve(int pid, const char* path, bool follow_last, char* out, size_t capacity) {
  const char* slash = strrchr(path, '/');
  if (slash == nullptr || slash[1] == '\0' || path_beneath(path, "/proc")) {
    return walk(pid, path, follow_last, out, capacity);
  }
  char parent[kPathMax];
  const char* last = split_last(path, parent);
  char directory[kPathMax];
  if (!opened_directory_name(parent, directory, sizeof(directory))) {
    return walk(pid, path, follow_last, out, capacity);
  }
  return join_last(pid, directory, last, follow_last, out, capacity);
}

bool exists(const char* path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

// Whether the task has a controlling terminal (tty_nr, field 7 of /proc/PID/stat, is nonzero).
// Without one, opening /dev/tty fails with ENXIO whatever the policy: bash tries it at start-up.
bool has_controlling_terminal(int pid) {
  char proc[64];
  snprintf(proc, sizeof(proc), "/proc/%d/stat", pid);
  const int fd = open(proc, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  char text[1024];
  const ssize_t n = read(fd, text, sizeof(text) - 1);
  close(fd);
  if (n <= 0) return true;
  text[n] = '\0';
  const char* after = strrchr(text, ')');  // comm may hold spaces and parentheses
  int tty = 1;
  if (after == nullptr || sscanf(after + 1, " %*c %*d %*d %*d %d", &tty) != 1) return true;
  return tty != 0;
}

bool writable(const SupervisorConfig& config, const char* path) {
  for (size_t i = 0; i < config.writable_root_count; ++i) {
    if (path_beneath(path, config.writable_roots[i])) return true;
  }
  return false;
}

// One path argument of a notified call.
struct PathArg {
  int dirfd_arg = -1;  // index of the dirfd argument, -1: AT_FDCWD
  int path_arg = -1;   // index of the path argument
};

// What a write-intent call is, and which of its path arguments may be refused.
struct WriteCall {
  const char* op = nullptr;
  PathArg target;  // the path that must be writable
  PathArg source;  // rename's source (also removed from its directory); path_arg -1: none
  bool follow_last = false;
  enum class Exists { kAny, kMust, kMustNot } exists = Exists::kAny;
};

bool write_call(int nr, const unsigned long long* args, int pid, WriteCall* call) {
  constexpr uint64_t kWriteMode = 01 | 02;
  constexpr uint64_t kCreate = 0100;
  constexpr uint64_t kTrunc = 01000;
  constexpr uint64_t kNoFollow = 0400000;
  auto open_like = [&](uint64_t flags, int dirfd_arg, int path_arg) {
    if ((flags & (kWriteMode | kCreate | kTrunc)) == 0) return false;
    call->target = {dirfd_arg, path_arg};
    call->follow_last = (flags & kNoFollow) == 0;
    if ((flags & kCreate) != 0) {
      call->op = "create";
      // An existing file opened for reading only: O_CREAT changes nothing.
      if ((flags & (kWriteMode | kTrunc)) == 0) call->exists = WriteCall::Exists::kMustNot;
    } else {
      call->op = "open-write";
      call->exists = WriteCall::Exists::kMust;  // ENOENT comes before any access check
    }
    return true;
  };
  switch (nr) {
#ifdef __NR_open
    case __NR_open:
      return open_like(args[1], -1, 0);
    case __NR_creat:
      return open_like(kCreate | 01 | kTrunc, -1, 0);
    case __NR_mkdir:
      *call = {"mkdir", {-1, 0}, {}, false, WriteCall::Exists::kMustNot};
      return true;
    case __NR_mknod:
      *call = {"create", {-1, 0}, {}, false, WriteCall::Exists::kMustNot};
      return true;
    case __NR_unlink:
      *call = {"unlink", {-1, 0}, {}, false, WriteCall::Exists::kMust};
      return true;
    case __NR_rmdir:
      *call = {"rmdir", {-1, 0}, {}, false, WriteCall::Exists::kMust};
      return true;
    case __NR_rename:
      *call = {"rename", {-1, 1}, {-1, 0}, false, WriteCall::Exists::kAny};
      return true;
    case __NR_link:
      *call = {"link", {-1, 1}, {}, false, WriteCall::Exists::kMustNot};
      return true;
    case __NR_symlink:
      *call = {"symlink", {-1, 1}, {}, false, WriteCall::Exists::kMustNot};
      return true;
#endif
    case __NR_openat:
      return open_like(args[2], 0, 1);
    case __NR_openat2: {
      uint64_t flags = 0;
      iovec local{&flags, sizeof(flags)};
      iovec remote{reinterpret_cast<void*>(static_cast<uintptr_t>(args[2])), sizeof(flags)};
      if (syscall(SYS_process_vm_readv, pid, &local, 1UL, &remote, 1UL, 0UL) != sizeof(flags)) {
        return false;
      }
      return open_like(flags, 0, 1);
    }
    case __NR_mkdirat:
      *call = {"mkdir", {0, 1}, {}, false, WriteCall::Exists::kMustNot};
      return true;
    case __NR_mknodat:
      *call = {"create", {0, 1}, {}, false, WriteCall::Exists::kMustNot};
      return true;
    case __NR_unlinkat:
      *call = {(args[2] & kAtRemovedir) != 0 ? "rmdir" : "unlink",
               {0, 1},
               {},
               false,
               WriteCall::Exists::kMust};
      return true;
#ifdef __NR_renameat
    case __NR_renameat:
#endif
    case __NR_renameat2:
      *call = {"rename", {2, 3}, {0, 1}, false, WriteCall::Exists::kAny};
      return true;
    case __NR_linkat:
      *call = {"link", {2, 3}, {}, false, WriteCall::Exists::kMustNot};
      return true;
    case __NR_symlinkat:
      *call = {"symlink", {1, 2}, {}, false, WriteCall::Exists::kMustNot};
      return true;
    case __NR_truncate:
      *call = {"truncate", {-1, 0}, {}, true, WriteCall::Exists::kMust};
      return true;
    default:
      return false;
  }
}

// The path a call names, absolute and folded, as the task sees it. False when unreadable. The
// base of a relative path is read here, while the call is pending (its dirfd may be closed once
// it returns); procfs gives it canonical, so a single relative component has a canonical parent
// and needs no further lookup (`parent_canonical`).
bool call_path(int pid, const unsigned long long* args, const PathArg& arg, char* out,
               size_t capacity, bool* parent_canonical = nullptr) {
  char raw[kPathMax];
  if (parent_canonical != nullptr) *parent_canonical = false;
  if (arg.path_arg < 0 || !read_string(pid, args[arg.path_arg], raw, sizeof(raw))) return false;
  if (raw[0] == '/') return join_lexically("/", raw, out, capacity);
  const int dirfd = arg.dirfd_arg < 0 ? kAtFdcwd : static_cast<int>(args[arg.dirfd_arg]);
  char base[kPathMax];
  if (!base_directory(pid, dirfd, base, sizeof(base))) return false;
  if (parent_canonical != nullptr) {
    *parent_canonical = raw[0] != '\0' && strchr(raw, '/') == nullptr && !is_dot_or_dotdot(raw) &&
                        !path_beneath(base, "/proc");
  }
  return join_lexically(base, raw, out, capacity);
}

// What the metadata, IPC, keyring, namespace and network rules record: the op word, and the path
// argument the call names, if any.
const char* refused_op(const SyscallRule& rule, PathArg* arg) {
  const char* name = rule.name;
  auto starts = [name](const char* prefix) { return strncmp(name, prefix, strlen(prefix)) == 0; };
  *arg = {};
  if (starts("ioctl")) return "ioctl";
  if (starts("shm") || starts("msg") || starts("sem") || starts("mq_") ||
      strcmp(name, "ipc") == 0) {
    return "ipc";
  }
  if (starts("add_key") || starts("keyctl") || starts("request_key")) return "keyring";
  if (starts("unshare") || starts("clone") || starts("setns")) return "namespace";
  if (starts("personality")) return "personality";
  if (starts("socket") || starts("io_uring")) return "socket";
  // Path forms name the file as args[0], *at forms as (dirfd args[0], args[1]); fd forms
  // (fchmod, fchown, fsetxattr, fremovexattr) name none: the record then carries the call.
  const size_t length = strlen(name);
  const bool at_form = (length > 2 && strcmp(name + length - 2, "at") == 0) ||
                       (length > 3 && strcmp(name + length - 3, "at2") == 0) ||
                       strcmp(name, "file_setattr") == 0;
  if (at_form) {
    *arg = {0, 1};
  } else if (name[0] != 'f') {
    *arg = {-1, 0};
  }
  if (strstr(name, "chmod") != nullptr) return "chmod";
  if (strstr(name, "chown") != nullptr) return "chown";
  if (strstr(name, "utime") != nullptr) return "utime";
  return "xattr";
}

const char* refused_rule(const SyscallRule& rule) {
  for (const SyscallRule& r : kNetworkRules) {
    if (&r == &rule) return "network-denied";
  }
  // Under the allow-list only stream sockets reach the proxy's bridge; the rest is refused.
  for (const SyscallRule& r : kStreamNetworkRules) {
    if (&r == &rule) return "network-denied";
  }
  for (const SyscallRule& r : kMetadataRules) {
    if (&r == &rule) return "metadata";
  }
  return "kernel-object";
}

void describe_socket(const unsigned long long* args, char* out, size_t capacity) {
  switch (static_cast<int>(args[0])) {
    case 2:
      snprintf(out, capacity, "af-inet");
      return;
    case 10:
      snprintf(out, capacity, "af-inet6");
      return;
    case 16:
      snprintf(out, capacity, "af-netlink");
      return;
    case 17:
      snprintf(out, capacity, "af-packet");
      return;
    default:
      snprintf(out, capacity, "af-%d", static_cast<int>(args[0]));
  }
}

void respond(int listener, uint64_t id, int error, bool let_through) {
  seccomp_notif_resp resp{};
  resp.id = id;
  if (let_through) {
    resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  } else {
    resp.error = -error;
  }
  // ENOENT: the task died or its call was interrupted meanwhile; nothing to answer.
  while (notif_ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) != 0 && errno == EINTR) {
  }
}

bool still_valid(int listener, uint64_t id) {
  uint64_t value = id;
  return notif_ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &value) == 0;
}

// Records a write-intent path when it lies outside every writable root.
void check_write(const SupervisorConfig& config, Recorder& recorder, int pid, const char* op,
                 const char* path, bool parent_canonical, bool follow_last,
                 WriteCall::Exists must) {
  char resolved[kPathMax];
  if (parent_canonical) {
    char directory[kPathMax];
    const char* last = split_last(path, directory);
    if (!join_last(pid, directory, last, follow_last, resolved, sizeof(resolved))) return;
  } else if (!resolve(pid, path, follow_last, resolved, sizeof(resolved))) {
    return;
  }
  if (writable(config, resolved)) return;
  if (strcmp(resolved, "/dev/tty") == 0 && !has_controlling_terminal(pid)) return;
  if (must == WriteCall::Exists::kMust && !exists(resolved)) return;
  if (must == WriteCall::Exists::kMustNot && exists(resolved)) return;
  // A missing directory on the way fails the lookup (ENOENT) before any access check.
  char parent[kPathMax];
  strcpy(parent, resolved);
  char* slash = strrchr(parent, '/');
  if (slash != nullptr && slash != parent) {
    *slash = '\0';
    struct stat st;
    if (stat(parent, &st) != 0) return;
  }
  recorder.record(op, "outside-writable-roots", pid, resolved);
}

void handle(int listener, const SupervisorConfig& config, Recorder& recorder,
            const seccomp_notif& notif) {
  const int pid = static_cast<int>(notif.pid);
  const unsigned long long* args = notif.data.args;
  const SyscallRule* rule = matching_rule(config.filter, notif.data.nr, args);
  if (rule == nullptr) {  // not ours (never happens): let the kernel decide, as unfiltered
    respond(listener, notif.id, 0, true);
    return;
  }
  if (rule->err != 0) {
    // Refused whatever the path: answer first, then describe it at leisure.
    PathArg arg;
    const char* op = refused_op(*rule, &arg);
    char path[kPathMax] = "";
    if (strcmp(op, "socket") == 0 && strncmp(rule->name, "socket", 6) == 0) {
      describe_socket(args, path, sizeof(path));
    } else if (arg.path_arg >= 0 && call_path(pid, args, arg, path, sizeof(path))) {
      // the path as named
    } else {
      snprintf(path, sizeof(path), "%s", rule->name);
    }
    const bool valid = still_valid(listener, notif.id);
    respond(listener, notif.id, rule->err, false);
    if (valid) recorder.record(op, refused_rule(*rule), pid, path);
    return;
  }
  WriteCall call;
  char target[kPathMax];
  char source[kPathMax];
  const bool is_write = write_call(notif.data.nr, args, pid, &call);
  bool target_parent_canonical = false;
  bool source_parent_canonical = false;
  const bool have_target = is_write && call_path(pid, args, call.target, target, sizeof(target),
                                                 &target_parent_canonical);
  const bool have_source =
      is_write && call.source.path_arg >= 0 &&
      call_path(pid, args, call.source, source, sizeof(source), &source_parent_canonical);
  // The memory read above belonged to this call only if the notification is still pending.
  const bool valid = still_valid(listener, notif.id);
  respond(listener, notif.id, 0, true);
  if (!valid) return;
  if (have_source) {
    check_write(config, recorder, pid, call.op, source, source_parent_canonical, false,
                WriteCall::Exists::kMust);
  }
  if (have_target)
    check_write(config, recorder, pid, call.op, target, target_parent_canonical, call.follow_last,
                call.exists);
}

}  // namespace

bool path_beneath(const char* path, const char* root) {
  const size_t length = strlen(root);
  if (length == 1 && root[0] == '/') return path[0] == '/';
  return strncmp(path, root, length) == 0 && (path[length] == '\0' || path[length] == '/');
}

bool join_lexically(const char* base, const char* path, char* out, size_t capacity) {
  char joined[2 * kPathMax + 2];
  if (path[0] == '/') {
    if (snprintf(joined, sizeof(joined), "%s", path) >= static_cast<int>(sizeof(joined))) {
      return false;
    }
  } else if (snprintf(joined, sizeof(joined), "%s/%s", base, path) >=
             static_cast<int>(sizeof(joined))) {
    return false;
  }
  size_t at = 0;
  const char* p = joined;
  while (*p != '\0') {
    while (*p == '/') ++p;
    if (*p == '\0') break;
    const char* end = strchr(p, '/');
    const size_t length = end != nullptr ? static_cast<size_t>(end - p) : strlen(p);
    if (length == 1 && p[0] == '.') {
      // nothing
    } else if (length == 2 && p[0] == '.' && p[1] == '.') {
      while (at > 0 && out[at - 1] != '/') --at;
      if (at > 0) --at;  // the slash before the removed component
    } else {
      if (at + 1 + length >= capacity) return false;
      out[at++] = '/';
      memcpy(out + at, p, length);
      at += length;
    }
    p += length;
  }
  if (at == 0) {
    if (capacity < 2) return false;
    out[at++] = '/';
  }
  out[at] = '\0';
  return true;
}

int supervise(int listener, pid_t child, int signal_fd, const SupervisorConfig& config) {
  Recorder recorder{&config};
  // Best effort: older kernels refuse the flag and the round trip is only slower.
  syscall(SYS_ioctl, listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
  pollfd fds[2] = {{signal_fd, POLLIN, 0}, {listener, POLLIN, 0}};
  int status = 0;
  for (;;) {
    const int ready = poll(fds, 2, -1);
    if (ready < 0 && errno == EINTR) continue;
    if ((fds[0].revents & POLLIN) != 0) {
      signalfd_siginfo info{};
      while (read(signal_fd, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
        if (info.ssi_signo == SIGCHLD) continue;
        // The terminal signals the whole foreground group, the child included: forward only
        // what was sent to the launcher alone.
        if (info.ssi_code != SI_KERNEL) kill(child, static_cast<int>(info.ssi_signo));
      }
      const pid_t done = waitpid(child, &status, WNOHANG);
      if (done == child) break;
    }
    if ((fds[1].revents & POLLIN) != 0) {
      seccomp_notif notif{};
      if (notif_ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &notif) == 0) {
        handle(listener, config, recorder, notif);
      }
    } else if ((fds[1].revents & (POLLHUP | POLLERR | POLLNVAL)) != 0) {
      fds[1].fd = -1;  // no task uses the filter any more: only the child's exit is left
    }
  }
  recorder.finish();
  return status;
}

}  // namespace landlock_run
