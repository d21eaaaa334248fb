// SPDX-License-Identifier: Apache-2.0
#include "unix_connect.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "denial_record.h"
#include "seccomp_rules.h"

#ifndef SYS_pidfd_open  // Linux 5.3
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd  // Linux 5.6
#define SYS_pidfd_getfd 438
#endif

namespace landlock_run {
namespace {

constexpr unsigned kPidfdThread = O_EXCL;  // PIDFD_THREAD (Linux 6.9): a thread's id, not a leader
constexpr int kSockTypeMask = 0xf;
constexpr size_t kSunPathOffset = offsetof(sockaddr_un, sun_path);

// openat2 (Linux 5.6): struct open_how and the RESOLVE_* flags used below (linux/openat2.h,
// which Debian 12's musl build does not see).
struct OpenHow {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};
constexpr uint64_t kResolveNoMagiclinks = 0x02;
constexpr uint64_t kResolveInRoot = 0x10;
#ifndef __NR_openat2
#define __NR_openat2 437
#endif

// musl declares ioctl() with an int request, which the seccomp requests overflow: the raw call.
long notif_ioctl(int fd, unsigned long request, void* arg) {
  return syscall(SYS_ioctl, fd, request, arg);
}

void answer(int listener, uint64_t id, int error) {
  seccomp_notif_resp resp{};
  resp.id = id;
  resp.error = -error;
  while (notif_ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) != 0 && errno == EINTR) {
  }
}

void let_through(int listener, uint64_t id) {
  seccomp_notif_resp resp{};
  resp.id = id;
  resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  while (notif_ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) != 0 && errno == EINTR) {
  }
}

bool pending(int listener, uint64_t id) {
  uint64_t value = id;
  return notif_ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &value) == 0;
}

bool copy_from(int pid, uint64_t address, void* out, size_t size) {
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(static_cast<uintptr_t>(address)), size};
  return syscall(SYS_process_vm_readv, pid, &local, 1UL, &remote, 1UL, 0UL) ==
         static_cast<long>(size);
}

// The thread-group id of task `tid`, from /proc/TID/status (pidfd_open before Linux 6.9 takes
// only a leader's id, and a notification names the calling thread).
int thread_group(int tid) {
  char proc[64];
  snprintf(proc, sizeof(proc), "/proc/%d/status", tid);
  const int fd = open(proc, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char text[2048];
  const ssize_t n = read(fd, text, sizeof(text) - 1);
  close(fd);
  if (n <= 0) return -1;
  text[n] = '\0';
  const char* line = strstr(text, "\nTgid:");
  return line != nullptr ? atoi(line + 6) : -1;
}

// The task's descriptor `fd`, duplicated into the supervisor (pidfd_getfd: the same open file,
// close-on-exec here). Returns it or -errno.
int task_fd(int pid, uint64_t fd) {
  long pidfd = syscall(SYS_pidfd_open, pid, kPidfdThread);
  if (pidfd < 0 && errno == EINVAL) pidfd = syscall(SYS_pidfd_open, thread_group(pid), 0U);
  if (pidfd < 0) return -errno;
  const long got = syscall(SYS_pidfd_getfd, static_cast<int>(pidfd), static_cast<int>(fd), 0U);
  const int error = errno;
  close(static_cast<int>(pidfd));
  return got >= 0 ? static_cast<int>(got) : -error;
}

int socket_domain(int fd) {
  int domain = -1;
  socklen_t size = sizeof(domain);
  return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &size) == 0 ? domain : -1;
}

// What sock_diag (Linux 3.3) says of the socket with inode `ino`: the name it is bound to and,
// for a pathname, the identity of its node.
struct BoundName {
  uint32_t vfs_dev = 0;  // the kernel's dev_t (MAJOR << 20 | MINOR), not stat's encoding
  uint32_t vfs_ino = 0;
  bool has_vfs = false;
  size_t name_length = 0;
  char name[sizeof(sockaddr_un::sun_path)] = {};
};

// 0, -ENOENT when no such socket exists any more, or another -errno.
int query_bound(int diag, uint64_t ino, BoundName* out) {
  struct {
    nlmsghdr header;
    unix_diag_req request;
  } message{};
  message.header.nlmsg_len = sizeof(message);
  message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  message.header.nlmsg_flags = NLM_F_REQUEST;
  message.request.sdiag_family = AF_UNIX;
  message.request.udiag_states = ~0U;
  message.request.udiag_ino = static_cast<uint32_t>(ino);
  message.request.udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_VFS;
  message.request.udiag_cookie[0] = ~0U;  // INET_DIAG_NOCOOKIE: any socket with that inode
  message.request.udiag_cookie[1] = ~0U;
  if (send(diag, &message, sizeof(message), 0) != static_cast<ssize_t>(sizeof(message))) {
    return -errno;
  }
  alignas(nlmsghdr) unsigned char buffer[4096];
  const ssize_t n = recv(diag, buffer, sizeof(buffer), 0);
  if (n < static_cast<ssize_t>(sizeof(nlmsghdr))) return n < 0 ? -errno : -EIO;
  nlmsghdr header;
  memcpy(&header, buffer, sizeof(header));
  const size_t total =
      header.nlmsg_len < static_cast<size_t>(n) ? header.nlmsg_len : static_cast<size_t>(n);
  const size_t body = NLMSG_ALIGN(sizeof(nlmsghdr));  // netlink aligns every part to 4 bytes
  if (header.nlmsg_type == NLMSG_ERROR && total >= body + sizeof(nlmsgerr)) {
    nlmsgerr error;
    memcpy(&error, buffer + body, sizeof(error));
    return error.error < 0 ? error.error : -EIO;
  }
  if (header.nlmsg_type != SOCK_DIAG_BY_FAMILY || total < body + sizeof(unix_diag_msg)) return -EIO;
  unix_diag_msg found;
  memcpy(&found, buffer + body, sizeof(found));
  if (found.udiag_ino != static_cast<uint32_t>(ino)) return -EIO;
  // The attributes: struct rtattr {u16 len; u16 type;} then the payload, each 4-byte aligned.
  for (size_t at = body + NLMSG_ALIGN(sizeof(found)); at + 4 <= total;) {
    uint16_t length = 0;
    uint16_t type = 0;
    memcpy(&length, buffer + at, sizeof(length));
    memcpy(&type, buffer + at + 2, sizeof(type));
    if (length < 4 || at + length > total) break;
    const size_t payload = length - 4U;
    const unsigned char* data = buffer + at + 4;
    if (type == UNIX_DIAG_NAME && payload <= sizeof(out->name)) {
      memcpy(out->name, data, payload);
      out->name_length = payload;
    } else if (type == UNIX_DIAG_VFS && payload >= sizeof(unix_diag_vfs)) {
      unix_diag_vfs vfs;
      memcpy(&vfs, data, sizeof(vfs));
      out->vfs_dev = vfs.udiag_vfs_dev;
      out->vfs_ino = vfs.udiag_vfs_ino;
      out->has_vfs = true;
    }
    at += (length + 3U) & ~3U;
  }
  return 0;
}

// What a connect names, to match against the sockets the run bound.
struct Wanted {
  const struct stat* node = nullptr;  // a pathname: its node
  const char* name = nullptr;         // an abstract name: sun_path's bytes
  size_t name_length = 0;
};

bool matches(const BoundName& bound, const Wanted& wanted) {
  if (wanted.node == nullptr && wanted.name == nullptr) return false;  // pruning only
  if (wanted.node != nullptr) {
    // sock_diag reports the superblock's dev_t as the kernel keeps it (20 bits of minor).
    return bound.has_vfs && bound.vfs_ino == wanted.node->st_ino &&
           (bound.vfs_dev >> 20) == major(wanted.node->st_dev) &&
           (bound.vfs_dev & 0xfffff) == minor(wanted.node->st_dev);
  }
  return !bound.has_vfs && bound.name_length == wanted.name_length &&
         memcmp(bound.name, wanted.name, wanted.name_length) == 0;
}

// Whether a socket the run bound (and still open) holds what `wanted` names. Sockets that are
// gone are forgotten on the way.
bool bound_by_run(UnixGuard& guard, const Wanted& wanted) {
  const int diag = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (diag < 0) return false;
  bool found = false;
  for (size_t i = 0; i < guard.bound_count && !found;) {
    BoundName bound;
    const int rc = query_bound(diag, guard.bound[i], &bound);
    if (rc == -ENOENT) {
      guard.bound[i] = guard.bound[--guard.bound_count];
      guard.bound_next = guard.bound_count;
      continue;
    }
    found = rc == 0 && matches(bound, wanted);
    ++i;
  }
  close(diag);
  return found;
}

bool allowed_node(const UnixGuard& guard, const struct stat& node) {
  for (size_t i = 0; i < guard.allowed_count; ++i) {
    if (guard.allowed[i].dev == node.st_dev && guard.allowed[i].ino == node.st_ino) return true;
  }
  return false;
}

// The socket node a pathname names for the task, opened O_PATH by the supervisor: from the
// task's root for an absolute path (RESOLVE_IN_ROOT: "/" and ".." stop there, as for the task),
// from its cwd for a relative one, every symbolic link followed as connect(2) follows them. A
// procfs magic link (/proc/self/fd/N) is not followed: it would name the supervisor's objects.
// Returns the descriptor or -errno.
int open_socket_node(int pid, const char* path) {
  const bool absolute = path[0] == '/';
  char proc[64];
  snprintf(proc, sizeof(proc), "/proc/%d/%s", pid, absolute ? "root" : "cwd");
  const int from = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (from < 0) return errno == ENOENT ? -ESRCH : -EPERM;
  OpenHow how{O_PATH | O_CLOEXEC, 0, kResolveNoMagiclinks | (absolute ? kResolveInRoot : 0)};
  const long fd = syscall(__NR_openat2, from, path, &how, sizeof(how));
  const int error = errno;
  close(from);
  return fd >= 0 ? static_cast<int>(fd) : -error;
}

// connect(2) of `socket_fd` to the node held by `node`, through its /proc/self/fd link: the
// kernel looks that link up to this very inode, whatever the path names by now.
int connect_node(int socket_fd, int node) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  snprintf(address.sun_path, sizeof(address.sun_path), "/proc/self/fd/%d", node);
  const socklen_t length = static_cast<socklen_t>(kSunPathOffset + strlen(address.sun_path) + 1);
  return connect(socket_fd, reinterpret_cast<const sockaddr*>(&address), length) == 0 ? 0 : -errno;
}

int connect_as_given(int socket_fd, const sockaddr_storage& address, size_t length) {
  return connect(socket_fd, reinterpret_cast<const sockaddr*>(&address),
                 static_cast<socklen_t>(length)) == 0
             ? 0
             : -errno;
}

// A pathname connect: to a socket the run bound or one allowed, performed on the pinned node;
// any other refused and recorded.
int connect_pathname(UnixGuard& guard, int pid, int socket_fd, const sockaddr_storage& address,
                     size_t length, UnixVerdict* verdict) {
  char path[sizeof(sockaddr_un::sun_path) + 1] = {};
  memcpy(path, reinterpret_cast<const char*>(&address) + kSunPathOffset, length - kSunPathOffset);
  const int node = open_socket_node(pid, path);
  if (node == -ELOOP || node == -EXDEV || node == -EPERM) {
    verdict->record = true;
    snprintf(verdict->path, sizeof(verdict->path), "%s", kUnknownPath);
    return -ECONNREFUSED;
  }
  if (node < 0) return node;  // the kernel's own answer for that lookup (ENOENT, ENOTDIR, ...)
  struct stat st;
  int result = -ECONNREFUSED;  // also the kernel's answer for a file that is not a socket
  if (fstat(node, &st) == 0 && S_ISSOCK(st.st_mode)) {
    const Wanted wanted{&st};
    if (allowed_node(guard, st) || bound_by_run(guard, wanted)) {
      result = connect_node(socket_fd, node);
    } else {
      char self[64];
      snprintf(self, sizeof(self), "/proc/self/fd/%d", node);
      const ssize_t n = readlink(self, verdict->path, sizeof(verdict->path) - 1);
      verdict->path[n > 0 ? n : 0] = '\0';
      if (n <= 0 || verdict->path[0] != '/') {
        snprintf(verdict->path, sizeof(verdict->path), "%s", kUnknownPath);
      }
      verdict->record = true;
    }
  }
  close(node);
  return result;
}

int connect_unix(UnixGuard& guard, int pid, int socket_fd, const sockaddr_storage& address,
                 size_t length, UnixVerdict* verdict) {
  const bool named = length > kSunPathOffset && address.ss_family == AF_UNIX;
  const char* sun_path = reinterpret_cast<const char*>(&address) + kSunPathOffset;
  if (named && sun_path[0] != '\0') {
    return connect_pathname(guard, pid, socket_fd, address, length, verdict);
  }
  if (named) {
    // An abstract name: only a socket of the run's own (Landlock's scoping, ABI 6, refuses the
    // others with EPERM; a network namespace of the run's own holds no other).
    const Wanted wanted{nullptr, sun_path, length - kSunPathOffset};
    if (!bound_by_run(guard, wanted)) return -EPERM;
  }
  // An unnamed address or another family: the kernel's own answer (EINVAL, or AF_UNSPEC's
  // disconnect of a datagram socket).
  return connect_as_given(socket_fd, address, length);
}

// An AF_INET or AF_INET6 socket: Landlock's TCP rule (ABI 4) applies to the calling task, which
// is the supervisor now, so the rule is the supervisor's: the allow-list's bridge port only.
int connect_inet(const UnixGuard& guard, int socket_fd, const sockaddr_storage& address,
                 size_t length) {
  if (length >= sizeof(sa_family_t) && address.ss_family == AF_UNSPEC) {
    return connect_as_given(socket_fd, address, length);
  }
  uint16_t port = 0;
  if (address.ss_family == AF_INET && length >= sizeof(sockaddr_in)) {
    port = ntohs(reinterpret_cast<const sockaddr_in*>(&address)->sin_port);
  } else if (address.ss_family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
    port = ntohs(reinterpret_cast<const sockaddr_in6*>(&address)->sin6_port);
  } else {
    return connect_as_given(socket_fd, address, length);  // the kernel's EINVAL/EAFNOSUPPORT
  }
  if (guard.allow_connect_port <= 0 || port != guard.allow_connect_port) return -EACCES;
  return connect_as_given(socket_fd, address, length);
}

void handle_connect(int listener, UnixGuard& guard, const seccomp_notif& notif,
                    UnixVerdict* verdict) {
  const int pid = static_cast<int>(notif.pid);
  const unsigned long long* args = notif.data.args;
  const size_t length = static_cast<uint32_t>(args[2]);
  sockaddr_storage address{};
  // The kernel's own checks on the address come first: too long, or unreadable.
  int result = 0;
  if (length > sizeof(address)) result = -EINVAL;
  if (result == 0 && length > 0 && !copy_from(pid, args[1], &address, length)) result = -EFAULT;
  const int socket_fd = result == 0 ? task_fd(pid, args[0]) : -1;
  if (result == 0 && socket_fd < 0) result = socket_fd == -EBADF ? -EBADF : -ECONNREFUSED;
  // What was read belongs to this call only while it is pending.
  if (!pending(listener, notif.id)) {
    if (socket_fd >= 0) close(socket_fd);
    return;
  }
  if (result == 0) {
    const int domain = socket_domain(socket_fd);
    if (domain < 0) {
      result = -ENOTSOCK;
    } else if (domain == AF_UNIX) {
      result = connect_unix(guard, pid, socket_fd, address, length, verdict);
    } else if (domain == AF_INET || domain == AF_INET6) {
      result = connect_inet(guard, socket_fd, address, length);
    } else {
      result = connect_as_given(socket_fd, address, length);
    }
  }
  if (socket_fd >= 0) close(socket_fd);
  answer(listener, notif.id, -result);
}

// socket(2) and socketpair(2) of AF_UNIX: a datagram socket is refused, any other let through.
void handle_socket(int listener, const seccomp_notif& notif, UnixVerdict* verdict) {
  const unsigned long long* args = notif.data.args;
  const bool datagram = static_cast<int>(args[1] & kSockTypeMask) == SOCK_DGRAM;
  if (!datagram) {
    let_through(listener, notif.id);
    return;
  }
  answer(listener, notif.id, EAFNOSUPPORT);
  verdict->record = true;
  verdict->op = "socket";
  snprintf(verdict->path, sizeof(verdict->path), "af-unix-dgram");
}

}  // namespace

bool is_unix_guard_rule(const SyscallRule& rule) {
  for (const SyscallRule& r : kUnixGuardRules) {
    if (&r == &rule) return true;
  }
  for (const SyscallRule& r : kUnixBindRules) {
    if (&r == &rule) return true;
  }
  return false;
}

void note_unix_bind(UnixGuard& guard, const seccomp_notif& notif) {
  const int fd = task_fd(static_cast<int>(notif.pid), notif.data.args[0]);
  if (fd < 0) return;
  struct stat st;
  const bool unix_socket = socket_domain(fd) == AF_UNIX && fstat(fd, &st) == 0;
  close(fd);
  if (!unix_socket) return;
  for (size_t i = 0; i < guard.bound_count; ++i) {
    if (guard.bound[i] == st.st_ino) return;
  }
  if (guard.bound_count == kMaxBoundSockets) {
    bound_by_run(guard, Wanted{});  // forgets the sockets that are gone
  }
  if (guard.bound_count < kMaxBoundSockets) {
    guard.bound[guard.bound_count++] = st.st_ino;
    return;
  }
  guard.bound[guard.bound_next] = st.st_ino;
  guard.bound_next = (guard.bound_next + 1) % kMaxBoundSockets;
}

bool handle_unix_call(int listener, UnixGuard& guard, const seccomp_notif& notif, bool answer_bind,
                      UnixVerdict* verdict) {
  switch (notif.data.nr) {
    case __NR_connect:
      handle_connect(listener, guard, notif, verdict);
      return true;
    case __NR_socket:
    case __NR_socketpair:
      handle_socket(listener, notif, verdict);
      return true;
    case __NR_bind:
      if (!answer_bind) return false;
      note_unix_bind(guard, notif);
      let_through(listener, notif.id);
      return true;
    default:
      return false;
  }
}

}  // namespace landlock_run
