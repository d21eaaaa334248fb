// SPDX-License-Identifier: Apache-2.0
// dsh-seccomp-exec: puts landlock-run's always-on seccomp program on a descriptor and execs the
// program after `--`, so that bwrap's `--seccomp N` (which only reads a descriptor) can be named
// in an argv that a caller spawns with nothing else: no descriptor to provide.
//
//   dsh-seccomp-exec --seccomp-fd N -- PROGRAM [ARG]...
//
// The program comes from the filter generator compiled in (seccomp_filter.cpp), never from a
// file or the environment. Every failure is one "dsh-seccomp-exec: " line on stderr and exit 125,
// before PROGRAM runs; after the exec the status is PROGRAM's. C headers only: linked statically
// against musl like landlock-run.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "seccomp_filter.h"

namespace {

constexpr int kFailureExit = 125;

// One line "dsh-seccomp-exec: <what>[: <detail>][: <reason>]" and exit 125: PROGRAM never ran.
[[noreturn]] void fail(const char* what, const char* detail = nullptr,
                       const char* reason = nullptr) {
  dprintf(STDERR_FILENO, "dsh-seccomp-exec: %s%s%s%s%s\n", what, detail != nullptr ? ": " : "",
          detail != nullptr ? detail : "", reason != nullptr ? ": " : "",
          reason != nullptr ? reason : "");
  _exit(kFailureExit);
}

// A descriptor number from 3 to 1023, in decimal: 0 to 2 are the command's stdio.
int parse_fd(const char* text) {
  int value = 0;
  if (*text == '\0') return -1;
  for (const char* c = text; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9' || value > 1023) return -1;
    value = value * 10 + (*c - '0');
  }
  return value >= 3 && value <= 1023 ? value : -1;
}

// A sealed memfd at offset 0 holding exactly the filter, as descriptor `target` (not close on
// exec, so PROGRAM inherits it). Sealed: nothing PROGRAM runs can rewrite it before bwrap reads.
void place_filter(int target) {
  const int fd = memfd_create("dsh-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) fail("memfd_create", strerror(errno));
  if (const int rc = landlock_run::export_filter_bpf({}, fd); rc != 0) {
    fail("cannot write the seccomp program", strerror(-rc));
  }
  if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    fail("cannot seal the seccomp program", strerror(errno));
  }
  if (lseek(fd, 0, SEEK_SET) != 0) fail("lseek", strerror(errno));
  if (fd == target) {
    if (fcntl(fd, F_SETFD, 0) != 0) fail("fcntl", strerror(errno));
    return;
  }
  // dup2 leaves the new descriptor without FD_CLOEXEC; the memfd's own number closes on exec.
  if (dup2(fd, target) != target) fail("dup2", strerror(errno));
  close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  static constexpr char kUsage[] = "usage: dsh-seccomp-exec --seccomp-fd N -- PROGRAM [ARG]...";
  if (argc < 5 || strcmp(argv[1], "--seccomp-fd") != 0 || strcmp(argv[3], "--") != 0) {
    fail(kUsage);
  }
  const int target = parse_fd(argv[2]);
  if (target < 0) fail("--seccomp-fd takes a descriptor number from 3 to 1023", argv[2]);
  // An absolute program only: nothing of the caller's PATH or directory chooses the runner.
  if (argv[4][0] != '/') fail("the program after -- must be an absolute path", argv[4]);
  place_filter(target);
  execv(argv[4], argv + 4);
  fail("exec failed", argv[4], strerror(errno));
}
