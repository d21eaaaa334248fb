#!/usr/bin/env bash
# The README's second command: build and run every test.
#  1. the project (g++): unit and integration tests, one ctest entry per test case; integration
#     cases run as the caller and, when the caller is root, again as nobody;
#  2. the README's first command (scripts/demo.sh): a Release build of the programs, and its run;
#  3. an AddressSanitizer + UndefinedBehaviorSanitizer build: the unit tests;
#  4. a clang build: the fuzzers, each for a bounded time;
#  5. clang-format and clang-tidy over the project's C++.
# Set DSH_SANDBOX_TESTS_MUST_RUN=1 (CI does) to turn every skipped test into a failure.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
repo="$(repo_root)"
ensure_packages
build="$(build_root "$repo")"
passed=0
failed=0
skipped=0

# run_ctest DIR [ctest args...]: runs ctest, adds its counts to the totals, returns its status.
run_ctest() {
  local dir="$1" log status=0
  shift
  log="$(mktemp)"
  ctest --test-dir "$dir" --output-on-failure "$@" 2>&1 | tee "$log" || status=$?
  local summary
  summary="$(grep -E '[0-9]+ tests failed out of [0-9]+' "$log" | tail -n 1 || true)"
  # A GoogleTest skip is a ctest entry that did not run ("(Skipped)"): it counts apart, and as a
  # failure when DSH_SANDBOX_TESTS_MUST_RUN=1.
  local nskipped
  nskipped="$(grep -cE '^[[:space:]]*[0-9]+ - .* \(Skipped\)$' "$log" || true)"
  rm -f "$log"
  if [ -z "$summary" ]; then
    echo "test.sh: ctest in $dir ran no test" >&2
    return 1
  fi
  local nfailed ntotal
  nfailed="$(sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1/' <<<"$summary")"
  ntotal="$(sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\2/' <<<"$summary")"
  passed=$((passed + ntotal - nfailed - nskipped))
  if [ "${DSH_SANDBOX_TESTS_MUST_RUN:-}" = 1 ] && [ "$nskipped" -gt 0 ]; then
    echo "test.sh: $nskipped tests skipped in $dir, but DSH_SANDBOX_TESTS_MUST_RUN=1" >&2
    nfailed=$((nfailed + nskipped))
    status=1
  else
    skipped=$((skipped + nskipped))
  fi
  failed=$((failed + nfailed))
  return "$status"
}

# Each stage's start says how long the run has taken so far (CI's time budget is read from it).
stage() { printf '\n=== [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }
status=0

stage "build ($build) and run unit + integration tests"
configure_and_build "$build"
run_ctest "$build" -j2 || status=1

stage "the README's first command: a Release unity build of the programs, and the demo run"
if "$repo/scripts/demo.sh"; then
  passed=$((passed + 1))
else
  failed=$((failed + 1))
  status=1
fi

stage "ASan + UBSan build: unit tests"
# Every unit case runs here, those that spawn through exec's supervisor included (RunProbe,
# LocalProviderFakeRunners). They once read a garbled spawn report under ASan: the command's side
# of the supervisor's clone runs on a stack ASan does not know, and ASan's warning about it
# (google/sanitizers#189) landed on the error pipe. That side is now uninstrumented
# (DSH_COMMAND_SIDE in src/exec/supervisor.cpp); it was no leak and no memory error of ours.
# The library is compiled a batch of files at a time (a unity build; the tests stay one file each,
# tests/CMakeLists.txt): the shared headers are then parsed and instrumented once per batch, not
# once per file, which is most of this stage's build. The first build stays one file at a time:
# lint reads its compile commands file by file, and each file must compile on its own.
configure_and_build "$build-asan" -DDSH_SANITIZE=ON -DDSH_BENCH=OFF -DDSH_INTEGRATION_TESTS=OFF \
  -DCMAKE_UNITY_BUILD=ON
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  run_ctest "$build-asan" -L unit -j2 || status=1

stage "clang build: fuzzers, bounded"
# Only the fuzzers and what they link: the rest of a clang build is compiled by nothing here.
configure "$build-fuzz" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DDSH_FUZZ=ON -DDSH_BENCH=OFF -DDSH_INTEGRATION_TESTS=OFF
cmake --build "$build-fuzz" --target dsh_fuzzers
run_ctest "$build-fuzz" -L fuzz -j2 || status=1

stage "clang-format and clang-tidy"
if "$repo/scripts/lint.sh" "$build"; then
  passed=$((passed + 1))
else
  failed=$((failed + 1))
  status=1
fi

echo
echo "tests: $passed passed, $failed failed, $skipped skipped, in $((SECONDS / 60))m$((SECONDS % 60))s"
exit "$status"
