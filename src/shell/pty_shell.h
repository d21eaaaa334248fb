// SPDX-License-Identifier: Apache-2.0
// An interactive confined program behind a pseudo-terminal the sandbox owns. The person's
// terminal never reaches the sandbox: the program gets the slave side of a fresh pty as its
// stdin, stdout, stderr and (inside the sandbox) its controlling terminal, in a session of its
// own; this process copies bytes between the person's terminal (in raw mode) and the master side,
// so the inner line discipline turns Ctrl-C and Ctrl-Z into signals for the inner foreground job,
// and an injection (TIOCSTI, TIOCLINUX) can only ever reach the inner pty.
#pragma once

#include <string>
#include <vector>

#include "dsh/sandbox/confined_argv.h"

namespace dsh::sandbox::shell {

struct ShellLaunch {
  std::vector<std::string> argv;     // absolute argv[0]: the confined argv, or the program
  std::vector<ProvidedFd> provided;  // descriptors the runner reads (bwrap's seccomp program)
  std::string workdir;               // absolute
};

// Runs it on `terminal_in`/`terminal_out` (the person's terminal, put in raw mode while the
// program runs and restored on every exit this process survives); passes window-size changes
// (SIGWINCH) to the inner pty. Returns the program's exit status (128+N for a signal); 128+N too
// when this process got SIGTERM, SIGHUP or SIGINT, after ending the program. Whatever the
// program left behind (a double-forked or setsid'd descendant) is killed before returning:
// this process is the tree's child subreaper. std::system_error when the pty cannot be made.
int run_shell(const ShellLaunch& launch, int terminal_in, int terminal_out);

}  // namespace dsh::sandbox::shell
