#!/usr/bin/env bash
# Real work under each backend, against bare and bwrap alone, in one hyperfine run: `grep -r` and
# `git status` over a repository of about 1,500 files. The confined commands are the argv
# `dsh-sandbox confine` prints (what a spawner runs, the launcher's grants, --list and --chdir
# included), once as chosen here (bwrap with the launcher inside) and once on Landlock alone
# (bwrap made unusable by the config), in read-only mode with the default unreadable paths, as
# a plain spawner runs them (no status channels, so no evidence). A failing command fails the run.
#   bench/run/real_work.sh [BUILD_DIR] [RUNS]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_setup real_work "${1:-}"
runs=${2:-20}
work=$(mktemp -d /var/tmp/dsh-real-work.XXXXXX)
trap 'rm -rf "$work"' EXIT

# 1,500 files in 30 directories, committed, with one file changed so git status has work.
repo_dir="$work/repo"
for d in $(seq 1 30); do
  mkdir -p "$repo_dir/src/d$d"
  for f in $(seq 1 50); do printf 'line %d %d\nneedle? no\n' "$d" "$f" > "$repo_dir/src/d$d/f$f.c"; done
done
git -C "$repo_dir" init -q
git -C "$repo_dir" -c user.name=b -c user.email=b@b add -A
git -C "$repo_dir" -c user.name=b -c user.email=b@b commit -qm tree
echo changed >> "$repo_dir/src/d1/f1.c"
git -C "$repo_dir" status >/dev/null  # the index's stat data is fresh, as in a working tree

# The config lies where no confined run can write (the trust check refuses /tmp and the workspace).
config_dir="$out/config"
mkdir -p "$config_dir"
echo '{"bwrapPath": "/nonexistent/dsh-bench/bwrap"}' > "$config_dir/no-bwrap.json"

# confine's argv for WORKLOAD under the given extra flags, as one shell-quoted command line.
confined() {
  local workload="$1"
  shift
  "$cli" confine --mode read-only --workspace "$repo_dir" "$@" -- /bin/sh -c "$workload" |
    python3 -c 'import json, shlex, sys; print(shlex.join(json.load(sys.stdin)["argv"]))'
}
bwrap_alone() {
  printf '/usr/bin/bwrap --ro-bind / / --dev /dev --unshare-pid --proc /proc --chdir %s -- /bin/sh -c %q' \
    "$repo_dir" "$1"
}

grep_work="grep -r -c needle $repo_dir/src >/dev/null"
git_work="git -C $repo_dir status --porcelain >/dev/null"

uptime
hyperfine --runs "$runs" --warmup 3 -N \
  -n "grep, bare" "/bin/sh -c '$grep_work'" \
  -n "grep, bwrap alone" "$(bwrap_alone "$grep_work")" \
  -n "grep, bwrap+landlock" "$(confined "$grep_work")" \
  -n "grep, landlock" "$(confined "$grep_work" --config "$config_dir/no-bwrap.json")" \
  -n "git status, bare" "/bin/sh -c '$git_work'" \
  -n "git status, bwrap alone" "$(bwrap_alone "$git_work")" \
  -n "git status, bwrap+landlock" "$(confined "$git_work")" \
  -n "git status, landlock" "$(confined "$git_work" --config "$config_dir/no-bwrap.json")" \
  --export-markdown "$out/result.md" --export-json "$out/result.json"
cat "$out/result.md"
uptime
python3 - "$out/result.json" <<'PY'
import json, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
print("| workload | bare | bwrap alone | bwrap+landlock | landlock | bwrap+landlock / bwrap alone | landlock / bare |")
print("|---|---|---|---|---|---|---|")
for w in ("grep", "git status"):
    m = {v: results[f"{w}, {v}"]["median"] for v in ("bare", "bwrap alone", "bwrap+landlock", "landlock")}
    print(f"| {w} | " + " | ".join(f"{m[v] * 1000:.1f} ms" for v in m) +
          f" | {m['bwrap+landlock'] / m['bwrap alone']:.2f} | {m['landlock'] / m['bare']:.2f} |")
PY
