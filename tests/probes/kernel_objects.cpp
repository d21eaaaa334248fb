// SPDX-License-Identifier: Apache-2.0
// kernel_objects: the sandboxee that goes after the host's kernel objects, as a hostile command
// would. Raw system calls throughout (keyutils is not a dependency). One line per attempt on
// stdout: "<attempt> ok" or "<attempt> errno=N". The tests judge the host from outside; the lines
// only say which call the sandbox refused, and how.
//   kernel_objects sysv KEY SHMID  attach, overwrite and remove the host segment (by key and by
//                                  id); create a segment, a queue, a semaphore set (KEY+1..3), a
//                                  private segment and a POSIX queue "dsh-it-KEY"
//   kernel_objects keys KEYID DESC read, update and revoke the key; overwrite it by description in
//                                  the user keyring; search for it; request_key a missing key
//   kernel_objects namespaces      unshare/clone/clone3 a user namespace, setns, personality;
//                                  and fork, posix_spawn and a thread, which must keep working
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/personality.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

extern char** environ;

namespace {

constexpr long kKeySpecUserKeyring = -4;
constexpr long kKeyctlUpdate = 2;
constexpr long kKeyctlRevoke = 3;
constexpr long kKeyctlSearch = 10;
constexpr long kKeyctlRead = 11;

void report(const char* attempt, long rc) {
  if (rc >= 0) {
    std::printf("%s ok\n", attempt);
  } else {
    std::printf("%s errno=%d\n", attempt, errno);
  }
}

int sysv(key_t key, int host_id) {
  report("shmget-host", shmget(key, 0, 0));
  void* host = shmat(host_id, nullptr, 0);
  report("shmat-host", host == reinterpret_cast<void*>(-1) ? -1 : 0);
  if (host != reinterpret_cast<void*>(-1)) {
    std::memcpy(host, "pwned", 5);
    shmdt(host);
  }
  report("shmctl-rmid-host", shmctl(host_id, IPC_RMID, nullptr));
  report("shmget-create", shmget(key + 1, 4096, IPC_CREAT | 0600));
  report("msgget-create", msgget(key + 2, IPC_CREAT | 0600));
  report("semget-create", semget(key + 3, 1, IPC_CREAT | 0600));
  report("shmget-private", shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600));
  const std::string queue = "dsh-it-" + std::to_string(key);
  report("mq_open-create", syscall(SYS_mq_open, queue.c_str(), O_CREAT | O_RDWR, 0600, nullptr));
  return 0;
}

int keys(long key_id, const char* description) {
  char buffer[256];
  report("keyctl-read", syscall(SYS_keyctl, kKeyctlRead, key_id, buffer, sizeof(buffer)));
  report("keyctl-update", syscall(SYS_keyctl, kKeyctlUpdate, key_id, "pwned", 5));
  report("add_key-user",
         syscall(SYS_add_key, "user", description, "pwned", 5, kKeySpecUserKeyring));
  report("keyctl-search",
         syscall(SYS_keyctl, kKeyctlSearch, kKeySpecUserKeyring, "user", description, 0));
  report("keyctl-revoke", syscall(SYS_keyctl, kKeyctlRevoke, key_id));
  const std::string missing = std::string(description) + "-missing";
  report("request_key",
         syscall(SYS_request_key, "user", missing.c_str(), "callout", kKeySpecUserKeyring));
  return 0;
}

// A child that exits at once; the parent reaps it. Returns the clone's result.
long clone_and_reap(long rc) {
  if (rc == 0) _exit(0);
  if (rc > 0) waitpid(static_cast<pid_t>(rc), nullptr, 0);
  return rc;
}

void* nothing(void*) { return nullptr; }

int namespaces() {
  report("unshare-newuser", unshare(CLONE_NEWUSER));
  report("clone-newuser",
         clone_and_reap(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0L, 0L, 0L, 0L)));
  clone_args args{};
  args.flags = CLONE_NEWUSER;
  args.exit_signal = SIGCHLD;
  report("clone3-newuser", clone_and_reap(syscall(SYS_clone3, &args, sizeof(args))));
  const int ns = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
  report("setns-user", ns < 0 ? -1 : setns(ns, CLONE_NEWUSER));
  report("personality-query", personality(0xffffffff));
  report("personality-bsd", personality(PER_BSD));
  report("personality-addr-no-randomize", personality(ADDR_NO_RANDOMIZE));
  report("fork", clone_and_reap(fork()));
  pid_t child = -1;
  char true_path[] = "/bin/true";
  char* const argv[] = {true_path, nullptr};
  const int spawned = posix_spawn(&child, true_path, nullptr, nullptr, argv, environ);
  if (spawned == 0) waitpid(child, nullptr, 0);
  errno = spawned;
  report("posix_spawn", spawned == 0 ? 0 : -1);
  pthread_t thread{};
  const int started = pthread_create(&thread, nullptr, nothing, nullptr);
  if (started == 0) pthread_join(thread, nullptr);
  errno = started;
  report("pthread_create", started == 0 ? 0 : -1);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string op = argc > 1 ? argv[1] : "";
  int rc = 2;
  if (op == "sysv" && argc == 4) {
    rc = sysv(static_cast<key_t>(std::strtol(argv[2], nullptr, 10)), std::atoi(argv[3]));
  } else if (op == "keys" && argc == 4) {
    rc = keys(std::strtol(argv[2], nullptr, 10), argv[3]);
  } else if (op == "namespaces" && argc == 2) {
    rc = namespaces();
  } else {
    std::fprintf(stderr, "usage: kernel_objects sysv KEY SHMID | keys KEYID DESC | namespaces\n");
  }
  std::fflush(stdout);
  return rc;
}
