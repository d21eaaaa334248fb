// SPDX-License-Identifier: Apache-2.0
// landlock-run: confine a command with Landlock (and seccomp), then exec it.
//
//   landlock-run [--ro P]... [--rw P]... [--deny-network] [--deny-metadata] [--scope-ipc]
//                [--status-fd N] [--chdir DIR] -- ARGV...
//   landlock-run --probe | --features
//
// GUARANTEES
// - ARGV runs only confined. Every launcher failure (usage, a kernel that cannot enforce, an
//   unopenable grant, a ruleset/seccomp/capability error, a failed exec, out of memory) exits 125
//   after exactly one stderr line starting "landlock-run: " (also written to --status-fd N), and
//   ARGV has not run. After a successful exec ARGV's status is its own, 125 included.
// - Filesystem: every access right the kernel's ABI governs is handled; --ro grants
//   read+execute beneath P, --rw everything beneath P, --list only listing directories beneath P.
//   Below ABI 5 the run is "partial" and says so on stderr. ABI 6/7 kernels are used at full
//   strength, not clamped at 5.
// - Always: no_new_privs (setuid/file caps never raise privileges), ioctl TIOCSTI/TIOCLINUX fail,
//   foreign architectures and the x32 range kill the process, and a caller holding capabilities
//   (root) loses all of them: effective, permitted, inheritable, ambient, bounding. The host's
//   kernel objects are out of reach: SysV IPC and POSIX message queues, keyrings, new user
//   namespaces (clone3: ENOSYS), setns and personality changes fail (seccomp_rules.h).
// - --deny-network: socket()/socketpair() fail with EAFNOSUPPORT for every family but AF_UNIX
//   (not EACCES: "Permission denied" reads as a file denial); io_uring is refused in every run
//   (EPERM); on ABI >= 4 Landlock also handles TCP bind/connect with no rule (second layer).
//   With --private-netns (the caller unshared the network namespace; checked: it must hold lo
//   alone) a NETLINK_ROUTE socket is allowed too, so getifaddrs(3) lists lo instead of failing.
// - --allow-connect-port N: TCP connect to port N only (Landlock ABI 4), stream sockets only
//   (seccomp): the network allow-list's inside wall (net_allow.h).
// - With either flag above, host Unix sockets are network: a supervisor runs (evidence or not)
//   and performs every connect itself, refusing a named socket the run did not bind and
//   --allow-unix-socket does not list (ECONNREFUSED), and AF_UNIX datagram sockets are refused
//   (unix_connect.h). Without pidfd_getfd (Linux 5.6) the run fails (125).
// - --scope-ipc: ABI >= 6 scopes abstract Unix sockets and signals to the sandbox; on an older
//   kernel it fails closed. --deny-metadata: chmod/chown/utime/xattr families fail with EPERM.
// - Nothing is read from the environment; it is passed to ARGV unchanged.
//
// ORDER OF OPERATIONS, and why
// 1. Parse; open the status fd close-on-exec (so a successful exec closes it unwritten).
// 2. Query the ABI, refuse options the kernel cannot honour (never silently weaker).
// 3. PR_SET_NO_NEW_PRIVS. Irrevocable. landlock_restrict_self() and seccomp(SET_MODE_FILTER)
//    both return EPERM unless the task has no_new_privs or CAP_SYS_ADMIN; step 5 removes the
//    latter, so NNP must already be set, and it is what keeps setuid binaries inert later.
// 4. Build the ruleset: open each grant O_PATH with the caller's full privileges, so root's
//    grants resolve as root asked for them.
// 5. Drop capabilities. It needs CAP_SETPCAP (bounding set, securebits), so it precedes
//    anything that could restrict prctl; after it a root caller takes the same NNP-gated path
//    through restrict_self and seccomp as an unprivileged one.
// 6. landlock_restrict_self(): the domain covers this thread and everything it execs.
// 7. Load the seccomp filter last, so no setup syscall above is subject to it. Between here and
//    exec run only write() (partial notice or a failure line), execve() and exit_group(), all
//    allowed by the filter's default.
// 8. execvp(ARGV). Single-threaded throughout: Landlock and seccomp (no TSYNC) bind only the
//    calling thread.
//
// BUILD: the shipped binary links musl statically and no C++ runtime at all (CMakeLists.txt says
// why), and the same sources also build against glibc for the tests and the fuzzer. So every
// launcher source uses C headers and C library calls only: no std::, no <initializer_list>, no
// new/delete, and it is compiled without exceptions, RTTI and thread-safe statics.
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "abi.h"
#include "caps.h"
#include "cli.h"
#include "denial_record.h"
#include "landlock.h"
#include "net_allow.h"
#include "seccomp_filter.h"
#include "supervisor.h"
#include "unix_connect.h"

namespace landlock_run {
namespace {

constexpr int kLauncherFailure = 125;
int g_status_fd = -1;  // the only mutable global: where Fail() also reports

void write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    size -= static_cast<size_t>(n);
  }
}

// One sanitized line, "landlock-run: " + message, to stderr and the status fd; then exit 125.
[[noreturn]] __attribute__((format(printf, 1, 2))) void fail(const char* format, ...) {
  char line[4096] = "landlock-run: ";
  const size_t prefix = strlen(line);
  va_list args;
  va_start(args, format);
  vsnprintf(line + prefix, sizeof(line) - prefix - 1, format, args);
  va_end(args);
  sanitize_line(line);
  const size_t length = strlen(line);
  line[length] = '\n';
  write_all(STDERR_FILENO, line, length + 1);
  if (g_status_fd >= 0) write_all(g_status_fd, line, length + 1);
  _exit(kLauncherFailure);
}

// Fault injection, test build only (landlock-run-testing): LANDLOCK_RUN_FAULT=STAGE takes the
// failure exit of STAGE, so a test can prove every exit writes its status line. The shipped
// launcher reads nothing from the environment and is compiled without it.
bool fault(const char* stage) {
#if defined(LANDLOCK_RUN_TESTING)
  const char* chosen = getenv("LANDLOCK_RUN_FAULT");
  return chosen != nullptr && strcmp(chosen, stage) == 0;
#else
  (void)stage;
  return false;
#endif
}

// An errno for an injected fault; the real one otherwise.
int fault_errno(const char* stage, int real) { return fault(stage) ? EIO : real; }

[[noreturn]] void fail_not_enforced() {
  fail("landlock is not enforced by this kernel (ABI unsupported or disabled)");
}

[[noreturn]] void fail_ruleset(int negative_errno) {
  fail("landlock ruleset error: %s", strerror(-negative_errno));
}

// The --status-fd argument of an argv not yet parsed (out of memory before the parser's storage
// exists), so that failure too reaches the channel: the first "--status-fd N" before "--" with N
// an open descriptor of 3 or above; -1 otherwise.
int status_fd_before_parsing(int argc, char** argv) {
  for (int i = 1; i + 1 < argc && strcmp(argv[i], "--") != 0; ++i) {
    if (strcmp(argv[i], "--status-fd") != 0) continue;
    char* end = nullptr;
    const long fd = strtol(argv[i + 1], &end, 10);
    if (end == argv[i + 1] || *end != '\0' || fd <= STDERR_FILENO || fd > 1 << 20) return -1;
    return fcntl(static_cast<int>(fd), F_GETFD) >= 0 ? static_cast<int>(fd) : -1;
  }
  return -1;
}

void adopt_status_fd(int fd) {
  if (fd < 0) return;
  // 0-2 belong to the command; marking them close-on-exec would take its stdio away.
  if (fd <= STDERR_FILENO) fail("usage error: --status-fd must be 3 or above");
  if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
    fail("cannot use status fd %d: %s", fd, strerror(errno));
  }
  g_status_fd = fd;
}

// Steps 2 (refusals), 4 and 6 for one run: returns the ruleset fd, fully populated.
int build_ruleset(const Options& options, int abi) {
  const bool net = options.deny_network || options.allow_connect_port >= 0;
  const RulesetAttr attr{handled_fs_for_abi(abi), net ? handled_net_for_abi(abi) : 0,
                         options.scope_ipc ? scopes_for_abi(abi) : 0};
  const int ruleset = create_ruleset(attr);
  if (ruleset < 0) fail_ruleset(ruleset);
  // Read-only grants first, then read-write, each in argv order (the reference's order).
  constexpr bool kPasses[] = {false, true};  // an array, not a braced list: no <initializer_list>
  for (const bool read_write : kPasses) {
    for (size_t i = 0; i < options.grant_count; ++i) {
      const Grant& grant = options.grants[i];
      if (grant.note != Note::kNone || grant.read_write != read_write) continue;
      RuleStage stage = RuleStage::kOpen;
      const RuleAccess access = grant.list_only ? RuleAccess::kList
                                : read_write    ? RuleAccess::kReadWrite
                                                : RuleAccess::kReadOnly;
      const int rc = add_path_rule(ruleset, grant.path, attr.handled_access_fs, access, &stage);
      if (rc == -ENOENT && stage == RuleStage::kOpen && grant.if_exists) continue;
      if (rc < 0 && stage == RuleStage::kOpen) {
        fail("cannot open rule path: %s: %s", grant.path, strerror(-rc));
      }
      if (rc < 0) fail_ruleset(rc);
    }
  }
  if (options.allow_connect_port >= 0) {
    const int rc =
        add_connect_port_rule(ruleset, static_cast<uint16_t>(options.allow_connect_port));
    if (rc < 0) fail_ruleset(rc);
  }
  return ruleset;
}

void set_no_new_privs() {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || fault("nnp")) {
    fail_ruleset(-fault_errno("nnp", errno));
  }
}

void enforce(int ruleset) {
  if (const int rc = fault("restrict") ? -EIO : restrict_self(ruleset); rc < 0) fail_ruleset(rc);
  close(ruleset);
}

int usable_abi(int max_abi) {
  const int abi = effective_abi(query_kernel_abi(), max_abi);
  if (abi < 1) fail_not_enforced();
  return abi;
}

// --probe: apply to this short-lived process every kind of restriction a run applies, in a
// run's order (a real `--ro /` ruleset, the capability drop, the always-on seccomp filter), then
// report. A kernel that enforces Landlock but refuses the seccomp filter (built without
// CONFIG_SECCOMP_FILTER, or a container filter that denies seccomp(2)) fails every run with 125,
// so it probes unusable too.
int run_probe() {
  const int abi = usable_abi(-1);
  set_no_new_privs();
  const char* root = "/";
  Grant grant{root, false};
  Options options;
  options.grants = &grant;
  options.grant_count = 1;
  const int ruleset = build_ruleset(options, abi);
  if (const int rc = drop_capabilities(); rc < 0) {
    fail("cannot drop capabilities: %s", strerror(-rc));
  }
  enforce(ruleset);
  if (const int rc = install_filter(FilterChoice{false, false}); rc < 0) {
    fail("seccomp filter error: %s", strerror(-rc));
  }
  const char* line = probe_report_line(abi);
  write_all(STDOUT_FILENO, line, strlen(line));
  return 0;
}

// --features: key=value lines for a provider's handshake. Informational: exits 0 even when
// Landlock is unavailable (enforcement=none); --probe stays the availability signal.
int run_features() {
  const long kernel_abi = query_kernel_abi();
  const int abi = effective_abi(kernel_abi, -1);
  const bool seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
  printf(
      "landlock-run=1\nabi=%d\nenforcement=%s\nseccomp=%d\ndeny_network=%d\n"
      "net_landlock=%d\nscope_ipc=%d\ndeny_metadata=%d\nterminal_ioctl_block=%d\n"
      "cap_drop=1\nstatus_fd=1\nstatus_exec=1\nevidence_notes=1\ncontain_metadata=1\nlist_grants="
      "1\nchdir=1\nunix_guard=1\nrule_writes=1\n"
      "kernel_object_block=%d\n",
      abi, abi < 1 ? "none" : (is_partial(abi) ? "partial" : "full"), seccomp ? 1 : 0,
      seccomp ? 1 : 0, abi >= kNetAbi ? 1 : 0, abi >= kScopeAbi ? 1 : 0, seccomp ? 1 : 0,
      seccomp ? 1 : 0, seccomp ? 1 : 0);
  return fflush(stdout) == 0 ? 0 : kLauncherFailure;
}

// The signals the supervisor forwards to the command (and SIGCHLD, its own cue), blocked in the
// parent and read from a signalfd.
void supervised_signals(sigset_t* set) {
  sigemptyset(set);
  constexpr int kSignals[] = {SIGHUP,  SIGINT,  SIGQUIT,  SIGTERM, SIGUSR1,
                              SIGUSR2, SIGALRM, SIGWINCH, SIGCONT, SIGCHLD};
  for (const int signal : kSignals) sigaddset(set, signal);
}

// One byte of data and room for one SCM_RIGHTS descriptor: what both ends of the listener's
// hand-over use. The message points into the object itself, so it is neither copied nor moved.
struct FdMessage {
  char data = 0;
  iovec io{};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message{};

  FdMessage() {
    io = {&data, 1};
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof(control);
  }
  FdMessage(const FdMessage&) = delete;
  FdMessage& operator=(const FdMessage&) = delete;
};

void send_fd(int socket, int fd) {
  FdMessage fd_message;
  fd_message.data = 'L';
  cmsghdr* header = CMSG_FIRSTHDR(&fd_message.message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(header), &fd, sizeof(int));
  while (sendmsg(socket, &fd_message.message, MSG_NOSIGNAL) < 0) {
    if (errno != EINTR) fail("cannot hand the seccomp listener over: %s", strerror(errno));
  }
}

// The listener fd, or -1 when the child ended before sending it (it failed, and said so).
int receive_fd(int socket) {
  FdMessage fd_message;
  ssize_t n;
  while ((n = recvmsg(socket, &fd_message.message, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  const cmsghdr* header = n > 0 ? CMSG_FIRSTHDR(&fd_message.message) : nullptr;
  if (header == nullptr || header->cmsg_type != SCM_RIGHTS) return -1;
  int fd = -1;
  memcpy(&fd, CMSG_DATA(header), sizeof(int));
  return fd;
}

// Ends the launcher as the command ended: its exit status, or death by the same signal (without
// a core file of our own).
[[noreturn]] void exit_like(int status) {
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  const int signal = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigaction(signal, &action, nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signal);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  raise(signal);
  _exit(128 + signal);
}

// A path's canonical name for the supervisor, which compares resolved paths: realpath, or for a
// name that does not exist (a startup file kept from being created) its directory's realpath
// and the name; as given when neither resolves. Allocated once, never freed (the launcher execs
// or exits).
const char* canonical_path(const char* path) {
  if (char* canonical = realpath(path, nullptr); canonical != nullptr) return canonical;
  const char* slash = strrchr(path, '/');
  if (slash == nullptr || slash == path || slash[1] == '\0') return path;
  char directory[4096];
  const size_t length = static_cast<size_t>(slash - path);
  if (length >= sizeof(directory)) return path;
  memcpy(directory, path, length);
  directory[length] = '\0';
  char* parent = realpath(directory, nullptr);
  if (parent == nullptr) return path;
  const size_t size = strlen(parent) + strlen(slash) + 1;
  char* joined = static_cast<char*>(malloc(size));
  if (joined == nullptr) fail("out of memory");
  snprintf(joined, size, "%s%s", strcmp(parent, "/") == 0 ? "" : parent, slash);
  free(parent);
  return joined;
}

// The canonical paths of the grants that `pick` selects (the --rw grants, or one kind of note),
// allocated once.
template <typename Pick>
const char** canonical_paths(const Options& options, size_t* count, Pick pick) {
  const char** paths =
      static_cast<const char**>(calloc(options.grant_count + 1, sizeof(const char*)));
  if (paths == nullptr || fault("roots")) fail("out of memory");
  *count = 0;
  for (size_t i = 0; i < options.grant_count; ++i) {
    if (pick(options.grants[i])) paths[(*count)++] = canonical_path(options.grants[i].path);
  }
  return paths;
}

bool has_homes(const Options& options) {
  for (size_t i = 0; i < options.grant_count; ++i) {
    if (options.grants[i].note == Note::kHome) return true;
  }
  return false;
}

bool has_notes(const Options& options) {
  for (size_t i = 0; i < options.grant_count; ++i) {
    const Note note = options.grants[i].note;
    if (note != Note::kNone && note != Note::kUnixSocket) return true;
  }
  return false;
}

bool has_unix_sockets(const Options& options) {
  for (size_t i = 0; i < options.grant_count; ++i) {
    if (options.grants[i].note == Note::kUnixSocket) return true;
  }
  return false;
}

// Host Unix sockets are network (unix_connect.h): whenever the network is not inherited the
// supervisor runs, evidence or not, to decide every connect.
bool unix_guard_needed(const Options& options) {
  return options.deny_network || options.allow_connect_port >= 0;
}

// The identities of the --allow-unix-socket sockets, taken now (symbolic links followed: the
// caller named the socket, e.g. "$SSH_AUTH_SOCK"). A path that is missing or no socket allows
// nothing: a connect there is refused and recorded like any other.
UnixGuard* unix_guard(const Options& options) {
  static UnixGuard guard;
  SocketIdentity* allowed =
      static_cast<SocketIdentity*>(calloc(options.grant_count + 1, sizeof(SocketIdentity)));
  if (allowed == nullptr || fault("sockets")) fail("out of memory");
  for (size_t i = 0; i < options.grant_count; ++i) {
    struct stat st;
    if (options.grants[i].note != Note::kUnixSocket || stat(options.grants[i].path, &st) != 0 ||
        !S_ISSOCK(st.st_mode)) {
      continue;
    }
    allowed[guard.allowed_count++] = SocketIdentity{st.st_dev, st.st_ino};
  }
  guard.allowed = allowed;
  guard.allow_connect_port = options.allow_connect_port;
  return &guard;
}

// The guard takes the command's sockets with pidfd_getfd (Linux 5.6): a kernel without it cannot
// keep host sockets out, and the run is refused rather than left open to them.
void require_pidfd_getfd() {
  const long self = syscall(SYS_pidfd_open, getpid(), 0U);
  const long copy =
      self < 0 ? -1 : syscall(SYS_pidfd_getfd, static_cast<int>(self), static_cast<int>(self), 0U);
  const int error = errno;
  if (copy >= 0) close(static_cast<int>(copy));
  if (self >= 0) close(static_cast<int>(self));
  if (copy < 0 || fault("pidfd")) {
    fail(
        "cannot keep host Unix sockets out with the network off: pidfd_getfd (Linux 5.6) "
        "failed: %s",
        strerror(fault_errno("pidfd", error)));
  }
}

[[noreturn]] void exec_command(const Options& options, char* const* argv, int abi) {
  if (is_partial(abi)) {
    static const char k_notice[] = "landlock-run: partial enforcement (older Landlock ABI)\n";
    write_all(STDERR_FILENO, k_notice, sizeof(k_notice) - 1);
  }
  // The status channel's last line before the command runs: a silent channel then means the
  // launcher ended before this point without a word, and the consumer falls back to the in-band
  // rule (exit 125 and a "landlock-run: " line) instead of reading silence as success.
  if (g_status_fd >= 0) write_all(g_status_fd, kExecLine, sizeof(kExecLine) - 1);
  if (fault("exec"))
    errno = EIO;
  else
    execvp(argv[options.command_index], argv + options.command_index);
  fail("exec failed: %s", strerror(errno));
}

// The child ended before it handed the listener over, so before the exec. Exit 125 is its own
// failure, whose line it wrote; anything else (a signal, the OOM killer) left no line, so the
// launcher writes one: the command never ran, and a silent status channel must not say so.
[[noreturn]] void await_failed_child(pid_t child) {
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == kLauncherFailure) _exit(kLauncherFailure);
  if (WIFSIGNALED(status)) {
    fail("the confined child was killed before it ran the command (%s)",
         strsignal(WTERMSIG(status)));
  }
  fail("the confined child ended before it ran the command (exit %d)",
       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

// The supervisor's side, set up before the fork so that none of it can fail once the command may
// run: its capabilities dropped (it needs none of the caller's: it reads the command's memory
// and /proc entries as the same user; the child's own drop then finds nothing left, and Landlock
// and seccomp need only no_new_privs), and the signalfd it reads forwarded signals and SIGCHLD
// from. Returns the signalfd.
int prepare_supervisor(const sigset_t& supervised) {
  if (const int rc = drop_capabilities(); rc < 0 || fault("parent-caps")) {
    fail("cannot drop capabilities: %s", strerror(fault("parent-caps") ? EIO : -rc));
  }
  const int signal_fd =
      fault("signalfd") ? -1 : signalfd(-1, &supervised, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signal_fd < 0) {
    fail("cannot create the supervisor's signalfd: %s", strerror(fault_errno("signalfd", errno)));
  }
  return signal_fd;
}

// The supervisor's view of the grants: the writable roots, the noted and guarded paths, and the
// filter the child installs.
SupervisorConfig supervisor_config(const Options& options) {
  SupervisorConfig config{};
  config.writable_roots = canonical_paths(options, &config.writable_root_count, [](const Grant& g) {
    return g.note == Note::kNone && g.read_write;
  });
  config.read_only_notes =
      canonical_paths(options, &config.read_only_note_count,
                      [](const Grant& g) { return g.note == Note::kReadOnly; });
  config.unreadable_notes =
      canonical_paths(options, &config.unreadable_note_count,
                      [](const Grant& g) { return g.note == Note::kUnreadable; });
  config.guarded_read_only =
      canonical_paths(options, &config.guarded_read_only_count,
                      [](const Grant& g) { return g.guard && g.note == Note::kReadOnly; });
  config.guarded_unreadable =
      canonical_paths(options, &config.guarded_unreadable_count,
                      [](const Grant& g) { return g.guard && g.note == Note::kUnreadable; });
  // Reads are notified only when a refused read can be named: each open then costs a round trip.
  config.filter.deny_network = options.deny_network;
  config.filter.deny_metadata = options.deny_metadata;
  config.filter.notify = options.evidence;
  config.filter.unix_guard = unix_guard_needed(options);
  config.filter.stream_network_only = options.allow_connect_port >= 0;
  config.filter.private_netns = options.private_netns;
  config.filter.notify_reads = config.unreadable_note_count > 0;
  config.filter.contain_metadata = options.contain_metadata;
  config.rule_writes = options.rule_writes;
  config.homes = canonical_paths(options, &config.home_count,
                                 [](const Grant& g) { return g.note == Note::kHome; });
  // Without evidence the supervisor only decides connects: its refusals are counted, not recorded.
  config.status_fd = options.evidence ? g_status_fd : -1;
  config.unix_guard = config.filter.unix_guard ? unix_guard(options) : nullptr;
  return config;
}

// The supervised command's side of the fork: it dies with its supervisor, drops capabilities,
// restricts itself, installs the notifying filter, hands the listener over on `socket` and execs.
[[noreturn]] void start_supervised_command(const Options& options, char* const* argv, int abi,
                                           int ruleset, const SupervisorConfig& config, int socket,
                                           pid_t parent, const sigset_t* previous) {
  // The command must not outlive its supervisor (its notified calls would fail anyway).
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || fault("pdeathsig")) {
    fail("cannot tie the command to its supervisor: %s", strerror(fault_errno("pdeathsig", errno)));
  }
  if (getppid() != parent) fail("the supervisor ended before the command started");
  if (fault("child-killed")) raise(SIGKILL);
  sigprocmask(SIG_SETMASK, previous, nullptr);
  if (const int rc = drop_capabilities(); rc < 0 || fault("child-caps")) {
    fail("cannot drop capabilities: %s", strerror(fault("child-caps") ? EIO : -rc));
  }
  enforce(ruleset);
  const int listener = fault("filter") ? -EIO : install_notify_filter(config.filter);
  if (listener < 0) fail("seccomp filter error: %s", strerror(-listener));
  send_fd(socket, listener);
  close(listener);
  close(socket);
  exec_command(options, argv, abi);
}

// --evidence: see supervisor.h. The ruleset is built (with the caller's privileges) before the
// fork; the child drops capabilities, restricts itself, installs the notifying filter, hands the
// listener to the parent and execs. The parent never runs anything of the command's.
[[noreturn]] void run_supervised(const Options& options, char* const* argv, int abi, int ruleset) {
  const SupervisorConfig config = supervisor_config(options);
  int sockets[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sockets) != 0 || fault("socketpair")) {
    fail("cannot create the supervisor's socket: %s", strerror(fault_errno("socketpair", errno)));
  }
  sigset_t supervised;
  sigset_t previous;
  supervised_signals(&supervised);
  sigprocmask(SIG_BLOCK, &supervised, &previous);
  const int signal_fd = prepare_supervisor(supervised);
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) fail("cannot fork the supervised command: %s", strerror(errno));
  if (child == 0) {
    close(sockets[0]);
    close(signal_fd);
    start_supervised_command(options, argv, abi, ruleset, config, sockets[1], parent, &previous);
  }
  close(sockets[1]);
  close(ruleset);
  signal(SIGPIPE, SIG_IGN);
  // From here nothing can fail: the command may already run.
  const int listener = receive_fd(sockets[0]);
  close(sockets[0]);
  if (listener < 0) await_failed_child(child);
  exit_like(supervise(listener, child, signal_fd, config));
}

// --private-netns is the caller's word that the run has a network namespace of its own; a route
// socket is allowed only after the namespace proves it: lo is its one interface. (Asked before
// the filter exists: if_nameindex(3) itself opens a NETLINK_ROUTE socket.)
bool netns_holds_lo_alone() {
  struct if_nameindex* names = if_nameindex();
  if (names == nullptr) return false;
  size_t count = 0;
  bool lo = false;
  for (const struct if_nameindex* name = names; name->if_index != 0; ++name) {
    ++count;
    lo = lo || strcmp(name->if_name, "lo") == 0;
  }
  if_freenameindex(names);
  return count == 1 && lo;
}

[[noreturn]] void run_confined(const Options& options, char* const* argv) {
  adopt_status_fd(options.status_fd);
  const int abi = usable_abi(options.max_abi);
  // Fail closed: a requested isolation the kernel cannot give is an error, never a no-op.
  if (options.scope_ipc && scopes_for_abi(abi) == 0) {
    fail("--scope-ipc needs Landlock ABI %d (Linux 6.12); the usable ABI is %d", kScopeAbi, abi);
  }
  if (options.allow_connect_port >= 0) {
    if (options.allow_connect_port < 1 || options.allow_connect_port > 65535) {
      fail("usage error: --allow-connect-port requires a port from 1 to 65535");
    }
    if (options.deny_network) fail("usage error: --allow-connect-port contradicts --deny-network");
    if (handled_net_for_abi(abi) == 0) {
      fail("--allow-connect-port needs Landlock ABI %d (Linux 6.7); the usable ABI is %d", kNetAbi,
           abi);
    }
  }
  if (options.private_netns) {
    if (!options.deny_network) fail("usage error: --private-netns needs --deny-network");
    if (!netns_holds_lo_alone()) {
      fail(
          "--private-netns: this network namespace has interfaces besides lo; it is not a "
          "private one (bwrap --unshare-net)");
    }
  }
  if ((has_notes(options) || options.contain_metadata || options.rule_writes) &&
      !options.evidence) {
    fail("usage error: --note-*, --guard-*, --rule-*, and --contain-metadata need --evidence");
  }
  // Fail closed: homes named for rules that nobody applies would be a silent weaker run.
  if (has_homes(options) && !options.rule_writes) {
    fail("usage error: --rule-home needs --rule-writes");
  }
  if (unix_guard_needed(options)) {
    require_pidfd_getfd();
  } else if (has_unix_sockets(options)) {
    fail(
        "usage error: --allow-unix-socket needs --deny-network or --allow-connect-port (with "
        "the network inherited every Unix socket is reachable)");
  }
  // Before the ruleset: Landlock does not govern chdir, and a directory that cannot be entered
  // must fail the run (125) rather than start the command somewhere else.
  if (options.chdir_path != nullptr && chdir(options.chdir_path) != 0) {
    fail("cannot chdir to %s: %s", options.chdir_path, strerror(errno));
  }
  set_no_new_privs();
  const int ruleset = build_ruleset(options, abi);
  if (options.evidence || unix_guard_needed(options)) run_supervised(options, argv, abi, ruleset);
  if (const int rc = drop_capabilities(); rc < 0 || fault("caps")) {
    fail("cannot drop capabilities: %s", strerror(fault("caps") ? EIO : -rc));
  }
  enforce(ruleset);
  const FilterChoice filter{options.deny_network, options.deny_metadata, false,
                            options.allow_connect_port >= 0, options.private_netns};
  if (const int rc = fault("filter") ? -EIO : install_filter(filter); rc < 0) {
    fail("seccomp filter error: %s", strerror(-rc));
  }
  exec_command(options, argv, abi);
}

}  // namespace
}  // namespace landlock_run

int main(int argc, char** argv) {
  using namespace landlock_run;
  // argc entries always suffice: every grant consumes at least two arguments.
  Grant* storage = static_cast<Grant*>(calloc(static_cast<size_t>(argc), sizeof(Grant)));
  if (storage == nullptr || fault("storage")) {
    g_status_fd = status_fd_before_parsing(argc, argv);
    fail("out of memory");
  }
  const Options options = parse_args(argc, argv, storage);
  switch (options.action) {
    case Action::kProbe:
      return run_probe();
    case Action::kFeatures:
      return run_features();
    case Action::kRun:
      run_confined(options, argv);
    case Action::kUsageError:
      break;
  }
  if (options.status_fd > STDERR_FILENO && fcntl(options.status_fd, F_GETFD) >= 0) {
    g_status_fd = options.status_fd;
  }
  char message[4096];
  format_usage_error(options, message, sizeof(message));
  fail("%s", message);
}
