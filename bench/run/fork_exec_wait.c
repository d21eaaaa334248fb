/* SPDX-License-Identifier: Apache-2.0
 * The floor under any wrapper: fork, exec argv[1..], wait, exit with the child's status. Nothing
 * else. bench/run/run.sh builds it twice, statically against glibc and against musl, to show
 * what a process that sits between the caller and the command costs before it does any work:
 * `dsh-sandbox run` is such a process (glibc, C++), landlock-run is the exec-only half of one. */
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const pid_t pid = fork();
  if (pid == 0) {
    execv(argv[1], argv + 1);
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0) return 125;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
