#!/usr/bin/env bash
# The cost of a change to what every run pays (the seccomp filter, the profiles), in ONE hyperfine
# run: `landlock-run -- /bin/true` and `dsh-sandbox run -- /bin/true` on each Linux backend, from
# an older build against this one, interleaved in one session so the host's noise hits both.
# Usage: bench/run/compare.sh OLD_BIN_DIR [BUILD_DIR]   (RUNS= overrides the run count)
# OLD_BIN_DIR holds the older build's dsh-sandbox and landlock-run side by side (for example a
# copy of another checkout's build/bin). Results: BUILD_DIR/bench/run/compare.json.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
old="$(cd "${1:?usage: compare.sh OLD_BIN_DIR [BUILD_DIR]}" && pwd)"
build="$(cd "${2:-$repo/build}" && pwd)"
# Each run's workspace is the working directory: it must not hold the CLI (a binary a confined
# run could replace is refused), so the runs start in a scratch directory of their own.
workspace="$(mktemp -d /var/tmp/dsh-bench-XXXXXX)"
trap 'rm -rf "$workspace"' EXIT
cd "$workspace"
runs="${RUNS:-1000}"
results="$build/bench/run"
mkdir -p "$results"
command -v hyperfine >/dev/null || { echo "hyperfine is required" >&2; exit 1; }
cmake --build "$build" --target dsh-sandbox landlock-run >/dev/null
new="$build/bin"

landlock_cfg="$results/landlock-only.json"
echo '{"bwrapPath":"/nonexistent/bwrap"}' >"$landlock_cfg"
args=(-n bare /bin/true)
for side in old new; do
  dir=${!side}
  # Each CLI without landlock-run beside it confines with bwrap alone.
  alone="$results/compare-bwrap-only-$side"
  mkdir -p "$alone" && cp "$dir/dsh-sandbox" "$alone/dsh-sandbox"
  for c in "$dir/dsh-sandbox run --mode read-only -- /bin/true" \
           "$dir/dsh-sandbox run --mode read-only --config $landlock_cfg -- /bin/true" \
           "$alone/dsh-sandbox run --mode read-only -- /bin/true"; do
    # shellcheck disable=SC2086  # split into words as hyperfine -N splits it
    $c >/dev/null || { echo "$side: $c fails" >&2; exit 1; }
  done
  args+=(-n "landlock-run alone, $side" "$dir/landlock-run --ro / --rw /dev/null -- /bin/true"
         -n "run, bwrap+landlock, $side" "$dir/dsh-sandbox run --mode read-only -- /bin/true"
         -n "run, landlock, $side" "$dir/dsh-sandbox run --mode read-only --config $landlock_cfg -- /bin/true"
         -n "run, bwrap, $side" "$alone/dsh-sandbox run --mode read-only -- /bin/true")
done
echo "host: $(uname -r), $(nproc) CPUs; load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
hyperfine -N --warmup 50 --runs "$runs" --export-json "$results/compare.json" "${args[@]}" >&2
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 - "$results/compare.json" <<'EOF'
import json, sys
rows = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
print(f'{"":32} {"old ms":>8} {"new ms":>8} {"delta ms":>9}')
for name in ["landlock-run alone", "run, bwrap+landlock", "run, landlock", "run, bwrap"]:
    o, n = rows[f"{name}, old"], rows[f"{name}, new"]
    print(f'{name:32} {o["median"]*1e3:8.3f} {n["median"]*1e3:8.3f} '
          f'{(n["median"]-o["median"])*1e3:+9.3f}   (means {o["mean"]*1e3:.3f} / {n["mean"]*1e3:.3f})')
EOF

# The same pairs, interleaved round by round (bench/run/paired.py): the figure to trust when
# the host is loaded, since hyperfine times each command's whole series in turn.
echo "paired, interleaved (${PAIRED_ROUNDS:-1000} rounds):"
pairs=(
  "landlock-run alone=$old/landlock-run --ro / --rw /dev/null -- /bin/true|||$new/landlock-run --ro / --rw /dev/null -- /bin/true"
  "run, bwrap+landlock=$old/dsh-sandbox run --mode read-only -- /bin/true|||$new/dsh-sandbox run --mode read-only -- /bin/true"
  "run, landlock=$old/dsh-sandbox run --mode read-only --config $landlock_cfg -- /bin/true|||$new/dsh-sandbox run --mode read-only --config $landlock_cfg -- /bin/true"
  "run, bwrap=$results/compare-bwrap-only-old/dsh-sandbox run --mode read-only -- /bin/true|||$results/compare-bwrap-only-new/dsh-sandbox run --mode read-only -- /bin/true")
python3 "$repo/bench/run/paired.py" "${PAIRED_ROUNDS:-1000}" "${pairs[@]}"
