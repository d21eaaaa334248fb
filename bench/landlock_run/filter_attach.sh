#!/usr/bin/env bash
# The CPU cost of installing landlock-run's default seccomp filter, an older revision's against
# this tree's: filter_attach.cpp built against each revision's seccomp_filter source, run alternately
# in batches so drift hits both. Usage: bench/landlock_run/filter_attach.sh OLD_REV [BATCHES]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
old_rev="${1:?usage: filter_attach.sh OLD_REV [BATCHES]}"
batches="${2:-10}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/old" "$work/new"
# Older revisions name the generator seccomp_filter.cc; both sides are compiled as .cpp.
if git -C "$repo" cat-file -e "$old_rev:launcher/landlock-run/seccomp_filter.cpp" 2>/dev/null; then
  old_ext=cpp
else
  old_ext=cc
fi
git -C "$repo" show "$old_rev:launcher/landlock-run/seccomp_filter.$old_ext" >"$work/old/seccomp_filter.cpp"
cp "$repo/launcher/landlock-run/seccomp_filter.cpp" "$work/new/seccomp_filter.cpp"
for f in seccomp_filter.h seccomp_rules.h; do
  git -C "$repo" show "$old_rev:launcher/landlock-run/$f" >"$work/old/$f"
  cp "$repo/launcher/landlock-run/$f" "$work/new/$f"
done
for side in old new; do
  g++ -std=c++20 -O2 -I"$work/$side" -o "$work/$side/filter_attach" \
    "$repo/bench/landlock_run/filter_attach.cpp" "$work/$side/seccomp_filter.cpp"
done
for _ in $(seq "$batches"); do
  for side in old new; do echo "$side $("$work/$side/filter_attach" 500)"; done
done | python3 -c '
import re, statistics, sys
rows = {"old": [], "new": []}
for line in sys.stdin:
    side, rest = line.split(" ", 1)
    rows[side].append({k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", rest)})
for side in ("old", "new"):
    w = statistics.median(r["median_with_us"] for r in rows[side])
    wo = statistics.median(r["median_without_us"] for r in rows[side])
    print(f"{side}: child CPU with filter {w:.1f} us, without {wo:.1f} us, filter {w - wo:+.1f} us")
'
