// SPDX-License-Identifier: Apache-2.0
// filter_attach ROUNDS: the CPU cost of installing the launcher's default seccomp filter, the
// only thing a filter change adds to every run. Each round forks a child that sets no_new_privs,
// installs the filter (the kernel checks it, translates it to eBPF, JITs it and emulates it once
// per syscall number for its allow-cache) and exits; a control child does the same without the
// filter. Prints the median of the children's user+system CPU time (wait4's rusage, which other
// programs' load does not inflate the way it inflates wall time), with and without the filter.
// Built twice by filter_attach.sh, against an older and the current seccomp_filter.cpp.
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "seccomp_filter.h"

namespace {

bool g_all = false;

long child_cpu_ns(bool install) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(2);
    const landlock_run::FilterChoice choice{g_all, g_all};
    if (install && landlock_run::InstallFilter(choice) != 0) _exit(3);
    _exit(0);
  }
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) std::exit(1);
  return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000000L +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1000L;
}

long median(std::vector<long> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 2000;
  g_all = argc > 2;
  std::vector<long> with, without;
  for (int i = 0; i < rounds; ++i) {
    with.push_back(child_cpu_ns(true));
    without.push_back(child_cpu_ns(false));
  }
  long sum_with = 0, sum_without = 0;
  for (long v : with) sum_with += v;
  for (long v : without) sum_without += v;
  std::printf("median_with_us=%.1f median_without_us=%.1f mean_with_us=%.1f mean_without_us=%.1f\n",
              median(with) / 1e3, median(without) / 1e3, sum_with / 1e3 / rounds,
              sum_without / 1e3 / rounds);
  return 0;
}
