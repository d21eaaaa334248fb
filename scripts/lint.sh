#!/usr/bin/env bash
# clang-format (every tracked C++ file) and clang-tidy must be clean: every check over src/, the
# naming convention over the launcher, the tests and the benchmarks too (one style everywhere),
# and no function of src/ or launcher/ past 60 lines but the listed exceptions
# (scripts/function-size.sh, scripts/function-size-exceptions.txt).
# Usage: scripts/lint.sh BUILD_DIR   (a configured build with compile_commands.json)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$1"
cd "$repo"
mapfile -t cxx < <(git ls-files '*.cpp' '*.h')
clang-format --dry-run --Werror "${cxx[@]}"
mapfile -t sources < <(git ls-files 'src/*.cpp' )
printf '%s\n' "${sources[@]}" | xargs -P2 -n4 clang-tidy -p "$build" --quiet 2>&1 |
  { grep -E 'error:|warning:' && exit 1 || exit 0; }
# Only what this build compiles has a compile command: the fuzzers (a clang build) and the
# benchmark a script compiles are left out here. The launcher's musl specs mean nothing to clang.
mapfile -t others < <(git ls-files 'launcher/*.cpp' 'tests/*.cpp' 'bench/*.cpp' |
  while read -r f; do grep -q "\"file\": \"$repo/$f\"" "$build/compile_commands.json" && echo "$f"; done)
printf '%s\n' "${others[@]}" | xargs -P2 -n4 clang-tidy -p "$build" --quiet \
  --extra-arg=-Wno-unused-command-line-argument \
  --checks='-*,readability-identifier-naming' --header-filter='(launcher|tests|bench)/.*' 2>&1 |
  { grep -E 'error:|warning:' && exit 1 || exit 0; }
# Functions stay short: at most 60 lines in src/ and launcher/, but for the listed exceptions.
"$repo/scripts/function-size.sh" "$build"
echo "lint: clang-format, clang-tidy and the function-size gate clean"
