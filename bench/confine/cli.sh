#!/usr/bin/env bash
# `dsh-sandbox confine` as a process, end to end with the verdict cache warm, against a bare
# fork+exec of /bin/true in the same hyperfine run. Usage: bench/confine/cli.sh [BUILD_DIR]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_setup confine "${1:-}"
runs="${RUNS:-1000}"
"$cli" confine -- true >/dev/null  # warm the per-user verdict cache
hyperfine -N --warmup 50 --runs "$runs" \
  --export-json "$out/cli.json" \
  -n bare /bin/true \
  -n 'dsh-sandbox confine (cache warm)' "$cli confine --workspace /tmp -- bash -c true" \
  -n 'dsh-sandbox probe (no cache)' "$cli probe"
