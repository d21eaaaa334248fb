#!/usr/bin/env python3
"""Interleaved timing of commands on a host whose load changes under the measurement.

hyperfine runs all of one command's runs, then the next command's: on a shared host whose load
moves from minute to minute, that order turns the load's drift into a difference between the
commands. This runs one of each command per round, in a rotating order, and reports each
command's median and, per command against the first, the median of the per-round differences.
Usage: interleaved.py ROUNDS NAME=COMMAND...   (commands split on spaces, run without a shell)
"""
import os
import statistics
import subprocess
import sys
import time

rounds = int(sys.argv[1])
commands = [arg.split("=", 1) for arg in sys.argv[2:]]
times = {name: [] for name, _ in commands}
devnull = subprocess.DEVNULL
for round_ in range(rounds + 5):
    order = commands[round_ % len(commands):] + commands[:round_ % len(commands)]
    for name, command in order:
        argv = command.split()
        start = time.perf_counter()
        status = subprocess.run(argv, stdin=devnull, stdout=devnull, stderr=devnull).returncode
        elapsed = time.perf_counter() - start
        if status != 0:
            sys.exit(f"{name}: exit {status}")
        if round_ >= 5:  # warm-up rounds are not counted
            times[name].append(elapsed)
first = commands[0][0]
print(f"load: {os.getloadavg()}")
for name, _ in commands:
    ts = times[name]
    diff = statistics.median(t - f for t, f in zip(ts, times[first]))
    print(f"  {name:34s} median {statistics.median(ts) * 1e6:8.0f} us   vs {first}: "
          f"{diff * 1e6:+7.0f} us (median of per-round differences)")
