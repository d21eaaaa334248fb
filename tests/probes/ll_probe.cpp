// SPDX-License-Identifier: Apache-2.0
// ll_probe: the sandboxee the landlock-run integration tests run confined. Each operation makes
// one attempt and reports it (exit 0 = the syscall succeeded; exit 1 + "errno=N" on stdout = it
// failed). The tests never trust that report for a denial: they check the world from outside.
//   ll_probe hold                      print "ready", then block until stdin reaches EOF
//   ll_probe write PATH                create/truncate PATH and write "pwned"
//   ll_probe truncate PATH             truncate(2) PATH to 0 bytes
//   ll_probe link SRC DST | rename SRC DST
//   ll_probe tcp4 PORT | tcp6 PORT | udp4 PORT | netlink PORTID | uring_tcp4 PORT
//   ll_probe connect_fd FD PORT        connect an inherited IPv4 socket to 127.0.0.1:PORT
//   ll_probe unixpair | unix_connect PATH | abstract NAME | kill PID
//   ll_probe tiocsti FD TEXT [high]    push TEXT into the tty on FD (high: set cmd bits 32-63)
//   ll_probe tioclinux FD
//   ll_probe fchmodat2 PATH | fchmod PATH | setxattr PATH | setxattrat PATH | fsetxattr PATH
//   ll_probe mount DIR                 mount a tmpfs on DIR
//   ll_probe i386 | x32                a getpid through a foreign syscall ABI
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

int report(long rc) {
  if (rc >= 0) return 0;
  std::printf("errno=%d\n", errno);
  return 1;
}

int hold() {
  std::printf("ready\n");
  std::fflush(stdout);
  char buffer[64];
  while (read(STDIN_FILENO, buffer, sizeof(buffer)) > 0) {
  }
  return 0;
}

int write_pwned(const char* path) {
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return report(fd);
  return report(write(fd, "pwned", 5));
}

sockaddr_in loopback4(const char* port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(std::atoi(port)));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

int connect_fd(int fd, const sockaddr* addr, socklen_t size) {
  return report(connect(fd, addr, size));
}

int tcp4(const char* port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return report(fd);
  const sockaddr_in addr = loopback4(port);
  return connect_fd(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
}

int tcp6(const char* port) {
  const int fd = socket(AF_INET6, SOCK_STREAM, 0);
  if (fd < 0) return report(fd);
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_port = htons(static_cast<std::uint16_t>(std::atoi(port)));
  addr.sin6_addr = in6addr_loopback;
  return connect_fd(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
}

int udp4(const char* port) {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) return report(fd);
  const sockaddr_in addr = loopback4(port);
  return report(sendto(fd, "x", 1, 0, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)));
}

int netlink(const char* port_id) {
  const int fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_USERSOCK);
  if (fd < 0) return report(fd);
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  addr.nl_pid = static_cast<std::uint32_t>(std::strtoul(port_id, nullptr, 10));
  struct {
    nlmsghdr header;
    char payload[8];
  } message{};
  message.header.nlmsg_len = sizeof(message);
  std::memcpy(message.payload, "pwned", 5);
  return report(sendto(fd, &message, sizeof(message), 0, reinterpret_cast<const sockaddr*>(&addr),
                       sizeof(addr)));
}

// io_uring with one SQE at a time: creates the socket and connects it without ever calling
// socket() or connect(), the bypass --deny-network's io_uring rule exists for.
struct Ring {
  int fd = -1;
  char* sq = nullptr;
  char* cq = nullptr;
  io_uring_sqe* sqes = nullptr;
  io_uring_params params{};
};

bool set_up_ring(Ring* ring) {
  ring->fd = static_cast<int>(syscall(__NR_io_uring_setup, 1, &ring->params));
  if (ring->fd < 0) return false;
  const io_uring_params& p = ring->params;
  const std::size_t sq_size = p.sq_off.array + p.sq_entries * sizeof(unsigned);
  const std::size_t cq_size = p.cq_off.cqes + p.cq_entries * sizeof(io_uring_cqe);
  ring->sq = static_cast<char*>(
      mmap(nullptr, sq_size, PROT_READ | PROT_WRITE, MAP_SHARED, ring->fd, IORING_OFF_SQ_RING));
  ring->cq = static_cast<char*>(
      mmap(nullptr, cq_size, PROT_READ | PROT_WRITE, MAP_SHARED, ring->fd, IORING_OFF_CQ_RING));
  ring->sqes = static_cast<io_uring_sqe*>(mmap(nullptr, p.sq_entries * sizeof(io_uring_sqe),
                                               PROT_READ | PROT_WRITE, MAP_SHARED, ring->fd,
                                               IORING_OFF_SQES));
  return ring->sq != MAP_FAILED && ring->cq != MAP_FAILED && ring->sqes != MAP_FAILED;
}

// Submits `sqe` and waits for its completion; returns the completion's result.
int submit(Ring* ring, const io_uring_sqe& sqe) {
  const io_uring_params& p = ring->params;
  auto* tail = reinterpret_cast<unsigned*>(ring->sq + p.sq_off.tail);
  auto* array = reinterpret_cast<unsigned*>(ring->sq + p.sq_off.array);
  const unsigned index = *tail & *reinterpret_cast<unsigned*>(ring->sq + p.sq_off.ring_mask);
  ring->sqes[index] = sqe;
  array[index] = index;
  __atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
  if (syscall(__NR_io_uring_enter, ring->fd, 1, 1, IORING_ENTER_GETEVENTS, nullptr, 0) < 0) {
    return -errno;
  }
  auto* head = reinterpret_cast<unsigned*>(ring->cq + p.cq_off.head);
  const unsigned mask = *reinterpret_cast<unsigned*>(ring->cq + p.cq_off.ring_mask);
  auto* cqes = reinterpret_cast<io_uring_cqe*>(ring->cq + p.cq_off.cqes);
  const int result = cqes[*head & mask].res;
  __atomic_store_n(head, *head + 1, __ATOMIC_RELEASE);
  return result;
}

int uring_tcp4(const char* port) {
  Ring ring;
  if (!set_up_ring(&ring)) return report(-1);
  io_uring_sqe sqe{};
  sqe.opcode = IORING_OP_SOCKET;
  sqe.fd = AF_INET;
  sqe.off = SOCK_STREAM;
  const int fd = submit(&ring, sqe);
  if (fd < 0) {
    errno = -fd;
    return report(-1);
  }
  static sockaddr_in addr = loopback4(port);
  sqe = io_uring_sqe{};
  sqe.opcode = IORING_OP_CONNECT;
  sqe.fd = fd;
  sqe.addr = reinterpret_cast<std::uintptr_t>(&addr);
  sqe.off = sizeof(addr);
  const int rc = submit(&ring, sqe);
  if (rc < 0) errno = -rc;
  return report(rc);
}

int unix_pair() {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return report(-1);
  char byte = 0;
  if (write(fds[0], "u", 1) != 1 || read(fds[1], &byte, 1) != 1 || byte != 'u') return report(-1);
  return 0;
}

int unix_connect(const char* name, bool abstract) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return report(fd);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path + (abstract ? 1 : 0), name, sizeof(addr.sun_path) - 2);
  const auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + (abstract ? 1 : 0) +
                                           std::strlen(name) + (abstract ? 0 : 1));
  return connect_fd(fd, reinterpret_cast<const sockaddr*>(&addr), size);
}

int tiocsti(const char* fd_text, const char* text, bool high_bits) {
  const int fd = std::atoi(fd_text);
  const unsigned long command = (high_bits ? (1UL << 32) : 0UL) | TIOCSTI;
  for (const char* c = text; *c != '\0'; ++c) {
    if (syscall(__NR_ioctl, fd, command, c) != 0) return report(-1);
  }
  return 0;
}

int xattr(const char* op, const char* path) {
  if (std::strcmp(op, "setxattr") == 0) return report(setxattr(path, "user.pwned", "1", 1, 0));
  if (std::strcmp(op, "fsetxattr") == 0) {
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return report(fd);
    return report(fsetxattr(fd, "user.pwned", "1", 1, 0));
  }
  // setxattrat(dirfd, path, at_flags, name, struct xattr_args*, size), Linux 6.13.
  struct {
    std::uint64_t value;
    std::uint32_t size;
    std::uint32_t flags;
  } args{reinterpret_cast<std::uintptr_t>("1"), 1, 0};
  return report(syscall(463, AT_FDCWD, path, 0, "user.pwned", &args, sizeof(args)));
}

int foreign_abi_getpid(bool i386) {
  if (!i386) return report(syscall(0x40000000 | __NR_getpid));
  long result = 20;  // i386 __NR_getpid through the int 0x80 gate
  __asm__ volatile("int $0x80" : "+a"(result) : : "memory");
  return result > 0 ? 0 : 1;
}

int dispatch(int argc, char** argv) {
  const char* op = argv[1];
  const char* a = argc > 2 ? argv[2] : "";
  const char* b = argc > 3 ? argv[3] : "";
  const auto is = [op](const char* name) { return std::strcmp(op, name) == 0; };
  if (is("hold")) return hold();
  if (is("write")) return write_pwned(a);
  if (is("truncate")) return report(truncate(a, 0));
  if (is("link")) return report(link(a, b));
  if (is("rename")) return report(rename(a, b));
  if (is("tcp4")) return tcp4(a);
  if (is("tcp6")) return tcp6(a);
  if (is("udp4")) return udp4(a);
  if (is("netlink")) return netlink(a);
  if (is("uring_tcp4")) return uring_tcp4(a);
  if (is("connect_fd")) {
    const sockaddr_in addr = loopback4(b);
    return connect_fd(std::atoi(a), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  }
  if (is("unixpair")) return unix_pair();
  if (is("unix_connect")) return unix_connect(a, false);
  if (is("abstract")) return unix_connect(a, true);
  if (is("kill")) return report(kill(std::atoi(a), SIGTERM));
  if (is("tiocsti")) return tiocsti(a, b, argc > 4);
  if (is("tioclinux")) {
    char subcode = 6;  // TIOCL_GETSHIFTSTATE: harmless if it ever got through
    return report(ioctl(std::atoi(a), TIOCLINUX, &subcode));
  }
  if (is("fchmodat2")) return report(syscall(452, AT_FDCWD, a, 0777, 0));
  if (is("fchmod")) {
    const int fd = open(a, O_RDONLY | O_CLOEXEC);
    return fd < 0 ? report(fd) : report(fchmod(fd, 0777));
  }
  if (is("setxattr") || is("fsetxattr") || is("setxattrat")) return xattr(op, a);
  if (is("mount")) return report(mount("none", a, "tmpfs", 0, nullptr));
  if (is("i386")) return foreign_abi_getpid(true);
  if (is("x32")) return foreign_abi_getpid(false);
  std::fprintf(stderr, "ll_probe: unknown operation %s\n", op);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: ll_probe OPERATION [ARGS...]\n");
    return 2;
  }
  return dispatch(argc, argv);
}
