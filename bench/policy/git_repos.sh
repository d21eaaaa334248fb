#!/usr/bin/env bash
# The git state's cost, end to end: `dsh-sandbox run -- /bin/true` under workspace-write in a
# workspace holding 200 nested repositories (each a `git init` with one commit and a few
# directories of files) against the same call in a workspace holding the same directories and no
# repository, in one hyperfine run, on bwrap+landlock and on Landlock alone.
# The host's load is printed before and after; on a shared host the stable figures are the CPU
# time (hyperfine's user + system) and, when strace is installed, the system calls of one call
# per tree (`strace -f -c`, children included), which do not depend on the load.
# Usage: bench/policy/git_repos.sh [BUILD_DIR]   (REPOS=200 RUNS=30 to change the sizes)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_setup policy "${1:-}"
runs="${RUNS:-30}"
repos="${REPOS:-200}"
base="$(mktemp -d /var/tmp/dsh-git-bench.XXXXXX)"
conf="$(mktemp -d /var/lib/dsh-git-bench.XXXXXX 2>/dev/null || mktemp -d "$HOME/.dsh-git-bench.XXXXXX")"
trap 'rm -rf "$base" "$conf"' EXIT
echo '{"bwrapPath": "/nonexistent/dsh-bench/bwrap"}' >"$conf/landlock.json"
mkdir -p "$base/home" "$base/with" "$base/without"
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@e GIT_COMMITTER_NAME=b \
  GIT_COMMITTER_EMAIL=b@e
for i in $(seq 1 "$repos"); do
  for tree in with without; do mkdir -p "$base/$tree/r$i/src/a" "$base/$tree/r$i/doc"; done
  git -C "$base/with/r$i" init -q .
  git -C "$base/with/r$i" commit -q --allow-empty -m init
done
echo "== load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for backend in bwrap+landlock landlock; do
  config=()
  [ "$backend" = landlock ] && config=(--config "$conf/landlock.json")
  for tree in with without; do
    HOME="$base/home" "$cli" run --mode workspace-write --workspace "$base/$tree" "${config[@]}" \
      -- /bin/true
  done
  echo "== run -- /bin/true, $backend, $repos repositories against none"
  hyperfine -N --warmup 3 --runs "$runs" --export-json "$out/git-$backend.json" \
    -n "no repository" \
    "env HOME=$base/home $cli run --mode workspace-write --workspace $base/without ${config[*]} -- /bin/true" \
    -n "$repos repositories" \
    "env HOME=$base/home $cli run --mode workspace-write --workspace $base/with ${config[*]} -- /bin/true"
  if command -v strace >/dev/null; then
    for tree in without with; do
      HOME="$base/home" strace -f -c -o "$out/strace-$backend-$tree.txt" "$cli" run \
        --mode workspace-write --workspace "$base/$tree" "${config[@]}" -- /bin/true
      echo "system calls, $backend, $tree: $(awk '/total$/ {print $(NF-2)}' \
        "$out/strace-$backend-$tree.txt")"
    done
  fi
done
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
