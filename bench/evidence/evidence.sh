#!/usr/bin/env bash
# The cost of --evidence (docs/evidence.md): the same launcher with and without it, in one
# hyperfine run, on a write-heavy workload (extracting 10,000 small files into the workspace) and
# a realistic build (make -j2 of a small C project in the workspace).
#   bench/evidence/evidence.sh BUILD_DIR [RUNS]
set -euo pipefail
build=${1:?usage: evidence.sh BUILD_DIR [RUNS]}
runs=${2:-10}
launcher="$(cd "$build" && pwd)/bin/landlock-run"
work=$(mktemp -d /var/tmp/dsh-evidence-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

# 10,000 small files in 100 directories, as one tarball.
mkdir -p "$work/src-tree"
for d in $(seq 1 100); do
  mkdir -p "$work/src-tree/d$d"
  for f in $(seq 1 100); do echo "file $d $f" > "$work/src-tree/d$d/f$f.txt"; done
done
tar -C "$work/src-tree" -cf "$work/files.tar" .

# A small C project: 40 translation units and a link.
mkdir -p "$work/proj"
for i in $(seq 1 40); do
  printf '#include <stdio.h>\nint f%d(int x) { int s = 0; for (int i = 0; i < x; ++i) s += i * %d; return s; }\n' \
    "$i" "$i" > "$work/proj/u$i.c"
done
{ echo 'int main(void) { return 0; }'; } > "$work/proj/main.c"
cat > "$work/proj/Makefile" <<'MK'
SRCS := $(wildcard *.c)
OBJS := $(SRCS:.c=.o)
app: $(OBJS)
	$(CC) -o $@ $^
%.o: %.c
	$(CC) -O1 -c -o $@ $<
clean:
	rm -f $(OBJS) app
MK

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
# Wall time on a shared host carries every other process's load; the CPU time the command tree
# and the supervisor spent (user + system: hyperfine's rusage of the launcher and its children,
# a mean over the runs) is the work evidence adds, and moves far less with the load.
python3 - "$work/result.json" <<'PY'
import json, statistics, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
def figures(name):
    r = results[name]
    return statistics.median(r["times"]), r["user"] + r["system"]
print("| workload | wall median, no evidence | with | ratio | CPU, no evidence | with | ratio |")
print("|---|---|---|---|---|---|---|")
for work in ("extract", "make -j2"):
    w0, c0 = figures(work + ", no evidence")
    w1, c1 = figures(work + ", evidence")
    print(f"| {work} | {w0:.3f} s | {w1:.3f} s | {w1 / w0:.2f} | {c0:.3f} s | {c1:.3f} s | {c1 / c0:.2f} |")
PY
