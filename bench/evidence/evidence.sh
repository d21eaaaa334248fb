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
extract="rm -rf $ws/x && mkdir $ws/x && tar -C $ws/x -xf $work/files.tar"
build_cmd="rm -rf $ws/p && cp -r $work/proj $ws/p && make -s -C $ws/p -j2"

hyperfine --runs "$runs" --warmup 2 -N \
  -n "extract, no evidence" "$(ll '') sh -c '$extract'" \
  -n "extract, evidence" "$(ll --evidence) sh -c '$extract'" \
  -n "make -j2, no evidence" "$(ll '') sh -c '$build_cmd'" \
  -n "make -j2, evidence" "$(ll --evidence) sh -c '$build_cmd'" \
  --export-markdown "$work/result.md"
cat "$work/result.md"
