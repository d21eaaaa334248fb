# Shared by the landlock-run benchmark scripts: locate (and build) the launchers.
# Usage: source common.sh; BUILD defaults to <repo>/build-launcher.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$repo/build-launcher}
if [ ! -f "$BUILD/build.ninja" ] && [ ! -f "$BUILD/Makefile" ]; then
  cmake -S "$repo" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$BUILD" --target landlock-run landlock-run-dynamic landlock-run-glibc-static \
  landlock_run_exec_chain >/dev/null
static_launcher=$BUILD/bin/landlock-run
dynamic_launcher=$BUILD/launcher/landlock-run/landlock-run-dynamic
glibc_static_launcher=$BUILD/launcher/landlock-run/landlock-run-glibc-static
exec_chain=$BUILD/bench/landlock_run/landlock_run_exec_chain
# The musl floor exists only where the shipped launcher links musl (a g++ build).
exec_chain_musl=$BUILD/bench/landlock_run/landlock_run_exec_chain_musl
cmake --build "$BUILD" --target landlock_run_exec_chain_musl >/dev/null 2>&1 || exec_chain_musl=
results=${RESULTS:-$BUILD/bench/landlock_run}
mkdir -p "$results"
command -v hyperfine >/dev/null || { echo "hyperfine is required" >&2; exit 1; }
