#!/usr/bin/env bash
# `dsh-sandbox confine` as a process, end to end with the verdict cache warm, against a bare
# fork+exec of /bin/true in the same hyperfine run. Usage: bench/confine/cli.sh [BUILD_DIR]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$repo/build}"
runs="${RUNS:-1000}"
cmake --build "$build" --target dsh-sandbox landlock-run >/dev/null
cli="$build/bin/dsh-sandbox"
"$cli" confine -- true >/dev/null  # warm the per-user verdict cache
mkdir -p "$build/bench/confine"
hyperfine -N --warmup 50 --runs "$runs" \
  --export-json "$build/bench/confine/cli.json" \
  -n bare /bin/true \
  -n 'dsh-sandbox confine (cache warm)' "$cli confine --workspace /tmp -- bash -c true" \
  -n 'dsh-sandbox probe (no cache)' "$cli probe"
