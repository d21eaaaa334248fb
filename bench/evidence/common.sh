# Sourced by the evidence benches (evidence.sh, reads.sh): the workloads they share and the table
# they print.

# make_tree DIR: 10,000 small files in 100 directories.
make_tree() {
  local d f
  for d in $(seq 1 100); do
    mkdir -p "$1/d$d"
    for f in $(seq 1 100); do echo "file $d $f" > "$1/d$d/f$f.txt"; done
  done
}

# make_c_project DIR: 40 translation units, each including three system headers, and a link.
make_c_project() {
  local i
  mkdir -p "$1"
  for i in $(seq 1 40); do
    printf '#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\nint f%d(int x) { int s = 0; for (int i = 0; i < x; ++i) s += i * %d; return s; }\n' \
      "$i" "$i" > "$1/u$i.c"
  done
  echo 'int main(void) { return 0; }' > "$1/main.c"
  cat > "$1/Makefile" <<'MK'
OBJS := $(patsubst %.c,%.o,$(wildcard *.c))
app: $(OBJS)
	$(CC) -o $@ $^
%.o: %.c
	$(CC) -O1 -c -o $@ $<
MK
}

# cpu_table RESULT_JSON WORKLOADS VARIANTS: one row per workload ("W, VARIANT" names hyperfine's
# commands; lists separated by ";"), the CPU time (user + system of the launcher, the supervisor
# and the command tree) of each variant, and the last variant's CPU and wall-median ratios to the
# first. CPU moves far less than wall time when other work shares the host.
cpu_table() {
  python3 - "$@" <<'PY'
import json, statistics, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
workloads, variants = sys.argv[2].split(";"), sys.argv[3].split(";")
print("| workload | " + " | ".join("CPU, " + v for v in variants) +
      " | CPU ratio | wall median ratio |")
print("|---" * (len(variants) + 3) + "|")
for work in workloads:
    rows = [results[f"{work}, {v}"] for v in variants]
    cpu = [r["user"] + r["system"] for r in rows]
    wall = [statistics.median(r["times"]) for r in rows]
    print(f"| {work} | " + " | ".join(f"{c:.3f} s" for c in cpu) +
          f" | {cpu[-1] / cpu[0]:.2f} | {wall[-1] / wall[0]:.2f} |")
PY
}
