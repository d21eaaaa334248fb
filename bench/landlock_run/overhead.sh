#!/usr/bin/env bash
# Launcher overhead: a bare fork+exec of /bin/true versus the static and the dynamically linked
# launcher confining the same /bin/true (one --ro / grant), all in ONE hyperfine run so they
# share the machine's state. -N: hyperfine forks+execs each command itself, no shell between.
# A static exec-only program (exec_chain.cc) gives the floor any exec-based launcher pays.
# Prints median ratios against the bare exec (target: static <= 1.10x).
source "$(dirname "$0")/common.sh"
runs=${RUNS:-2000}
hyperfine -N --warmup 200 --runs "$runs" --export-json "$results/overhead.json" \
  -n bare '/bin/true' \
  -n exec-chain "$exec_chain /bin/true" \
  -n static "$static_launcher --ro / -- /bin/true" \
  -n dynamic "$dynamic_launcher --ro / -- /bin/true" >&2
python3 - "$results/overhead.json" <<'PY'
import json, statistics, sys
rows = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
bare = statistics.median(rows["bare"]["times"])
for name in ("bare", "exec-chain", "static", "dynamic"):
    median = statistics.median(rows[name]["times"])
    print(f"{name:10s} median {median * 1e6:8.1f} us  ratio {median / bare:5.3f}x")
PY
