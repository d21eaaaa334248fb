#!/usr/bin/env bash
# Where the CLI's share of `dsh-sandbox run --mode read-only -- /bin/true` goes, phase by phase,
# seen from outside: kernel tracepoints (process fork, exec and exit; mkdir and rmdir) recorded
# with `perf record -a` over RUNS runs per backend, the CLI unchanged. Each run is cut at:
#   the CLI's fork by the shell loop, its exec, its first cgroup mkdir (mode 0755), its fork of
#   the supervisor, the runner's exec by the supervisor's child, that child's exit, the
#   supervisor's exit and the CLI's exit;
# and the same runner argv started directly (`dsh-sandbox confine --status-channels`) is cut at
# its fork, exec and exit. Medians per phase, in milliseconds. The tracepoints cost a few
# microseconds each, and only these events are recorded; the absolute figures are a little above
# hyperfine's (bench/run/cli_share.sh), the split is what this adds.
# Needs root (system-wide tracepoints) and perf. Usage: bench/run/phases.sh [BUILD_DIR]
# RUNS= (default 200).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_setup run "${1:-}"
runs="${RUNS:-200}"
command -v perf >/dev/null || { echo "perf is required (apt-get install linux-perf)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "run as root: system-wide tracepoints" >&2; exit 1; }
workspace="$(mktemp -d /var/tmp/dsh-bench-XXXXXX)"
trap 'rm -rf "$workspace"' EXIT
cd "$workspace"
landlock_cfg="$out/landlock-only.json"
echo '{"bwrapPath":"/nonexistent/bwrap"}' >"$landlock_cfg"
events=(-e sched:sched_process_fork -e sched:sched_process_exec -e sched:sched_process_exit
        -e syscalls:sys_enter_mkdir -e syscalls:sys_enter_rmdir)

echo "host: $(uname -r), $(nproc) CPUs; load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for backend in bwrap+landlock landlock; do
  extra=()
  [ "$backend" = landlock ] && extra=(--config "$landlock_cfg")
  "$cli" run --mode read-only "${extra[@]}" -- /bin/true  # must work; warms the verdict cache
  argv="$("$cli" confine --status-channels --mode read-only "${extra[@]}" -- /bin/true |
          python3 -c 'import json, sys; print(" ".join(json.load(sys.stdin)["argv"]))')"
  for kind in run argv; do
    if [ "$kind" = run ]; then
      loop="for i in \$(seq $runs); do $cli run --mode read-only ${extra[*]} -- /bin/true; done"
    else
      loop="for i in \$(seq $runs); do $argv 3>/dev/null 4>/dev/null; done"
    fi
    bash -c "$loop" >/dev/null 2>&1  # warm-up, untraced
    perf record -q -a -o "$out/phases-$backend-$kind.data" "${events[@]}" -- \
      bash -c "$loop" >/dev/null 2>&1
    perf script -i "$out/phases-$backend-$kind.data" >"$out/phases-$backend-$kind.txt" \
      2>/dev/null
  done
  python3 "$repo/bench/run/phases.py" "$backend" "$out/phases-$backend-run.txt" \
    "$out/phases-$backend-argv.txt"
done
