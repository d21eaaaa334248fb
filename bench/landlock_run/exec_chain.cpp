// SPDX-License-Identifier: Apache-2.0
// The floor of any exec-based launcher: a static program that does nothing but execv its
// arguments. Benchmarked beside landlock-run so its overhead splits into "one more execve"
// (this program) and "Landlock + seccomp + capability work" (the difference).
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 2) return 125;
  execv(argv[1], argv + 1);
  return 125;
}
