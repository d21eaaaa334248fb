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
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "denial_record.h"
#include "net_allow.h"
#include "path_walk.h"
#include "seccomp_rules.h"
#include "write_rules.h"

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
constexpr uint64_t kOpenNoFollow = 0400000;    // O_NOFOLLOW
constexpr uint64_t kOpenPathOnly = 010000000;  // O_PATH

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

// `size` bytes at `address` in the task's memory.
bool read_memory(int pid, uint64_t address, void* out, size_t size) {
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(static_cast<uintptr_t>(address)), size};
  return syscall(SYS_process_vm_readv, pid, &local, 1UL, &remote, 1UL, 0UL) ==
         static_cast<long>(size);
}

// Linux 5.6 UAPI (linux/openat2.h), which Debian 12's musl build does not see: struct open_how and
// the RESOLVE_* flags the lookup below uses.
struct OpenHow {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};
constexpr uint64_t kResolveNoMagiclinks = 0x02;  // fail (ELOOP) on /proc/PID/fd/N-style links
constexpr uint64_t kResolveInRoot = 0x10;        // "/" and ".." stop at the dirfd, as a chroot
constexpr long kProcSuperMagic = 0x9fa0;         // procfs's f_type (linux/magic.h)
constexpr unsigned long kProcRootIno = 1;        // the inode of procfs's root directory

// How a path a call named resolved: an object with a name, a lookup the kernel fails before any
// access check (a missing directory on the way, a loop, a name too long: nothing was refused),
// or an object the supervisor cannot name (the task's /proc entries are out of its reach).
enum class Resolution { kNamed, kFails, kUnknown };

// The task's lookup context, captured while its call is pending: its root, and the directory a
// relative path starts from (its cwd, or the directory its dirfd names, which it may close once
// the call returns). Descriptors are O_PATH: opened through the task's procfs links, which name
// its objects whatever the supervisor's own cwd.
struct TaskView {
  int pid = 0;
  int root = -1;
  int start = -1;
  int links = 0;  // symbolic links followed, bounded as the kernel's MAXSYMLINKS
  // The directory whose search a lookup was refused at (EACCES), when it was: the supervisor
  // shares the command's mount namespace and credentials, so bwrap's mode-0000 tmpfs over an
  // unreadable directory refuses both of them there.
  int refused = -1;
  bool shared_root = false;  // root is the supervisor's own, not this view's to close

  TaskView() = default;
  TaskView(const TaskView&) = delete;
  TaskView& operator=(const TaskView&) = delete;
  ~TaskView() {
    if (root >= 0 && !shared_root) close(root);
    if (start >= 0) close(start);
    if (refused >= 0) close(refused);
  }
};

int open_proc_entry(int pid, const char* entry) {
  char proc[64];
  snprintf(proc, sizeof(proc), "/proc/%d/%s", pid, entry);
  return open(proc, O_PATH | O_CLOEXEC);
}

bool on_procfs(int fd) {
  struct statfs fs;
  return fstatfs(fd, &fs) == 0 && static_cast<long>(fs.f_type) == kProcSuperMagic;
}

bool same_inode(int a, int b) {
  struct stat first;
  struct stat second;
  return fstat(a, &first) == 0 && fstat(b, &second) == 0 && first.st_dev == second.st_dev &&
         first.st_ino == second.st_ino;
}

void replace_fd(int* fd, int next) {
  if (*fd >= 0) close(*fd);
  *fd = next;
}

// Keeps `directory` as the place a lookup was refused when the call that failed on it did so
// with EACCES (searching it needs the execute permission bwrap's masks take away).
void note_refusal(TaskView& view, int directory) {
  if (errno == EACCES) replace_fd(&view.refused, fcntl(directory, F_DUPFD_CLOEXEC, 0));
}

// The name the kernel gives the object `fd` holds, read from procfs. kFails for a directory
// deleted meanwhile (a create in it fails with ENOENT) and for an object with no path (a pipe, a
// socket, an anonymous inode, reached through /proc/PID/fd/N: Landlock does not govern those).
Resolution fd_name(int fd, char* out, size_t capacity) {
  char self[64];
  snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(self, out, capacity - 1);
  if (n <= 0 || out[0] != '/') return Resolution::kFails;
  out[n] = '\0';
  constexpr char kDeleted[] = " (deleted)";
  constexpr size_t kDeletedLength = sizeof(kDeleted) - 1;
  if (static_cast<size_t>(n) >= kDeletedLength && strcmp(out + n - kDeletedLength, kDeleted) == 0) {
    return Resolution::kFails;
  }
  return Resolution::kNamed;
}

// Opens `name` in procfs directory `dir` as the task would: /proc/self and /proc/thread-self name
// the task (they would name the supervisor if looked up here); every other procfs link, magic or
// not, is followed by the kernel to the object it names, the same object for both, since its
// directory already is the task's /proc/PID.
int open_proc_link(const TaskView& view, int dir, const char* name, int flags) {
  struct stat st;
  if (fstat(dir, &st) == 0 && st.st_ino == kProcRootIno) {
    char task[64] = "";
    if (strcmp(name, "self") == 0) snprintf(task, sizeof(task), "%d", view.pid);
    if (strcmp(name, "thread-self") == 0)
      snprintf(task, sizeof(task), "%d/task/%d", view.pid, view.pid);
    if (task[0] != '\0') return openat(dir, task, flags | O_PATH | O_CLOEXEC);
  }
  return openat(dir, name, flags | O_PATH | O_CLOEXEC);
}

// The directory `spelled` names from `from`, walked a component at a time with the task's
// answers: ".." stops at the task's root, a symbolic link's target is spliced in before what is
// left (an absolute one restarts at the task's root), a procfs link is taken as open_proc_link
// takes it. -1 when the kernel's lookup fails.
int walk_directory(TaskView& view, int from, const char* spelled) {
  char pending[kPathMax];
  if (strlen(spelled) >= sizeof(pending)) return -1;
  strcpy(pending, spelled);
  int current = fcntl(from, F_DUPFD_CLOEXEC, 0);
  const char* cursor = pending;
  char component[kPathMax];
  while (current >= 0 && next_component(&cursor, component, sizeof(component))) {
    if (strcmp(component, ".") == 0) continue;
    if (strcmp(component, "..") == 0) {
      if (!same_inode(current, view.root)) {
        const int parent = openat(current, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (parent < 0) note_refusal(view, current);
        replace_fd(&current, parent);
      }
      continue;
    }
    struct stat st;
    if (fstatat(current, component, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      note_refusal(view, current);
      break;
    }
    if (!S_ISLNK(st.st_mode)) {
      replace_fd(&current,
                 openat(current, component, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    } else if (on_procfs(current)) {
      replace_fd(&current, open_proc_link(view, current, component, O_DIRECTORY));
    } else {
      char target[kPathMax];
      const ssize_t n = readlinkat(current, component, target, sizeof(target) - 1);
      if (n <= 0 || ++view.links > kMaxLinks) break;
      target[n] = '\0';
      char rest[kPathMax];
      strcpy(rest, cursor);
      if (!splice_link(target, rest, pending, sizeof(pending))) break;
      cursor = pending;
      if (target[0] == '/') replace_fd(&current, fcntl(view.root, F_DUPFD_CLOEXEC, 0));
    }
  }
  if (current >= 0 && *cursor != '\0') replace_fd(&current, -1);  // stopped before the end
  return current;
}

// The directory `spelled` names from `from` (the task's root for an absolute path). One openat2
// (Linux 5.6) does it where no procfs entry is involved; a walk takes over otherwise: beneath the
// root, RESOLVE_IN_ROOT keeps "/" and ".." at the task's root, and RESOLVE_NO_MAGICLINKS refuses
// the procfs links that would name the supervisor's objects, as would /proc/self.
int open_directory(TaskView& view, int from, const char* spelled) {
  if (spelled[0] == '\0') return fcntl(from, F_DUPFD_CLOEXEC, 0);
  OpenHow how{O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
              kResolveNoMagiclinks | (from == view.root ? kResolveInRoot : 0)};
  const int fd = static_cast<int>(syscall(__NR_openat2, from, spelled, &how, sizeof(how)));
  if (fd >= 0 && !on_procfs(fd)) return fd;
  if (fd >= 0) close(fd);
  // EACCES: walked again to find the directory the search was refused at.
  if (fd < 0 && errno != ELOOP && errno != EXDEV && errno != ENOSYS && errno != EAGAIN &&
      errno != EACCES) {
    return -1;
  }
  return walk_directory(view, from, spelled);
}

// `directory`/`name` into `out`.
Resolution name_in(int directory, const char* name, char* out, size_t capacity) {
  const Resolution named = fd_name(directory, out, capacity);
  if (named != Resolution::kNamed) return named;
  const size_t length = strlen(out);
  const bool root = length == 1;
  if (length + 1 + strlen(name) >= capacity) return Resolution::kUnknown;
  snprintf(out + length, capacity - length, "%s%s", root ? "" : "/", name);
  return Resolution::kNamed;
}

// "/", "DIR/." and "DIR/..": the object is the directory they lead to.
Resolution name_directory(TaskView& view, int directory, const char* last, char* out,
                          size_t capacity) {
  const int object = last[0] == '\0' ? fcntl(directory, F_DUPFD_CLOEXEC, 0)
                                     : open_directory(view, directory, last);
  if (object < 0) return Resolution::kFails;
  const Resolution named = fd_name(object, out, capacity);
  close(object);
  return named;
}

// The object `spelled` names, resolved as the kernel resolves it for the task: every directory on
// the way with its symbolic links taken before any "..", then the last component, followed when
// the call follows it (a dangling link makes O_CREAT create its target). A last component that
// does not exist is named by its directory's name and the component.
Resolution resolve_spelled(TaskView& view, const char* spelled, bool follow_last, char* out,
                           size_t capacity) {
  char text[kPathMax];
  if (strlen(spelled) >= sizeof(text)) return Resolution::kFails;
  strcpy(text, spelled);
  int from = view.start;
  int owned = -1;  // the directory a link's relative target starts from
  Resolution result = Resolution::kFails;
  for (;;) {
    SpelledPath split;
    if (!split_spelled(text, &split)) break;
    const int directory = open_directory(view, text[0] == '/' ? view.root : from, split.parent);
    if (directory < 0) break;
    struct stat st;
    const bool link = split.plain &&
                      fstatat(directory, split.last, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                      S_ISLNK(st.st_mode) && (follow_last || split.trailing_slash);
    if (!split.plain || !link) {
      result = split.plain ? name_in(directory, split.last, out, capacity)
                           : name_directory(view, directory, split.last, out, capacity);
      close(directory);
      break;
    }
    if (on_procfs(directory)) {
      const int object = open_proc_link(view, directory, split.last, 0);
      close(directory);
      result = object >= 0 ? fd_name(object, out, capacity) : Resolution::kFails;
      if (object >= 0) close(object);
      break;
    }
    const ssize_t n = readlinkat(directory, split.last, text, sizeof(text) - 1);
    if (n <= 0 || ++view.links > kMaxLinks) {
      close(directory);
      break;
    }
    text[n] = '\0';
    replace_fd(&owned, directory);
    from = owned;
  }
  if (owned >= 0) close(owned);
  return result;
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

bool beneath_any(const char* path, const char* const* roots, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (path_beneath(path, roots[i])) return true;
  }
  return false;
}

bool writable(const SupervisorConfig& config, const char* path) {
  return beneath_any(path, config.writable_roots, config.writable_root_count);
}

bool unreadable(const SupervisorConfig& config, const char* path) {
  return beneath_any(path, config.unreadable_notes, config.unreadable_note_count);
}

// The rule of a noted path `path` lies beneath, or null: an unreadable one (a default secret, a
// --deny-read path) or a read-only carve-out (a protected git file, a startup file, --deny-write).
const char* noted_rule(const SupervisorConfig& config, const char* path) {
  if (unreadable(config, path)) return "deny-read";
  if (beneath_any(path, config.read_only_notes, config.read_only_note_count)) return "deny-write";
  return nullptr;
}

// Whether a lookup that failed was refused at a directory beneath an unreadable noted path; its
// name into `out`. That directory is the object the kernel refused: what the command spelled
// after it was never looked up.
bool refused_unreadable(const SupervisorConfig& config, const TaskView& view, char* out,
                        size_t capacity) {
  return view.refused >= 0 && fd_name(view.refused, out, capacity) == Resolution::kNamed &&
         unreadable(config, out);
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
  bool socket_address = false;  // the path is a sockaddr_un's (bind), its length the next arg
};

bool write_call(int nr, const unsigned long long* args, int pid, WriteCall* call) {
  constexpr uint64_t kWriteMode = 01 | 02;
  constexpr uint64_t kCreate = 0100;
  constexpr uint64_t kTrunc = 01000;
  constexpr uint64_t kExcl = 0200;
  auto open_like = [&](uint64_t flags, int dirfd_arg, int path_arg) {
    if ((flags & (kWriteMode | kCreate | kTrunc)) == 0) return false;
    call->target = {dirfd_arg, path_arg};
    // O_CREAT | O_EXCL never follows a final link: it fails with EEXIST on one.
    call->follow_last =
        (flags & kOpenNoFollow) == 0 && (flags & (kCreate | kExcl)) != (kCreate | kExcl);
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
      if (!read_memory(pid, args[2], &flags, sizeof(flags))) return false;
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
    case __NR_bind:
      // A pathname AF_UNIX socket is a node bind creates (Landlock's MAKE_SOCK); its address is
      // read by socket_path, and any other family is none of ours.
      *call = {"bind", {-1, 1}, {}, false, WriteCall::Exists::kMustNot, true};
      return true;
    default:
      return false;
  }
}

// The path of a pathname AF_UNIX address at `address` (`length` bytes): false for another family
// or an abstract name (no file: Landlock's scoping, not its file rules, governs those).
bool socket_path(int pid, uint64_t address, uint64_t length, char* out, size_t capacity) {
  constexpr size_t kFamilySize = sizeof(uint16_t);
  constexpr uint16_t kAfUnixFamily = 1;
  char buffer[kFamilySize + 108 + 1] = {};  // struct sockaddr_un: family, sun_path[108]
  if (address == 0 || length <= kFamilySize + 1) return false;
  const size_t size =
      length < sizeof(buffer) - 1 ? static_cast<size_t>(length) : sizeof(buffer) - 1;
  if (!read_memory(pid, address, buffer, size)) return false;
  uint16_t family = 0;
  memcpy(&family, buffer, sizeof(family));
  if (family != kAfUnixFamily || buffer[kFamilySize] == '\0') return false;
  buffer[size] = '\0';
  return snprintf(out, capacity, "%s", buffer + kFamilySize) < static_cast<int>(capacity);
}

// What a call named, captured while it is pending: the text as spelled (only ever resolved, never
// recorded) and the task's lookup context. False when the text cannot be read.
// `root`, when given, is the task's root already open (read_root); else /proc/PID/root is opened.
bool capture(int pid, const unsigned long long* args, const PathArg& arg, bool socket_address,
             char* spelled, TaskView* view, int root = -1) {
  const bool read = socket_address ? socket_path(pid, args[arg.path_arg], args[arg.path_arg + 1],
                                                 spelled, kPathMax)
                                   : read_string(pid, args[arg.path_arg], spelled, kPathMax);
  if (!read) return false;
  view->pid = pid;
  view->shared_root = root >= 0;
  view->root = root >= 0 ? root : open_proc_entry(pid, "root");
  if (spelled[0] == '/') return true;
  const int dirfd = arg.dirfd_arg < 0 ? kAtFdcwd : static_cast<int>(args[arg.dirfd_arg]);
  char entry[32];
  if (dirfd == kAtFdcwd) {
    snprintf(entry, sizeof(entry), "cwd");
  } else {
    snprintf(entry, sizeof(entry), "fd/%d", dirfd);
  }
  view->start = open_proc_entry(pid, entry);
  return true;
}

// `spelled` resolved in `view` (see resolve_spelled); kUnknown when the task's root could not be
// opened (a task that made itself non-dumpable hides its /proc entries).
Resolution resolve_in(TaskView& view, const char* spelled, bool follow_last, char* out,
                      size_t capacity) {
  view.links = 0;  // a view may serve two lookups: the guard's, then the record's
  replace_fd(&view.refused, -1);
  if (view.root < 0) return Resolution::kUnknown;
  if (spelled[0] != '/' && view.start < 0) return Resolution::kFails;  // no such descriptor
  return resolve_spelled(view, spelled, follow_last, out, capacity);
}

// What a refused call (metadata, IPC, keyring, namespace, network, io_uring rules) records: the op
// word, the path argument it names if any, the descriptor an fd form names, and whether it
// follows a final symbolic link.
struct RefusedCall {
  const char* op = nullptr;
  PathArg arg;
  int fd_arg = -1;
  bool follow_last = true;
};

bool starts_with(const char* text, const char* prefix) {
  return strncmp(text, prefix, strlen(prefix)) == 0;
}

// The argument holding AT_SYMLINK_NOFOLLOW (0x100) in the *at forms that take one.
int nofollow_flags_arg(const char* name) {
  if (strcmp(name, "fchownat") == 0 || strcmp(name, "file_setattr") == 0) return 4;
  if (strcmp(name, "fchmodat2") == 0 || strcmp(name, "utimensat") == 0) return 3;
  if (strcmp(name, "setxattrat") == 0 || strcmp(name, "removexattrat") == 0) return 2;
  return -1;
}

// A set-id rule (seccomp_rules.h kSetIdRules): the call that would have set the bit, named by
// its base name ("openat" of "openat(set-id)").
RefusedCall set_id_call(const char* name) {
  RefusedCall call;
  const bool at_form = (strstr(name, "at(") != nullptr || strstr(name, "at2(") != nullptr) &&
                       !starts_with(name, "creat(");
  if (starts_with(name, "fchmod(")) {
    call.fd_arg = 0;
  } else {
    call.arg = at_form ? PathArg{0, 1} : PathArg{-1, 0};
  }
  call.op = strstr(name, "chmod") != nullptr ? "chmod"
            : starts_with(name, "mkdir")     ? "mkdir"
                                             : "create";
  return call;
}

RefusedCall refused_call(const SyscallRule& rule, const unsigned long long* args) {
  const char* name = rule.name;
  if (strstr(name, "(set-id)") != nullptr) return set_id_call(name);
  RefusedCall call;
  if (starts_with(name, "ioctl")) call.op = "ioctl";
  if (starts_with(name, "shm") || starts_with(name, "msg") || starts_with(name, "sem") ||
      starts_with(name, "mq_") || strcmp(name, "ipc") == 0) {
    call.op = "ipc";
  }
  if (starts_with(name, "add_key") || starts_with(name, "keyctl") ||
      starts_with(name, "request_key")) {
    call.op = "keyring";
  }
  if (starts_with(name, "unshare") || starts_with(name, "clone") || starts_with(name, "setns")) {
    call.op = "namespace";
  }
  if (starts_with(name, "personality")) call.op = "personality";
  if (starts_with(name, "socket")) call.op = "socket";
  if (starts_with(name, "io_uring")) call.op = "io-uring";
  if (call.op != nullptr) return call;
  // Path forms name the file as args[0], *at forms as (dirfd args[0], args[1]); fd forms
  // (fchmod, fchown, fsetxattr, fremovexattr) name the descriptor args[0].
  const size_t length = strlen(name);
  const bool at_form = (length > 2 && strcmp(name + length - 2, "at") == 0) ||
                       (length > 3 && strcmp(name + length - 3, "at2") == 0) ||
                       strcmp(name, "file_setattr") == 0;
  if (at_form) {
    call.arg = {0, 1};
    call.fd_arg = 0;  // an *at form given no path works on its dirfd (AT_EMPTY_PATH, utimensat)
  } else if (name[0] != 'f') {
    call.arg = {-1, 0};
  } else {
    call.fd_arg = 0;
  }
  const int flags = nofollow_flags_arg(name);
  constexpr uint64_t kAtSymlinkNofollow = 0x100;
  call.follow_last = name[0] != 'l' && (flags < 0 || (args[flags] & kAtSymlinkNofollow) == 0);
  if (strstr(name, "chmod") != nullptr)
    call.op = "chmod";
  else if (strstr(name, "chown") != nullptr)
    call.op = "chown";
  else if (strstr(name, "utime") != nullptr)
    call.op = "utime";
  else
    call.op = "xattr";
  return call;
}

const char* refused_rule(const SyscallRule& rule) {
  for (const SyscallRule& r : kNetworkRules) {
    if (&r == &rule) return "network-denied";
  }
  for (const SyscallRule& r : kNetnsNetworkRules) {
    if (&r == &rule) return "network-denied";
  }
  // Under the allow-list only stream sockets reach the proxy's bridge; the rest is refused.
  for (const SyscallRule& r : kStreamNetworkRules) {
    if (&r == &rule) return "network-denied";
  }
  for (const SyscallRule& r : kMetadataRules) {
    if (&r == &rule) return "metadata";
  }
  for (const SyscallRule& r : kSetIdRules) {
    if (&r == &rule) return "set-id";
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

// Whether `path` exists for the supervisor, which shares the command's mount namespace and
// credentials: hidden when the lookup is refused (EACCES: a name in a directory bwrap masks with
// a mode-0000 tmpfs), which the kernel refused the command as well, existing or not.
enum class Presence { kPresent, kAbsent, kHidden };

Presence presence(const char* path) {
  struct stat st;
  if (lstat(path, &st) == 0) return Presence::kPresent;
  return errno == EACCES ? Presence::kHidden : Presence::kAbsent;
}

// A write-intent call's path, captured while it was pending, resolved after the kernel decided:
// recorded when the object lies outside every writable root. No record when the lookup fails
// before any access check (a missing directory on the way, an existing target of mkdir, link,
// symlink or bind, a missing file to unlink or open without O_CREAT), nor when the object cannot
// be named: the supervisor cannot tell then whether Landlock refused anything.
void check_write(const SupervisorConfig& config, Recorder& recorder, const char* op, TaskView& view,
                 const char* spelled, bool follow_last, WriteCall::Exists must) {
  char resolved[kPathMax];
  if (resolve_in(view, spelled, follow_last, resolved, sizeof(resolved)) != Resolution::kNamed) {
    if (refused_unreadable(config, view, resolved, sizeof(resolved))) {
      recorder.record(op, "deny-read", view.pid, resolved);
    }
    return;
  }
  // A noted path is refused whatever the writable roots: the outer layer keeps it.
  const char* rule = noted_rule(config, resolved);
  if (rule == nullptr && writable(config, resolved)) return;
  if (strcmp(resolved, "/dev/tty") == 0 && !has_controlling_terminal(view.pid)) return;
  const Presence found = presence(resolved);
  if (must == WriteCall::Exists::kMust && found == Presence::kAbsent) return;
  if (must == WriteCall::Exists::kMustNot && found == Presence::kPresent) return;
  recorder.record(op, rule != nullptr ? rule : "outside-writable-roots", view.pid, resolved);
}

// A read-intent open (kReadIntentRules), resolved after the kernel decided: recorded when the
// object lies beneath an unreadable noted path, or the lookup was refused at a directory beneath
// one. O_PATH opens nothing for reading (Landlock checks no right for it), and a missing file
// fails with ENOENT before any access check.
void check_read(const SupervisorConfig& config, Recorder& recorder, TaskView& view,
                const char* spelled, uint64_t flags) {
  char resolved[kPathMax];
  if (resolve_in(view, spelled, (flags & kOpenNoFollow) == 0, resolved, sizeof(resolved)) !=
      Resolution::kNamed) {
    if (refused_unreadable(config, view, resolved, sizeof(resolved))) {
      recorder.record("read", "deny-read", view.pid, resolved);
    }
    return;
  }
  if ((flags & kOpenPathOnly) != 0 || !unreadable(config, resolved)) return;
  if (presence(resolved) == Presence::kAbsent) return;
  recorder.record("read", "deny-read", view.pid, resolved);
}

// The object a refused call names into `out`: its path resolved as the kernel resolves it, the
// object of the descriptor an fd form names, the socket family, the call's name when it names no
// file (io_uring, IPC, keyrings, namespaces), or kUnknownPath when it names a file the supervisor
// cannot resolve. Read while the call is pending: the descriptors are the task's until it
// returns.
void describe_refused(int pid, const SyscallRule& rule, const RefusedCall& call,
                      const unsigned long long* args, char* out, size_t capacity) {
  if (strcmp(call.op, "socket") == 0 && starts_with(rule.name, "socket")) {
    describe_socket(args, out, capacity);
    return;
  }
  snprintf(out, capacity, "%s",
           call.arg.path_arg < 0 && call.fd_arg < 0 ? rule.name : kUnknownPath);
  char spelled[kPathMax] = "";
  TaskView view;
  const bool read = call.arg.path_arg >= 0 && capture(pid, args, call.arg, false, spelled, &view);
  if (read && spelled[0] != '\0') {
    char resolved[kPathMax];
    if (resolve_in(view, spelled, call.follow_last, resolved, sizeof(resolved)) ==
        Resolution::kNamed) {
      snprintf(out, capacity, "%s", resolved);
    }
    return;
  }
  // An fd form, or an *at form given no path (NULL, or "" with AT_EMPTY_PATH): its descriptor.
  const bool no_path = call.arg.path_arg < 0 || args[call.arg.path_arg] == 0 || read;
  if (call.fd_arg < 0 || !no_path) return;
  char entry[32];
  snprintf(entry, sizeof(entry), "fd/%d", static_cast<int>(args[call.fd_arg]));
  const int object = open_proc_entry(pid, entry);
  if (object < 0) return;
  char named[kPathMax];
  if (fd_name(object, named, sizeof(named)) == Resolution::kNamed) {
    snprintf(out, capacity, "%s", named);
  }
  close(object);
}

// Whether `spelled`, resolved now while its call is pending, lies beneath one of `guards` (a
// --guard-* path); its name into `out`.
bool guarded(TaskView& view, const char* spelled, bool follow_last, const char* const* guards,
             size_t count, char* out, size_t capacity) {
  return count > 0 && resolve_in(view, spelled, follow_last, out, capacity) == Resolution::kNamed &&
         beneath_any(out, guards, count);
}

// A write-intent call beneath a --guard-* path: refused here (EACCES, Landlock's answer) and
// recorded. True when it was.
bool refuse_guarded_write(int listener, const SupervisorConfig& config, Recorder& recorder,
                          const seccomp_notif& notif, const char* op, TaskView& view,
                          const char* spelled, bool follow_last) {
  char resolved[kPathMax];
  const bool read_only = guarded(view, spelled, follow_last, config.guarded_read_only,
                                 config.guarded_read_only_count, resolved, sizeof(resolved));
  if (!read_only && !guarded(view, spelled, follow_last, config.guarded_unreadable,
                             config.guarded_unreadable_count, resolved, sizeof(resolved))) {
    return false;
  }
  if (!still_valid(listener, notif.id)) return false;
  respond(listener, notif.id, EACCES, false);
  recorder.record(op, read_only ? "deny-write" : "deny-read", view.pid, resolved);
  return true;
}

// openat2 creating a file with a set-id bit in its mode (struct open_how, which the filter cannot
// read; kSetIdRules refuses the other creating calls itself): refused with EPERM and recorded.
bool refuse_set_id_openat2(int listener, Recorder& recorder, const seccomp_notif& notif,
                           TaskView& view, const char* spelled) {
  constexpr uint64_t kCreating = 0100 | 020000000;  // O_CREAT, O_TMPFILE
  OpenHow how{};
  if (notif.data.nr != __NR_openat2 ||
      !read_memory(view.pid, notif.data.args[2], &how, sizeof(how)) ||
      (how.flags & kCreating) == 0 || (how.mode & kSetIdBits) == 0) {
    return false;
  }
  char resolved[kPathMax];
  if (resolve_in(view, spelled, false, resolved, sizeof(resolved)) != Resolution::kNamed) {
    snprintf(resolved, sizeof(resolved), "%s", kUnknownPath);
  }
  if (!still_valid(listener, notif.id)) return false;
  respond(listener, notif.id, EPERM, false);
  recorder.record("create", "set-id", view.pid, resolved);
  return true;
}

// A write-intent call: let through (Landlock decides), then checked against the writable roots.
void handle_write(int listener, const SupervisorConfig& config, Recorder& recorder,
                  const seccomp_notif& notif) {
  const int pid = static_cast<int>(notif.pid);
  const unsigned long long* args = notif.data.args;
  WriteCall call;
  char target[kPathMax];
  char source[kPathMax];
  TaskView target_view;
  TaskView source_view;
  const bool is_write = write_call(notif.data.nr, args, pid, &call);
  const bool have_target =
      is_write && capture(pid, args, call.target, call.socket_address, target, &target_view);
  const bool have_source = is_write && call.source.path_arg >= 0 &&
                           capture(pid, args, call.source, false, source, &source_view);
  if (have_target && refuse_set_id_openat2(listener, recorder, notif, target_view, target)) return;
  if ((have_source && refuse_guarded_write(listener, config, recorder, notif, call.op, source_view,
                                           source, false)) ||
      (have_target && refuse_guarded_write(listener, config, recorder, notif, call.op, target_view,
                                           target, call.follow_last))) {
    return;
  }
  // The memory read above belonged to this call only if the notification is still pending.
  const bool valid = still_valid(listener, notif.id);
  respond(listener, notif.id, 0, true);
  if (!valid) return;
  if (have_source) {
    check_write(config, recorder, call.op, source_view, source, false, WriteCall::Exists::kMust);
  }
  if (have_target) {
    check_write(config, recorder, call.op, target_view, target, call.follow_last, call.exists);
  }
}

// The supervisor's own root, which is every supervised task's: none can change its root
// (chroot needs CAP_SYS_CHROOT and pivot_root CAP_SYS_ADMIN, which the child dropped, and the
// filter refuses the user namespace that would give them back). Opened once: reads are the
// commonest notification, and a procfs lookup per call would be a large part of its cost.
int read_root() {
  static const int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  return root;
}

// A read-intent open: let through (Landlock and bwrap's masks decide), then checked against the
// unreadable noted paths.
void handle_read(int listener, const SupervisorConfig& config, Recorder& recorder,
                 const seccomp_notif& notif) {
  const int pid = static_cast<int>(notif.pid);
  const unsigned long long* args = notif.data.args;
  const bool at_form = notif.data.nr == __NR_openat;
  char spelled[kPathMax];
  TaskView view;
  const bool have = capture(pid, args, at_form ? PathArg{0, 1} : PathArg{-1, 0}, false, spelled,
                            &view, read_root());
  const uint64_t flags = args[at_form ? 2 : 1];
  char resolved[kPathMax];
  // A read beneath a --guard-unreadable path: refused here, as Landlock would (O_PATH reads
  // nothing, and Landlock checks no right for it).
  if (have && (flags & kOpenPathOnly) == 0 &&
      guarded(view, spelled, (flags & kOpenNoFollow) == 0, config.guarded_unreadable,
              config.guarded_unreadable_count, resolved, sizeof(resolved)) &&
      still_valid(listener, notif.id)) {
    respond(listener, notif.id, EACCES, false);
    recorder.record("read", "deny-read", pid, resolved);
    return;
  }
  const bool valid = still_valid(listener, notif.id);
  respond(listener, notif.id, 0, true);
  if (have && valid) check_read(config, recorder, view, spelled, flags);
}

// --contain-metadata: Landlock does not govern chmod, chown, utimes or extended attributes, so on
// the host a command could change them on any file its uid owns (as root: the host's own files).
// Each such call is performed here instead, on the object the supervisor itself opened (O_PATH)
// and checked: beneath a writable root (and no carve-out) it is done and its result returned;
// elsewhere it is refused with EPERM, as --deny-metadata refuses it, and recorded. Checking and
// acting on one pinned object leaves no window for a link to be swapped in between. The calls the
// supervisor does not perform (ioctl flags, file_setattr, the *xattrat forms) are refused.
enum class MetaKind { kChmod, kChown, kUtime, kSetXattr, kRemoveXattr, kOther };

struct MetaCall {
  MetaKind kind = MetaKind::kOther;
  int mode_arg = -1;   // chmod: the mode; chown: the uid (gid follows); xattr: the name
  int times_arg = -1;  // utime family: the times, NULL for now
  int flags_arg = -1;  // AT_SYMLINK_NOFOLLOW / AT_EMPTY_PATH
  enum class Times { kNone, kUtimbuf, kTimeval, kTimespec } times = Times::kNone;
};

MetaCall meta_call(int nr) {
  switch (nr) {
#ifdef __NR_chmod
    case __NR_chmod:
      return {MetaKind::kChmod, 1};
    case __NR_chown:
    case __NR_lchown:
      return {MetaKind::kChown, 1};
    case __NR_utime:
      return {MetaKind::kUtime, -1, 1, -1, MetaCall::Times::kUtimbuf};
    case __NR_utimes:
      return {MetaKind::kUtime, -1, 1, -1, MetaCall::Times::kTimeval};
    case __NR_futimesat:
      return {MetaKind::kUtime, -1, 2, -1, MetaCall::Times::kTimeval};
#endif
    case __NR_fchmod:
      return {MetaKind::kChmod, 1};
    case __NR_fchmodat:
      return {MetaKind::kChmod, 2};
    case __NR_fchmodat2:
      return {MetaKind::kChmod, 2, -1, 3};
    case __NR_fchown:
      return {MetaKind::kChown, 1};
    case __NR_fchownat:
      return {MetaKind::kChown, 2, -1, 4};
    case __NR_utimensat:
      return {MetaKind::kUtime, -1, 2, 3, MetaCall::Times::kTimespec};
    case __NR_setxattr:
    case __NR_lsetxattr:
    case __NR_fsetxattr:
      return {MetaKind::kSetXattr, 1};
    case __NR_removexattr:
    case __NR_lremovexattr:
    case __NR_fremovexattr:
      return {MetaKind::kRemoveXattr, 1};
    default:
      return {};
  }
}

// The object a metadata call names, opened O_PATH by the supervisor in the task's view: its path
// (symbolic links followed as the call follows them), or the descriptor an fd form or an empty
// path names. Returns the descriptor or -errno, the kernel's answer for a lookup that fails.
int meta_object(int pid, const RefusedCall& call, const MetaCall& meta,
                const unsigned long long* args) {
  constexpr uint64_t kAtEmptyPath = 0x1000;
  char spelled[kPathMax] = "";
  TaskView view;
  const bool named = call.arg.path_arg >= 0 && args[call.arg.path_arg] != 0;
  if (named && !capture(pid, args, call.arg, false, spelled, &view, read_root())) return -EFAULT;
  if (named && spelled[0] != '\0') {
    const bool absolute = spelled[0] == '/';
    const int from = absolute ? view.root : view.start;
    if (from < 0) return -EBADF;
    OpenHow how{static_cast<uint64_t>(O_PATH | O_CLOEXEC | (call.follow_last ? 0 : O_NOFOLLOW)), 0,
                kResolveNoMagiclinks | (absolute ? kResolveInRoot : 0)};
    const int fd = static_cast<int>(syscall(__NR_openat2, from, spelled, &how, sizeof(how)));
    return fd >= 0 ? fd : -errno;
  }
  const bool empty_allowed =
      !named || (meta.flags_arg >= 0 && (args[meta.flags_arg] & kAtEmptyPath) != 0);
  if (!empty_allowed || call.fd_arg < 0) return -ENOENT;
  const int dirfd = static_cast<int>(args[call.fd_arg]);
  char entry[32];
  if (dirfd == kAtFdcwd) {
    snprintf(entry, sizeof(entry), "cwd");
  } else {
    snprintf(entry, sizeof(entry), "fd/%d", dirfd);
  }
  // No such descriptor: EBADF, as the kernel says; a task that made itself non-dumpable hides
  // its /proc/PID entries from the supervisor (EACCES there): refused.
  const int fd = open_proc_entry(pid, entry);
  if (fd >= 0) return fd;
  return errno == ENOENT ? -EBADF : -EPERM;
}

// Whether the supervisor may change the metadata of `object`: beneath a writable root and no
// carve-out, or no path reaches it (a deleted file, a pipe, a socket, an anonymous inode). Never
// a device node: the only one a grant names is the host's /dev/null (--rw /dev/null), and the
// command cannot create one. `name` gets its name for a record.
bool meta_allowed(const SupervisorConfig& config, int object, char* name, size_t capacity) {
  struct stat st;
  const bool known = fstat(object, &st) == 0;
  const bool device = known && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode));
  if (known && !device && st.st_nlink == 0 && !S_ISDIR(st.st_mode)) return true;
  char self[64];
  snprintf(self, sizeof(self), "/proc/self/fd/%d", object);
  const ssize_t n = readlink(self, name, capacity - 1);
  if (n <= 0) return false;
  name[n] = '\0';
  if (name[0] != '/') return !device;
  return !device && writable(config, name) && noted_rule(config, name) == nullptr;
}

// utime, utimes, futimesat and utimensat on `proc` (the object's /proc/self/fd link: utimensat
// given a NULL path refuses an O_PATH descriptor), with the task's times converted to timespec.
int perform_utime(int pid, const MetaCall& meta, const unsigned long long* args, const char* proc) {
  const uint64_t address = args[meta.times_arg];
  timespec times[2] = {};
  if (address != 0) {
    if (meta.times == MetaCall::Times::kTimespec) {
      if (!read_memory(pid, address, times, sizeof(times))) return -EFAULT;
    } else if (meta.times == MetaCall::Times::kTimeval) {
      timeval given[2];
      if (!read_memory(pid, address, given, sizeof(given))) return -EFAULT;
      for (int i = 0; i < 2; ++i) {
        if (given[i].tv_usec < 0 || given[i].tv_usec >= 1000000) return -EINVAL;
        times[i] = {given[i].tv_sec, given[i].tv_usec * 1000};
      }
    } else {
      long given[2];  // struct utimbuf: actime, modtime
      if (!read_memory(pid, address, given, sizeof(given))) return -EFAULT;
      times[0] = {given[0], 0};
      times[1] = {given[1], 0};
    }
  }
  return utimensat(AT_FDCWD, proc, address != 0 ? times : nullptr, 0) == 0 ? 0 : -errno;
}

// setxattr / removexattr and their l- and f- forms on `proc`, with the task's name and value.
int perform_xattr(int pid, const MetaCall& meta, const unsigned long long* args, const char* proc) {
  constexpr size_t kXattrSizeMax = 65536;  // XATTR_SIZE_MAX
  char name[256];                          // XATTR_NAME_MAX 255 and its NUL
  if (!read_string(pid, args[meta.mode_arg], name, sizeof(name))) return -ERANGE;
  if (meta.kind == MetaKind::kRemoveXattr) return removexattr(proc, name) == 0 ? 0 : -errno;
  const size_t size = static_cast<size_t>(args[meta.mode_arg + 2]);
  if (size > kXattrSizeMax) return -E2BIG;
  static char value[kXattrSizeMax];
  if (size > 0 && !read_memory(pid, args[meta.mode_arg + 1], value, size)) return -EFAULT;
  const int flags = static_cast<int>(args[meta.mode_arg + 3]);
  return setxattr(proc, name, value, size, flags) == 0 ? 0 : -errno;
}

// Performs `meta` on `object` with the task's arguments. Returns 0 or -errno.
int perform_meta(int pid, const MetaCall& meta, const unsigned long long* args, int object) {
  char proc[64];
  snprintf(proc, sizeof(proc), "/proc/self/fd/%d", object);
  switch (meta.kind) {
    case MetaKind::kChmod:
      return fchmodat(AT_FDCWD, proc, static_cast<mode_t>(args[meta.mode_arg]), 0) == 0 ? 0
                                                                                        : -errno;
    case MetaKind::kChown:
      return fchownat(object, "", static_cast<uid_t>(args[meta.mode_arg]),
                      static_cast<gid_t>(args[meta.mode_arg + 1]), AT_EMPTY_PATH) == 0
                 ? 0
                 : -errno;
    case MetaKind::kUtime:
      return perform_utime(pid, meta, args, proc);
    case MetaKind::kSetXattr:
    case MetaKind::kRemoveXattr:
      return perform_xattr(pid, meta, args, proc);
    case MetaKind::kOther:
      break;
  }
  return -EPERM;
}

void handle_metadata(int listener, const SupervisorConfig& config, Recorder& recorder,
                     const seccomp_notif& notif, const SyscallRule& rule) {
  const int pid = static_cast<int>(notif.pid);
  const unsigned long long* args = notif.data.args;
  const RefusedCall call = refused_call(rule, args);
  const MetaCall meta = meta_call(notif.data.nr);
  char name[kPathMax] = "";
  int result = -EPERM;
  bool refused = true;
  if (meta.kind == MetaKind::kOther) {
    describe_refused(pid, rule, call, args, name, sizeof(name));
  } else if (const int object = meta_object(pid, call, meta, args); object < 0) {
    result = object;  // the lookup's own failure: nothing was refused
    refused = false;
  } else {
    refused = !meta_allowed(config, object, name, sizeof(name));
    if (!refused) result = perform_meta(pid, meta, args, object);
    close(object);
  }
  // The arguments read above were this call's only if it is still pending.
  if (!still_valid(listener, notif.id)) return;
  respond(listener, notif.id, -result, false);
  if (refused) recorder.record(call.op, "metadata", pid, name);
}

// --rule-writes (write_rules.h): every write-class call is performed here instead of by the kernel
// on the task's behalf. Each path is pinned while the call is pending: its parent directory opened
// as the kernel walks it (symbolic links on the way taken, "/" and ".." kept at the task's root),
// and a last name that is a symbolic link followed here when the call follows it. The rules judge
// the pinned directory and the name; the call is then made relative to the same descriptor
// without following a last link, so nothing the command swaps in after the check is followed. An
// open's descriptor is injected into the task (SECCOMP_IOCTL_NOTIF_ADDFD, Linux 5.9), answering
// the call in the same step (SECCOMP_ADDFD_FLAG_SEND, Linux 5.14). The supervisor is in no
// Landlock domain, so it performs only what lies beneath a --rw grant and no noted path; the rest
// is refused with EACCES, Landlock's own answer there, and recorded.
#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif

// One path argument, pinned.
struct Pinned {
  int parent = -1;  // the directory the last name is looked up in
  int object = -1;  // or an object with no path (a pipe reached through /proc/PID/fd)
  char last[kPathMax] = "";
  char directory[kPathMax] = "";  // the parent's canonical path
  char path[kPathMax] = "";       // the target's: directory + "/" + last
  char spelled[kPathMax] = "";    // the path as the call spelled it, made absolute
  bool plain = true;              // last is a name, not "", "." or ".."

  Pinned() = default;
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
  ~Pinned() {
    if (parent >= 0) close(parent);
    if (object >= 0) close(object);
  }
};

// Fills `out` for the last component `split` in the pinned `directory`. 0 or an errno.
int pin_last(int directory, const SpelledPath& split, Pinned* out) {
  out->parent = directory;
  out->plain = split.plain;
  snprintf(out->last, sizeof(out->last), "%s", split.last);
  if (fd_name(directory, out->directory, sizeof(out->directory)) != Resolution::kNamed) {
    return ENOENT;  // deleted meanwhile: a create in it fails so
  }
  if (!split.plain) {
    snprintf(out->path, sizeof(out->path), "%s", out->directory);
    return 0;
  }
  return name_in(directory, split.last, out->path, sizeof(out->path)) == Resolution::kNamed
             ? 0
             : ENAMETOOLONG;
}

// A procfs link on the way (/proc/PID/fd/N and its kin): the object the task's descriptor holds.
// One with a name is walked again by that name (into `text`, -1 returned); one without (a pipe, a
// socket) is the target itself (0). Else the errno.
int pin_proc_link(TaskView& view, int directory, const char* last, char* text, Pinned* out) {
  const int object = open_proc_link(view, directory, last, 0);
  close(directory);
  char named[kPathMax];
  if (object < 0 || fd_name(object, named, sizeof(named)) != Resolution::kNamed) {
    out->object = object;
    return object < 0 ? ENOENT : 0;
  }
  close(object);
  if (++view.links > kMaxLinks) return ELOOP;
  strcpy(text, named);
  return -1;
}

// Pins `spelled` in `view`, following a last symbolic link when `follow_last` (or the path ends in
// a slash). 0 or the errno the kernel's lookup would fail with.
int pin_path(TaskView& view, const char* spelled, bool follow_last, Pinned* out) {
  char text[kPathMax];
  if (spelled[0] == '\0') return ENOENT;
  if (strlen(spelled) >= sizeof(text)) return ENAMETOOLONG;
  strcpy(text, spelled);
  char start_name[kPathMax] = "";
  if (spelled[0] != '/' && view.start >= 0 &&
      fd_name(view.start, start_name, sizeof(start_name)) != Resolution::kNamed) {
    snprintf(start_name, sizeof(start_name), "%s", kUnknownPath);
  }
  snprintf(out->spelled, sizeof(out->spelled), "%s%s%s", start_name, spelled[0] == '/' ? "" : "/",
           spelled);
  int from = view.start;
  int owned = -1;  // the directory a link's relative target starts from
  int error = 0;
  for (;;) {
    SpelledPath split;
    const int start = text[0] == '/' ? view.root : from;
    if (!split_spelled(text, &split) || start < 0) {
      error = start < 0 ? EBADF : ENAMETOOLONG;
      break;
    }
    errno = 0;
    const int directory = open_directory(view, start, split.parent);
    if (directory < 0) {
      error = errno != 0 ? errno : ENOENT;
      break;
    }
    struct stat st;
    const bool link = split.plain &&
                      fstatat(directory, split.last, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                      S_ISLNK(st.st_mode) && (follow_last || split.trailing_slash);
    if (!link) {
      error = pin_last(directory, split, out);
      break;
    }
    if (on_procfs(directory)) {
      error = pin_proc_link(view, directory, split.last, text, out);
      if (error == -1) continue;
      break;
    }
    const ssize_t n = readlinkat(directory, split.last, text, sizeof(text) - 2);
    if (n <= 0 || ++view.links > kMaxLinks) {
      close(directory);
      error = ELOOP;
      break;
    }
    text[n] = '\0';
    if (split.trailing_slash) strcat(text, "/");
    replace_fd(&owned, directory);
    from = owned;
  }
  if (owned >= 0) close(owned);
  return error;
}

// The rule that refuses changing the pinned target, or null. `*copy_only`: a git config that may
// take a new content only as commit_config's checked copy.
const char* ruled_refusal(const SupervisorConfig& config, const Pinned& pin, Change change,
                          bool moved_directory, bool* copy_only) {
  *copy_only = false;
  if (pin.parent < 0) return nullptr;  // no path: nothing a later tool finds by name
  if (const char* rule = noted_rule(config, pin.path)) return rule;
  if (!writable(config, pin.path)) return "outside-writable-roots";
  if (!pin.plain) return nullptr;
  if (!home_allows(pin.spelled, config.homes, config.home_count)) return "deny-write";
  const int verdict = rule_verdict(pin.parent, pin.directory, pin.last, change, moved_directory,
                                   config.homes, config.home_count);
  *copy_only = verdict == kConfigCopyOnly;
  return verdict == 0 ? nullptr : "deny-write";
}

// The task's file-creation mask, from /proc/PID/status (Linux 4.7); 022 when it cannot be read.
mode_t task_umask(int pid) {
  char proc[64];
  snprintf(proc, sizeof(proc), "/proc/%d/status", pid);
  const int fd = open(proc, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 022;
  char text[4096];
  const ssize_t n = read(fd, text, sizeof(text) - 1);
  close(fd);
  if (n <= 0) return 022;
  text[n] = '\0';
  const char* field = strstr(text, "\nUmask:");
  unsigned mask = 022;
  if (field != nullptr) sscanf(field + 7, "%o", &mask);
  return static_cast<mode_t>(mask & 0777);
}

// What a write-class call is, for the supervisor to perform.
enum class RuledOp { kOpen, kMkdir, kMknod, kUnlink, kRename, kLink, kSymlink, kTruncate };

struct RuledCall {
  RuledOp op = RuledOp::kOpen;
  const char* word = nullptr;  // the record's op
  PathArg target;
  PathArg source;        // rename's and link's old path; path_arg -1: none
  uint64_t flags = 0;    // open, unlinkat, renameat2, linkat flags
  uint64_t mode = 0;     // open, mkdir, mknod
  uint64_t extra = 0;    // mknod's device, truncate's length, symlink's target address
  uint64_t resolve = 0;  // openat2's RESOLVE_* flags
};

constexpr uint64_t kOpenTmpfile = 020000000 | 0200000;  // O_TMPFILE (includes O_DIRECTORY)

bool ruled_open(uint64_t flags, uint64_t mode, int dirfd_arg, int path_arg, RuledCall* call) {
  constexpr uint64_t kWriting = 01 | 02 | 0100 | 01000;
  if ((flags & kOpenPathOnly) != 0 || (flags & kWriting) == 0) return false;
  call->op = RuledOp::kOpen;
  call->word = (flags & 0100) != 0 ? "create" : "open-write";
  call->target = {dirfd_arg, path_arg};
  call->flags = flags;
  call->mode = mode;
  return true;
}

bool ruled_call(const seccomp_notif& notif, RuledCall* call) {
  const unsigned long long* args = notif.data.args;
  auto set = [&](RuledOp op, const char* word, PathArg target, PathArg source, uint64_t flags,
                 uint64_t mode, uint64_t extra) {
    *call = {op, word, target, source, flags, mode, extra};
    return true;
  };
  switch (notif.data.nr) {
#ifdef __NR_open
    case __NR_open:
      return ruled_open(args[1], args[2], -1, 0, call);
    case __NR_creat:
      return ruled_open(0100 | 01 | 01000, args[1], -1, 0, call);
    case __NR_mkdir:
      return set(RuledOp::kMkdir, "mkdir", {-1, 0}, {}, 0, args[1], 0);
    case __NR_mknod:
      return set(RuledOp::kMknod, "create", {-1, 0}, {}, 0, args[1], args[2]);
    case __NR_unlink:
      return set(RuledOp::kUnlink, "unlink", {-1, 0}, {}, 0, 0, 0);
    case __NR_rmdir:
      return set(RuledOp::kUnlink, "rmdir", {-1, 0}, {}, kAtRemovedir, 0, 0);
    case __NR_rename:
      return set(RuledOp::kRename, "rename", {-1, 1}, {-1, 0}, 0, 0, 0);
    case __NR_link:
      return set(RuledOp::kLink, "link", {-1, 1}, {-1, 0}, 0, 0, 0);
    case __NR_symlink:
      return set(RuledOp::kSymlink, "symlink", {-1, 1}, {}, 0, 0, args[0]);
#endif
    case __NR_openat:
      return ruled_open(args[2], args[3], 0, 1, call);
    case __NR_openat2: {
      OpenHow how{};
      if (!read_memory(static_cast<int>(notif.pid), args[2], &how, sizeof(how))) return false;
      if (!ruled_open(how.flags, how.mode, 0, 1, call)) return false;
      call->resolve = how.resolve;
      return true;
    }
    case __NR_mkdirat:
      return set(RuledOp::kMkdir, "mkdir", {0, 1}, {}, 0, args[2], 0);
    case __NR_mknodat:
      return set(RuledOp::kMknod, "create", {0, 1}, {}, 0, args[2], args[3]);
    case __NR_unlinkat:
      return set(RuledOp::kUnlink, (args[2] & kAtRemovedir) != 0 ? "rmdir" : "unlink", {0, 1}, {},
                 args[2] & kAtRemovedir, 0, 0);
#ifdef __NR_renameat
    case __NR_renameat:
      return set(RuledOp::kRename, "rename", {2, 3}, {0, 1}, 0, 0, 0);
#endif
    case __NR_renameat2:
      return set(RuledOp::kRename, "rename", {2, 3}, {0, 1}, args[4], 0, 0);
    case __NR_linkat:
      return set(RuledOp::kLink, "link", {2, 3}, {0, 1}, args[4], 0, 0);
    case __NR_symlinkat:
      return set(RuledOp::kSymlink, "symlink", {1, 2}, {}, 0, 0, args[0]);
    case __NR_truncate:
      return set(RuledOp::kTruncate, "truncate", {-1, 0}, {}, 0, 0, args[1]);
    default:
      return false;
  }
}

// The outcome of a ruled call: performed (a result, or a descriptor to inject) or refused by a
// rule (recorded with `path`).
struct RuledOutcome {
  long result = 0;  // >= 0, or -errno
  int inject = -1;  // an open's descriptor
  bool cloexec = false;
  const char* rule = nullptr;
  char path[kPathMax] = "";
};

void refuse(RuledOutcome* out, const char* rule, const Pinned& pin) {
  out->rule = rule;
  // Landlock's answer, or EROFS where the directory is a read-only mount (bwrap's view outside
  // the writable roots and its read-only binds): what the kernel would have said there.
  struct statvfs fs;
  const bool read_only_mount =
      pin.parent >= 0 && fstatvfs(pin.parent, &fs) == 0 && (fs.f_flag & ST_RDONLY) != 0;
  out->result = read_only_mount ? -EROFS : -EACCES;
  snprintf(out->path, sizeof(out->path), "%s", pin.parent >= 0 ? pin.path : kUnknownPath);
}

// Whether `name` in `directory` exists (not following a link); its mode into *mode.
bool entry_exists(int directory, const char* name, mode_t* mode) {
  struct stat st;
  if (fstatat(directory, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return false;
  *mode = st.st_mode;
  return true;
}

// An open performed on the pinned target. A FIFO is opened O_RDWR | O_NONBLOCK, which never waits
// for the other end (a wait here would stall every supervised call), and handed over blocking
// when the call asked so.
long perform_open(const RuledCall& call, const Pinned& pin, mode_t umask_bits) {
  const int flags = static_cast<int>(call.flags);
  const mode_t mode = static_cast<mode_t>(call.mode) & 07777 & ~umask_bits;
  if (pin.object >= 0) {
    char proc[64];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pin.object);
    const int fd =
        open(proc, (flags & ~static_cast<int>(0100 | 0200 | kOpenTmpfile)) | O_CLOEXEC | O_NOCTTY);
    return fd >= 0 ? fd : -errno;
  }
  if ((call.flags & kOpenTmpfile) == kOpenTmpfile) {
    const int fd = openat(pin.parent, pin.plain ? pin.last : ".", flags | O_CLOEXEC, mode);
    return fd >= 0 ? fd : -errno;
  }
  if (!pin.plain) return -EISDIR;
  mode_t existing = 0;
  int own = flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
  const bool fifo = entry_exists(pin.parent, pin.last, &existing) && S_ISFIFO(existing);
  if (fifo) own = (own & ~O_ACCMODE) | O_RDWR | O_NONBLOCK;
  const int fd = openat(pin.parent, pin.last, own, mode);
  if (fd < 0) return -errno;
  if (fifo && (flags & O_NONBLOCK) == 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

void ruled_open_call(const SupervisorConfig& config, const RuledCall& call, TaskView& view,
                     const char* spelled, RuledOutcome* out) {
  constexpr uint64_t kCreate = 0100;
  constexpr uint64_t kExcl = 0200;
  if (call.resolve != 0) {
    // RESOLVE_* restrictions would have to be walked as the kernel walks them: refused as openat2
    // is refused without evidence, and callers fall back to openat.
    out->result = -ENOSYS;
    return;
  }
  const bool tmpfile = (call.flags & kOpenTmpfile) == kOpenTmpfile;
  const bool follow = tmpfile || ((call.flags & kOpenNoFollow) == 0 &&
                                  (call.flags & (kCreate | kExcl)) != (kCreate | kExcl));
  Pinned pin;
  if (const int error = pin_path(view, spelled, follow, &pin); error != 0) {
    out->result = -error;
    return;
  }
  if ((call.flags & (kCreate | 020000000)) != 0 && (call.mode & kSetIdBits) != 0) {
    refuse(out, "set-id", pin);  // openat2's mode, which the filter cannot read
    out->result = -EPERM;
    return;
  }
  mode_t existing = 0;
  const bool exists = pin.parent < 0 || !pin.plain || entry_exists(pin.parent, pin.last, &existing);
  // A name not there is created only with O_CREAT; without it the open fails (ENOENT) and there
  // is nothing to judge. An O_TMPFILE file has no name until a link gives it one (judged then).
  const bool writes = (call.flags & (01 | 02 | 01000)) != 0;
  if (exists && !tmpfile && (call.flags & (kCreate | kExcl)) == (kCreate | kExcl)) {
    out->result = -EEXIST;  // the kernel's answer before any permission check
    return;
  }
  const Change change = exists ? Change::kWrite : Change::kCreate;
  bool copy_only = false;
  const char* rule = nullptr;
  if (tmpfile || (exists ? writes : (call.flags & kCreate) != 0)) {
    rule = tmpfile ? (writable(config, pin.path) ? nullptr : "outside-writable-roots")
                   : ruled_refusal(config, pin, change, false, &copy_only);
  }
  if (rule != nullptr && strcmp(pin.path, "/dev/tty") == 0 && !has_controlling_terminal(view.pid)) {
    out->result = -ENXIO;  // what the open answers without a controlling terminal, policy aside
    return;
  }
  if (rule != nullptr) {
    refuse(out, rule, pin);
    return;
  }
  out->result = perform_open(call, pin, task_umask(view.pid));
  out->inject = out->result >= 0 ? static_cast<int>(out->result) : -1;
  out->cloexec = (call.flags & O_CLOEXEC) != 0;
}

// Performs a one-name call on the pinned target: 0, or -1 with errno set.
int perform_name_call(const RuledCall& call, const Pinned& pin, int pid) {
  const mode_t mode = static_cast<mode_t>(call.mode) & 07777 & ~task_umask(pid);
  const char* name = pin.plain ? pin.last : ".";
  int rc = -1;
  switch (call.op) {
    case RuledOp::kMkdir:
      rc = pin.plain ? mkdirat(pin.parent, name, mode) : (errno = EEXIST, -1);
      break;
    case RuledOp::kMknod: {
      // Device nodes need CAP_MKNOD, which the command never holds: EPERM, the kernel's answer.
      const mode_t type = static_cast<mode_t>(call.mode) & S_IFMT;
      const bool plain_node = type == 0 || type == S_IFREG || type == S_IFIFO || type == S_IFSOCK;
      rc = !plain_node ? (errno = EPERM, -1)
                       : mknodat(pin.parent, name, (static_cast<mode_t>(call.mode) & S_IFMT) | mode,
                                 static_cast<dev_t>(call.extra));
      break;
    }
    case RuledOp::kUnlink:
      rc = pin.plain ? unlinkat(pin.parent, name, static_cast<int>(call.flags))
                     : (errno = (call.flags != 0 ? EINVAL : EISDIR), -1);
      break;
    case RuledOp::kSymlink: {
      char target[kPathMax];
      rc = !read_string(pid, call.extra, target, sizeof(target)) ? (errno = EFAULT, -1)
           : pin.plain ? symlinkat(target, pin.parent, name)
                       : (errno = EEXIST, -1);
      break;
    }
    case RuledOp::kTruncate: {
      char proc[64];
      const int object =
          pin.parent >= 0 ? openat(pin.parent, name, O_PATH | O_NOFOLLOW | O_CLOEXEC) : -1;
      snprintf(proc, sizeof(proc), "/proc/self/fd/%d", object >= 0 ? object : pin.object);
      rc = object < 0 && pin.parent >= 0 ? -1 : truncate(proc, static_cast<off_t>(call.extra));
      if (object >= 0) {
        const int saved = errno;
        close(object);
        errno = saved;
      }
      break;
    }
    default:
      errno = ENOSYS;
      break;
  }
  return rc;
}

// A call on one name (mkdir, mknod, unlink, rmdir, symlink, truncate), performed on the pinned
// target when the rules allow it.
void ruled_name_call(const SupervisorConfig& config, const RuledCall& call, TaskView& view,
                     const char* spelled, RuledOutcome* out) {
  const bool truncating = call.op == RuledOp::kTruncate;
  Pinned pin;
  if (const int error = pin_path(view, spelled, truncating, &pin); error != 0) {
    out->result = -error;
    return;
  }
  if (pin.parent < 0 && !truncating) {
    out->result = -EEXIST;  // /proc/PID/fd/N names an object: the name is taken
    return;
  }
  // The kernel's lookup answers before any permission check: a name taken, or none to remove.
  mode_t existing = 0;
  const bool exists = pin.plain && entry_exists(pin.parent, pin.last, &existing);
  if (exists && call.op != RuledOp::kUnlink && !truncating) {
    out->result = -EEXIST;
    return;
  }
  if (!exists && pin.plain && (call.op == RuledOp::kUnlink || truncating)) {
    out->result = -ENOENT;
    return;
  }
  const Change change = call.op == RuledOp::kUnlink ? Change::kRemove
                        : truncating                ? Change::kWrite
                                                    : Change::kCreate;
  bool copy_only = false;
  // A new link leads elsewhere: judged as a directory moved in would be.
  if (const char* rule =
          ruled_refusal(config, pin, change, call.op == RuledOp::kSymlink, &copy_only)) {
    refuse(out, rule, pin);
    return;
  }
  out->result = perform_name_call(call, pin, view.pid) == 0 ? 0 : -errno;
}

bool pinned_directory(const Pinned& pin) {
  mode_t mode = 0;
  return pin.parent >= 0 && pin.plain && entry_exists(pin.parent, pin.last, &mode) && S_ISDIR(mode);
}

// A directory or a symbolic link: what a rename carries in besides its own name.
bool pinned_carrier(const Pinned& pin) {
  mode_t mode = 0;
  return pin.parent >= 0 && pin.plain && entry_exists(pin.parent, pin.last, &mode) &&
         (S_ISDIR(mode) || S_ISLNK(mode));
}

// A directory about to be named .git must hold what a fresh git directory holds
// (vet_new_git_directory): renaming one that holds a hook would make a repository of it.
int vet_moved_git_directory(const Pinned& source, const Pinned& target) {
  if (!target.plain || strcmp(target.last, ".git") != 0 || !pinned_directory(source)) return 0;
  const int directory =
      openat(source.parent, source.last, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (directory < 0) return errno;
  // One that is a git directory already has been held to the rules all along.
  const int verdict = is_git_directory(directory) ? 0 : vet_new_git_directory(directory);
  close(directory);
  return verdict;
}

// Performs a rename or link on the pinned pair: 0 or -errno.
long perform_pair_call(const RuledCall& call, const Pinned& source, const Pinned& target) {
  if (!source.plain && source.parent >= 0) return -EBUSY;
  long rc = 0;
  if (call.op == RuledOp::kLink) {
    char proc[64];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", source.object);
    rc = source.parent >= 0 ? linkat(source.parent, source.last, target.parent, target.last, 0)
                            : linkat(AT_FDCWD, proc, target.parent, target.last, AT_SYMLINK_FOLLOW);
  } else {
    rc = syscall(SYS_renameat2, source.parent, source.last, target.parent, target.last,
                 static_cast<unsigned>(call.flags));
  }
  return rc == 0 ? 0 : -errno;
}

// Pins a rename's or link's two paths (a link's source may be its dirfd's object, AT_EMPTY_PATH).
// 0 or the errno.
int pin_pair(const RuledCall& call, TaskView& target_view, const char* target_text,
             TaskView& source_view, const char* source_text, Pinned* source, Pinned* target) {
  constexpr uint64_t kAtSymlinkFollow = 0x400;
  constexpr uint64_t kAtEmptyPath = 0x1000;
  const bool link = call.op == RuledOp::kLink;
  int error = 0;
  char named[kPathMax];
  if (link && source_text[0] == '\0' && (call.flags & kAtEmptyPath) != 0) {
    // The descriptor's file: judged by its name when it has one (a second name for a protected
    // file would write it), else (O_TMPFILE, deleted) linked as the object itself.
    if (source_view.start >= 0 &&
        fd_name(source_view.start, named, sizeof(named)) == Resolution::kNamed) {
      error = pin_path(source_view, named, false, source);
    } else {
      source->object = source_view.start >= 0 ? fcntl(source_view.start, F_DUPFD_CLOEXEC, 0) : -1;
      error = source->object < 0 ? EBADF : 0;
    }
  } else {
    error =
        pin_path(source_view, source_text, link && (call.flags & kAtSymlinkFollow) != 0, source);
  }
  return error == 0 ? pin_path(target_view, target_text, false, target) : error;
}

// rename and link: the old path is judged as removed (rename) or as a new way to write its file
// (link: a second name for a protected file would write it), the new one as created, carrying the
// old object's contents when it is a directory. RENAME_EXCHANGE creates on both sides.
void ruled_pair_call(const SupervisorConfig& config, const RuledCall& call, TaskView& target_view,
                     const char* target_text, TaskView& source_view, const char* source_text,
                     RuledOutcome* out) {
  constexpr uint64_t kRenameExchange = 2;
  const bool link = call.op == RuledOp::kLink;
  Pinned source;
  Pinned target;
  if (const int error =
          pin_pair(call, target_view, target_text, source_view, source_text, &source, &target);
      error != 0) {
    out->result = -error;
    return;
  }
  mode_t existing = 0;
  if (source.parent >= 0 && source.plain && !entry_exists(source.parent, source.last, &existing)) {
    out->result = -ENOENT;  // the kernel's lookup answers before any permission check
    return;
  }
  if (link && target.plain && entry_exists(target.parent, target.last, &existing)) {
    out->result = -EEXIST;
    return;
  }
  const bool exchange = !link && (call.flags & kRenameExchange) != 0;
  const bool source_dir = !link && pinned_carrier(source);
  bool copy_only = false;
  bool ignored = false;
  const Change source_change = link ? Change::kWrite : exchange ? Change::kCreate : Change::kRemove;
  if (const char* rule = ruled_refusal(config, source, source_change,
                                       exchange && pinned_carrier(target), &ignored)) {
    refuse(out, rule, source);
    return;
  }
  if (const char* rule = ruled_refusal(config, target, Change::kCreate, source_dir, &copy_only)) {
    mode_t mode = 0;
    const bool regular = !link && !exchange && source.parent >= 0 &&
                         entry_exists(source.parent, source.last, &mode) && S_ISREG(mode);
    if (!copy_only || !regular) {
      refuse(out, rule, target);
      return;
    }
    // git's config.lock -> config: the new text is checked, and a copy of it put in place.
    const int verdict = commit_config(source.parent, source.last, target.parent, target.last);
    if (verdict == EACCES) refuse(out, rule, target);
    out->result = -verdict;
    return;
  }
  if (const int verdict = vet_moved_git_directory(source, target) |
                          (exchange ? vet_moved_git_directory(target, source) : 0)) {
    refuse(out, "deny-write", target);
    out->result = -verdict;
    return;
  }
  out->result = perform_pair_call(call, source, target);
}

// Answers a ruled call: its result, an open's injected descriptor, or the rule's refusal.
void answer_ruled(int listener, Recorder& recorder, const seccomp_notif& notif,
                  const RuledCall& call, RuledOutcome& out) {
  if (out.inject >= 0) {
    seccomp_notif_addfd addfd{};
    addfd.id = notif.id;
    addfd.flags = SECCOMP_ADDFD_FLAG_SEND;
    addfd.srcfd = static_cast<uint32_t>(out.inject);
    addfd.newfd_flags = out.cloexec ? O_CLOEXEC : 0;
    const long sent = notif_ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
    const int error = errno;
    close(out.inject);
    // The task is gone (ENOENT), or cannot take another descriptor (EMFILE): told so.
    if (sent < 0 && error != ENOENT && error != EINPROGRESS) {
      respond(listener, notif.id, error, false);
    }
    return;
  }
  respond(listener, notif.id, static_cast<int>(-out.result), false);
  if (out.rule != nullptr)
    recorder.record(call.word, out.rule, static_cast<int>(notif.pid), out.path);
}

// --rule-writes: decides and performs a write-class call. False when the call is none of the
// ruled ones (an O_PATH open, bind): the plain write-intent handling applies.
bool handle_ruled_write(int listener, const SupervisorConfig& config, Recorder& recorder,
                        const seccomp_notif& notif) {
  RuledCall call;
  if (!config.rule_writes || !ruled_call(notif, &call)) return false;
  const int pid = static_cast<int>(notif.pid);
  const unsigned long long* args = notif.data.args;
  static bool umask_cleared = false;  // modes are applied with the task's own mask
  if (!umask_cleared) umask(0);
  umask_cleared = true;
  char target[kPathMax];
  char source[kPathMax] = "";
  TaskView target_view;
  TaskView source_view;
  RuledOutcome out;
  const bool have_target =
      capture(pid, args, call.target, false, target, &target_view, read_root());
  const bool have_source = call.source.path_arg < 0 || capture(pid, args, call.source, false,
                                                               source, &source_view, read_root());
  // What was read belongs to this call only while it is pending; nothing is done otherwise.
  if (!have_target || !have_source) {
    out.result = -EFAULT;
  } else if (!still_valid(listener, notif.id)) {
    return true;
  } else if (call.op == RuledOp::kOpen) {
    ruled_open_call(config, call, target_view, target, &out);
  } else if (call.op == RuledOp::kRename || call.op == RuledOp::kLink) {
    ruled_pair_call(config, call, target_view, target, source_view, source, &out);
  } else {
    ruled_name_call(config, call, target_view, target, &out);
  }
  answer_ruled(listener, recorder, notif, call, out);
  return true;
}

bool is_metadata_rule(const SyscallRule& rule) {
  for (const SyscallRule& r : kMetadataRules) {
    if (&r == &rule) return true;
  }
  return false;
}

bool is_read_intent(const SyscallRule& rule) {
  for (const SyscallRule& r : kReadIntentRules) {
    if (&r == &rule) return true;
  }
  return false;
}

void handle(int listener, const SupervisorConfig& config, Recorder& recorder,
            const seccomp_notif& notif) {
  const unsigned long long* args = notif.data.args;
  const SyscallRule* rule = matching_rule(config.filter, notif.data.nr, args);
  if (rule == nullptr) {  // not ours (never happens): let the kernel decide, as unfiltered
    respond(listener, notif.id, 0, true);
    return;
  }
  if (config.unix_guard != nullptr && is_unix_guard_rule(*rule)) {
    UnixVerdict verdict;
    if (handle_unix_call(listener, *config.unix_guard, notif, !config.filter.notify, &verdict)) {
      if (verdict.record) {
        recorder.record(verdict.op, "network-denied", static_cast<int>(notif.pid), verdict.path);
      }
      return;
    }
  }
  if (config.unix_guard != nullptr && notif.data.nr == __NR_bind) {
    note_unix_bind(*config.unix_guard, notif);  // the bind itself is a write-intent call
  }
  if (is_read_intent(*rule)) {
    handle_read(listener, config, recorder, notif);
    return;
  }
  if (config.filter.contain_metadata && !config.filter.deny_metadata && is_metadata_rule(*rule)) {
    handle_metadata(listener, config, recorder, notif, *rule);
    return;
  }
  if (rule->err == 0) {
    if (!handle_ruled_write(listener, config, recorder, notif)) {
      handle_write(listener, config, recorder, notif);
    }
    return;
  }
  // Refused whatever the path: described while pending, answered, then recorded.
  const int pid = static_cast<int>(notif.pid);
  const RefusedCall call = refused_call(*rule, args);
  char path[kPathMax];
  describe_refused(pid, *rule, call, args, path, sizeof(path));
  const bool valid = still_valid(listener, notif.id);
  respond(listener, notif.id, rule->err, false);
  if (valid) recorder.record(call.op, refused_rule(*rule), pid, path);
}

}  // namespace

bool path_beneath(const char* path, const char* root) {
  const size_t length = strlen(root);
  if (length == 1 && root[0] == '/') return path[0] == '/';
  return strncmp(path, root, length) == 0 && (path[length] == '\0' || path[length] == '/');
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
