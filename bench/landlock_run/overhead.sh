#!/usr/bin/env bash
# Launcher overhead: a bare fork+exec of /bin/true versus the shipped launcher (static musl with
# g++) and its glibc twins (static, dynamic) confining the same /bin/true (one --ro / grant), all
# in ONE hyperfine run so they share the machine's state. -N: hyperfine forks+execs each command
# itself, no shell between. Static exec-only programs (exec_chain.cpp, glibc and musl) give the
# floor any exec-based launcher pays with that libc. OLD=/path/to/landlock-run adds a row for an
# earlier build. Prints median ratios against the bare exec (target: static <= 1.10x).
source "$(dirname "$0")/common.sh"
runs=${RUNS:-2000}
rows=(bare exec-chain)
args=(-n bare '/bin/true' -n exec-chain "$exec_chain /bin/true")
if [ -n "$exec_chain_musl" ]; then
  rows+=(exec-chain-musl)
  args+=(-n exec-chain-musl "$exec_chain_musl /bin/true")
fi
rows+=(static glibc-static dynamic)
args+=(-n static "$static_launcher --ro / -- /bin/true"
  -n glibc-static "$glibc_static_launcher --ro / -- /bin/true"
  -n dynamic "$dynamic_launcher --ro / -- /bin/true")
if [ -n "${OLD:-}" ]; then
  rows+=(old)
  args+=(-n old "$OLD --ro / -- /bin/true")
fi
hyperfine -N --warmup 200 --runs "$runs" --export-json "$results/overhead.json" "${args[@]}" >&2
python3 - "$results/overhead.json" "${rows[@]}" <<'PY'
import json, statistics, sys
rows = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
bare = statistics.median(rows["bare"]["times"])
for name in sys.argv[2:]:
    median = statistics.median(rows[name]["times"])
    print(f"{name:15s} median {median * 1e6:8.1f} us  ratio {median / bare:5.3f}x")
PY
