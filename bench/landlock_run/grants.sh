#!/usr/bin/env bash
# Cost per grant: the static launcher with 1, 10, 100 and 1000 --ro grants (distinct existing
# directories) confining /bin/true, in ONE hyperfine run. Prints each median and the
# least-squares slope in microseconds per grant, plus the worst deviation from the line
# (target: <= 3 us per grant, linear). A control series runs /bin/true directly with the very
# same argument words, so the share of the slope that is only execve copying a longer argv
# (paid by any launcher whose grants travel in argv) can be told apart from the launcher's own.
source "$(dirname "$0")/common.sh"
runs=${RUNS:-500}
grants_dir=$(mktemp -d /tmp/llrun-bench-XXXXXX)
trap 'rm -rf "$grants_dir"' EXIT
for i in $(seq 1 1000); do mkdir "$grants_dir/d$i"; done
args=()
for n in 1 10 100 1000; do
  cmd="$static_launcher"
  for i in $(seq 1 "$n"); do cmd+=" --ro $grants_dir/d$i"; done
  # /bin/true needs its binary and libraries readable: one --ro /usr covers them.
  args+=(-n "$n" "$cmd --ro /usr --ro /lib --ro /lib64 -- /bin/true")
  args+=(-n "argv-$n" "/bin/true ${cmd#"$static_launcher"} --ro /usr --ro /lib --ro /lib64 --")
done
hyperfine -N --warmup 50 --runs "$runs" --export-json "$results/grants.json" "${args[@]}" >&2
python3 - "$results/grants.json" <<'PY'
import json, statistics, sys
rows = json.load(open(sys.argv[1]))["results"]

def fit(prefix):
    pts = [(int(r["command"][len(prefix):]), statistics.median(r["times"]) * 1e6)
           for r in rows if r["command"].startswith(prefix) and r["command"][len(prefix):].isdigit()]
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return pts, slope, my - slope * mx

for label, prefix in (("landlock-run", ""), ("/bin/true, same argv", "argv-")):
    pts, slope, icept = fit(prefix)
    print(label)
    for x, y in pts:
        print(f"  {x:5d} grants  median {y:9.1f} us  (line: {icept + slope * x:9.1f} us)")
    dev = max(abs(y - icept - slope * x) for x, y in pts)
    print(f"  slope {slope:.3f} us/grant, intercept {icept:.1f} us, max deviation {dev:.1f} us")
PY
