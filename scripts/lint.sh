#!/usr/bin/env bash
# clang-format (every tracked C++ file) and clang-tidy must be clean: every check over src/, the
# naming convention over the launcher, the tests and the benchmarks too (one style everywhere),
# and no function of src/ or launcher/ past 60 lines but the listed exceptions
# (scripts/function-size.sh, scripts/function-size-exceptions.txt). Each file is parsed once:
# the function-size findings come out of the same clang-tidy pass as every other check, and are
# judged against the exception list apart.
# Usage: scripts/lint.sh BUILD_DIR   (a configured build with compile_commands.json)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$1"
cd "$repo"
mapfile -t cxx < <(git ls-files '*.cpp' '*.h')
clang-format --dry-run --Werror "${cxx[@]}"
findings="$(mktemp)"
trap 'rm -f "$findings"' EXIT
# tidy [clang-tidy args...] < FILES: appends the output to $findings; a finding other than a
# function's size fails here.
tidy() {
  local output
  output="$(xargs -P2 -n4 clang-tidy -p "$build" --quiet "$@" 2>&1)" || true
  printf '%s\n' "$output" >>"$findings"
  if grep -E 'error:|warning:' <<<"$output" | grep -v '\[readability-function-size'; then
    exit 1
  fi
}
# Only what this build compiles has a compile command: the fuzzers (a clang build) and the
# benchmark a script compiles are left out here. The launcher's musl specs mean nothing to clang.
compiled() {
  git ls-files "$@" |
    while read -r f; do grep -q "\"file\": \"$repo/$f\"" "$build/compile_commands.json" && echo "$f"; done
}
git ls-files 'src/*.cpp' | tidy
compiled 'launcher/*.cpp' | tidy --extra-arg=-Wno-unused-command-line-argument \
  --checks='-*,readability-identifier-naming,readability-function-size' --header-filter='launcher/.*'
compiled 'tests/*.cpp' 'bench/*.cpp' | tidy --extra-arg=-Wno-unused-command-line-argument \
  --checks='-*,readability-identifier-naming' --header-filter='(tests|bench)/.*'
"$repo/scripts/function-size.sh" --judge "$findings"
echo "lint: clang-format, clang-tidy and the function-size gate clean"
