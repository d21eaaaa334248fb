# Sourced by the end-to-end bench scripts: `bench_setup NAME [BUILD_DIR]` sets `repo`, `build`
# (the argument, else the worktree's build/), `cli` (its dsh-sandbox, built with its launcher
# first) and `out` ($build/bench/NAME, created) for the script that sources it.
bench_setup() {
  local name="$1"
  repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  build="$(cd "${2:-$repo/build}" && pwd)"  # absolute: a script may leave for a scratch directory
  cmake --build "$build" --target dsh-sandbox landlock-run >/dev/null
  cli="$build/bin/dsh-sandbox"
  out="$build/bench/$name"
  mkdir -p "$out"
}
