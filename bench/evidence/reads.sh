#!/usr/bin/env bash
# The cost of naming refused reads (docs/evidence.md, carve-outs): with an unreadable path noted
# (--note-unreadable), every open is a notification. The same launcher without evidence, with
# evidence, and with evidence and a noted path, in one hyperfine run, on two read-heavy
# workloads: 20,000 opens of one file (the round trip alone) and `grep -r` over 10,000 small files
# in 100 directories (a search an agent runs).
#   bench/evidence/reads.sh BUILD_DIR [RUNS]
set -euo pipefail
build=${1:?usage: reads.sh BUILD_DIR [RUNS]}
runs=${2:-10}
launcher="$(cd "$build" && pwd)/bin/landlock-run"
work=$(mktemp -d /var/tmp/dsh-reads-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/tree" "$work/secret"
for d in $(seq 1 100); do
  mkdir -p "$work/tree/d$d"
  for f in $(seq 1 100); do echo "file $d $f" > "$work/tree/d$d/f$f.txt"; done
done
mkdir -p "$work/proj"
for i in $(seq 1 40); do
  printf '#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\nint f%d(int x) { return x * %d; }\n' \
    "$i" "$i" > "$work/proj/u$i.c"
done
echo 'int main(void) { return 0; }' > "$work/proj/main.c"
printf 'OBJS := $(patsubst %%.c,%%.o,$(wildcard *.c))\napp: $(OBJS)\n\t$(CC) -o $@ $^\n%%.o: %%.c\n\t$(CC) -O1 -c -o $@ $<\n' \
  > "$work/proj/Makefile"
cat > "$work/opens.py" <<'PY'
import os, sys
for _ in range(20000):
    os.close(os.open(sys.argv[1], os.O_RDONLY))
PY

ll() { echo "$launcher --ro / --rw /dev/null --rw /tmp --rw $work/proj $1 --"; }
opens="python3 $work/opens.py $work/tree/d1/f1.txt"
search="grep -r -c nomatch $work/tree"
build="make -s -B -j2 -C $work/proj"
noted="--evidence --note-unreadable $work/secret"

uptime
hyperfine --runs "$runs" --warmup 2 -N -i \
  -n "opens, no evidence" "$(ll '') $opens" \
  -n "opens, evidence" "$(ll --evidence) $opens" \
  -n "opens, evidence, unreadable noted" "$(ll "$noted") $opens" \
  -n "grep, no evidence" "$(ll '') $search" \
  -n "grep, evidence" "$(ll --evidence) $search" \
  -n "grep, evidence, unreadable noted" "$(ll "$noted") $search" \
  -n "make, no evidence" "$(ll '') $build" \
  -n "make, evidence" "$(ll --evidence) $build" \
  -n "make, evidence, unreadable noted" "$(ll "$noted") $build" \
  --export-markdown "$work/result.md" --export-json "$work/result.json"
cat "$work/result.md"
uptime
# CPU time (user + system of the launcher, the supervisor and the command tree) moves far less
# with the host's load than wall time.
python3 - "$work/result.json" <<'PY'
import json, statistics, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
def figures(name):
    r = results[name]
    return statistics.median(r["times"]), r["user"] + r["system"]
print("| workload | CPU, no evidence | evidence | unreadable noted | ratio noted / evidence | wall median, noted / evidence |")
print("|---|---|---|---|---|---|")
for work in ("opens", "grep", "make"):
    w0, c0 = figures(work + ", no evidence")
    w1, c1 = figures(work + ", evidence")
    w2, c2 = figures(work + ", evidence, unreadable noted")
    print(f"| {work} | {c0:.3f} s | {c1:.3f} s | {c2:.3f} s | {c2 / c1:.2f} | {w2 / w1:.2f} |")
PY
