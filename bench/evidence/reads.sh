#!/usr/bin/env bash
# The cost of naming refused reads (docs/evidence-and-network.md, carve-outs): with an unreadable path noted
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

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
mkdir -p "$work/secret"
make_tree "$work/tree"
make_c_project "$work/proj"
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
cpu_table "$work/result.json" "opens;grep;make" "no evidence;evidence;evidence, unreadable noted"
