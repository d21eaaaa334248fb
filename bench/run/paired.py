#!/usr/bin/env python3
# Paired, interleaved timing of OLD against NEW variants of the same command: each round runs
# every command once, in a fresh random order, so the host's load drift (other builds on a
# shared machine) hits old and new alike. Reports each command's median and the median of the
# per-round differences new - old, with its interquartile range. hyperfine runs one command's
# whole series before the next, so on a loaded host its old/new gap measures the drift.
# Usage: paired.py ROUNDS NAME=OLD_CMD|||NEW_CMD ...   (commands are split on spaces)
import os, random, statistics, sys, time

def spawn_wait(argv, devnull):
    pid = os.posix_spawn(argv[0], argv, os.environ,
                         file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 0),
                                       (os.POSIX_SPAWN_DUP2, devnull, 1),
                                       (os.POSIX_SPAWN_DUP2, devnull, 2)])
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(argv)}: exit {os.waitstatus_to_exitcode(status)}")

rounds = int(sys.argv[1])
pairs = []
for spec in sys.argv[2:]:
    name, commands = spec.split("=", 1)
    old, new = commands.split("|||")
    pairs.append((name, old.split(), new.split()))
devnull = os.open(os.devnull, os.O_RDWR)
times = {(name, side): [] for name, _, _ in pairs for side in ("old", "new")}
jobs = [(name, side, argv) for name, old, new in pairs for side, argv in (("old", old), ("new", new))]
for warm in range(20):
    for name, side, argv in jobs:
        spawn_wait(argv, devnull)
for _ in range(rounds):
    random.shuffle(jobs)
    for name, side, argv in jobs:
        start = time.perf_counter_ns()
        spawn_wait(argv, devnull)
        times[(name, side)].append(time.perf_counter_ns() - start)
print(f"{'':28} {'old ms':>8} {'new ms':>8} {'median of new-old':>18} {'IQR of new-old':>20}")
for name, _, _ in pairs:
    old, new = times[(name, "old")], times[(name, "new")]
    diffs = sorted((n - o) / 1e6 for o, n in zip(old, new))
    q1, q3 = diffs[len(diffs) // 4], diffs[3 * len(diffs) // 4]
    print(f"{name:28} {statistics.median(old)/1e6:8.3f} {statistics.median(new)/1e6:8.3f} "
          f"{statistics.median(diffs):+18.3f} {q1:+9.3f} .. {q3:+.3f}")
