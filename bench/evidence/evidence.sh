#!/usr/bin/env bash
# The cost of --evidence (docs/evidence-and-network.md): the same launcher with and without it, in one
# hyperfine run, on a write-heavy workload (extracting 10,000 small files into the workspace) and
# a realistic build (make -j2 of a small C project in the workspace).
#   bench/evidence/evidence.sh BUILD_DIR [RUNS]
set -euo pipefail
build=${1:?usage: evidence.sh BUILD_DIR [RUNS]}
runs=${2:-10}
launcher="$(cd "$build" && pwd)/bin/landlock-run"
work=$(mktemp -d /var/tmp/dsh-evidence-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# 10,000 small files in 100 directories, as one tarball; a small C project.
make_tree "$work/src-tree"
tar -C "$work/src-tree" -cf "$work/files.tar" .
make_c_project "$work/proj"

ws="$work/ws"
mkdir -p "$ws"
ll() { echo "$launcher --ro / --rw /dev/null --rw /tmp --rw $ws $1 --"; }
# The removal of the previous tree is --prepare, outside the measurement: its unlinks would be
# notified too, but the workload measured is the extraction.
extract="mkdir $ws/x && tar -C $ws/x -xf $work/files.tar"
build_cmd="cp -r $work/proj $ws/p && make -s -C $ws/p -j2"

uptime
hyperfine --runs "$runs" --warmup 2 -N \
  --prepare "rm -rf $ws/x $ws/p" \
  -n "extract, no evidence" "$(ll '') sh -c '$extract'" \
  -n "extract, evidence" "$(ll --evidence) sh -c '$extract'" \
  -n "make -j2, no evidence" "$(ll '') sh -c '$build_cmd'" \
  -n "make -j2, evidence" "$(ll --evidence) sh -c '$build_cmd'" \
  --export-markdown "$work/result.md" --export-json "$work/result.json"
cat "$work/result.md"
uptime
cpu_table "$work/result.json" "extract;make -j2" "no evidence;evidence"
