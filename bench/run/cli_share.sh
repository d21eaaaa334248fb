#!/usr/bin/env bash
# The CLI's own share of a run: `dsh-sandbox run --mode read-only -- /bin/true` minus the exact
# runner argv that run spawns (`dsh-sandbox confine --status-channels`), started directly, in ONE
# hyperfine run per backend: bwrap+landlock (the natural one here) and Landlock alone (`--config`
# naming a missing bwrap). The argv's status channels (fds 3 and 4) are open on /dev/null in
# hyperfine itself, so the runners find them as they find run's pipes. Besides the wall-clock
# medians, hyperfine's user+system CPU of each (the whole tree's, mean per run) is reported: on a
# shared host it moves less than the wall clock. Target: a share of at most 0.5 ms.
# The same hyperfine run also times the floor under any CLI: the runner argv started by a static
# program that only spawns it and waits (fork_exec_wait.c), whose share is what a process between
# the caller and the runners costs before it does any work.
# Usage: bench/run/cli_share.sh [BUILD_DIR]   RUNS= (default 300); OLD=DIR: also time the
# dsh-sandbox in DIR (with its landlock-run beside it) in the same hyperfine runs, as "old".
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:-$repo/build}" && pwd)"
runs="${RUNS:-300}"
old="${OLD:+$(cd "$OLD" && pwd)}"
results="$build/bench/run"
mkdir -p "$results"
command -v hyperfine >/dev/null || { echo "hyperfine is required" >&2; exit 1; }
# The workspace is the working directory: a scratch directory that does not hold the CLI.
workspace="$(mktemp -d /var/tmp/dsh-bench-XXXXXX)"
trap 'rm -rf "$workspace"' EXIT
cd "$workspace"
landlock_cfg="$results/landlock-only.json"
echo '{"bwrapPath":"/nonexistent/bwrap"}' >"$landlock_cfg"

argv_of() {  # argv_of CLI ARGS... -> the runner argv run would spawn, one line, space-joined
  "$1" confine --status-channels --mode read-only "${@:2}" -- /bin/true | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert not any(" " in a or a == "" for a in j["argv"]), "argv word with a space"
assert all(c["fd"] in (3, 4) for c in j["statusChannels"]), j["statusChannels"]
print(" ".join(j["argv"]))'
}

floor="$results/fork_exec_wait"
cc -O2 -static -o "$floor" "$repo/bench/run/fork_exec_wait.c"
clis=("new=$build/bin/dsh-sandbox")
[ -n "$old" ] && clis+=("old=$old/dsh-sandbox")
echo "host: $(uname -r), $(nproc) CPUs; load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for backend in bwrap+landlock landlock; do
  extra=()
  [ "$backend" = landlock ] && extra=(--config "$landlock_cfg")
  args=()
  for entry in "${clis[@]}"; do
    name=${entry%%=*} cli=${entry#*=}
    "$cli" run --mode read-only "${extra[@]}" -- /bin/true  # must work; warms the verdict cache
    args+=(-n "$name: runner argv" "$(argv_of "$cli" "${extra[@]}")"
           -n "$name: dsh-sandbox run" "$cli run --mode read-only ${extra[*]} -- /bin/true")
  done
  args+=(-n "floor: runner argv under a wrapper" "$floor $(argv_of "${clis[0]#*=}" "${extra[@]}")")
  hyperfine -N --warmup 20 --runs "$runs" --export-json "$results/cli_share-$backend.json" \
    "${args[@]}" 3>/dev/null 4>/dev/null >/dev/null 2>"$results/cli_share-$backend.log"
  echo "load after $backend: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  python3 - "$results/cli_share-$backend.json" "$backend" <<'PY'
import json, statistics, sys
rows = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
for side in ("old", "new"):
    run, argv = rows.get(f"{side}: dsh-sandbox run"), rows.get(f"{side}: runner argv")
    if not run:
        continue
    med = lambda r: statistics.median(r["times"]) * 1e3
    cpu = lambda r: (r["user"] + r["system"]) * 1e3
    share = med(run) - med(argv)
    print(f"{sys.argv[2]:15} {side}: run {med(run):6.2f} ms, runner argv {med(argv):6.2f} ms,"
          f" CLI's share {share:+.2f} ms (CPU {cpu(run):.2f} - {cpu(argv):.2f} ="
          f" {cpu(run) - cpu(argv):+.2f} ms); target <= 0.5 ms: {'met' if share <= 0.5 else 'missed'}")
floor, argv = rows["floor: runner argv under a wrapper"], rows["new: runner argv"]
print(f"{sys.argv[2]:15} floor: the runner argv under a static spawn-and-wait wrapper "
      f"{med(floor):6.2f} ms, the wrapper's share {med(floor) - med(argv):+.2f} ms "
      f"(CPU {cpu(floor) - cpu(argv):+.2f} ms)")
PY
done
