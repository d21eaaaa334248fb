#!/usr/bin/env bash
# The function-size gate: no function of src/ (the proxy included) or launcher/ runs past 60
# lines, except those listed with their reason in scripts/function-size-exceptions.txt. An
# exception that no longer matches a long function is an error too, so the list only shrinks.
# Usage: scripts/function-size.sh BUILD_DIR [FILE...]   (default: every file the build compiles)
#        scripts/function-size.sh --judge OUTPUT         (clang-tidy's output of a run that had
#                                                         readability-function-size on every
#                                                         file; lint.sh's one pass)
# The threshold is .clang-tidy's readability-function-size.LineThreshold; statements and
# branches keep clang-tidy's defaults (800 statements, branches unchecked).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
exceptions="scripts/function-size-exceptions.txt"
whole=1
if [ "${1:-}" = --judge ]; then
  output="$(cat "$2")"
else
  build="$1"
  shift
  if (($# > 0)); then
    files=("$@")
    whole=0
  else
    mapfile -t files < <(git ls-files 'src/*.cpp' 'launcher/*.cpp' |
      while read -r f; do grep -q "\"file\": \"$repo/$f\"" "$build/compile_commands.json" && echo "$f"; done)
  fi
  output="$(printf '%s\n' "${files[@]}" | xargs -P2 -n4 clang-tidy -p "$build" --quiet \
    --extra-arg=-Wno-unused-command-line-argument --checks='-*,readability-function-size' 2>&1)" ||
    true
  if grep -E 'error:' <<<"$output" | grep -vq '\[readability-function-size'; then
    echo "function-size: clang-tidy failed" >&2
    exit 1
  fi
fi
# "FILE FUNCTION" for every function over the threshold (an error under WarningsAsErrors).
found="$(sed -nE "s#^$repo/([^:]+):[0-9]+:[0-9]+: (warning|error): function '([^']+)' exceeds.*#\1 \3#p" \
  <<<"$output" | sort -u)"
listed="$(grep -vE '^\s*(#|$)' "$exceptions" | awk '{print $1, $2}' | sort -u)"
status=0
while read -r entry; do
  [[ -z "$entry" ]] && continue
  if ! grep -qxF "$entry" <<<"$listed"; then
    echo "function-size: $entry is longer than 60 lines; split it along its phases," \
      "or list it with the reason in $exceptions" >&2
    status=1
  fi
done <<<"$found"
if ((whole)); then
  while read -r entry; do
    [[ -z "$entry" ]] && continue
    if ! grep -qxF "$entry" <<<"$found"; then
      echo "function-size: $entry is listed in $exceptions but no longer long; drop it" >&2
      status=1
    fi
  done <<<"$listed"
fi
exit "$status"
