#!/usr/bin/env bash
# The path rules' cost, end to end: `dsh-sandbox confine` with the default carve-outs (a git
# workspace, a home holding the usual secrets) against the same call without them, and
# `dsh-sandbox run -- /bin/true` with N extra writable roots, then N unreadable paths (N = 0,
# 10, 100, 1000) on bwrap+landlock and on Landlock alone, each hyperfine run with a bare /bin/true
# as its baseline. Usage: bench/policy/paths.sh [BUILD_DIR]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_setup policy "${1:-}"
runs="${RUNS:-30}"
base="$(mktemp -d /var/tmp/dsh-policy-bench.XXXXXX)"
trap 'rm -rf "$base"' EXIT
conf="$(mktemp -d /var/lib/dsh-policy-bench.XXXXXX 2>/dev/null || mktemp -d "$HOME/.dsh-policy-bench.XXXXXX")"
trap 'rm -rf "$base" "$conf"' EXIT
echo '{"bwrapPath": "/nonexistent/dsh-bench/bwrap"}' >"$conf/landlock.json"

# A home with the usual secrets and startup files, a git workspace, and an empty home.
home="$base/home"
mkdir -p "$home/.ssh" "$home/.aws" "$home/.gnupg" "$home/.config/gcloud" "$home/.kube" \
  "$base/ws" "$base/empty-home" "$base/plain"
touch "$home/.netrc" "$home/.git-credentials" "$home/.npmrc" "$home/.bashrc" "$home/.profile"
git -C "$base/ws" init -q .
for i in $(seq 1 1000); do mkdir -p "$base/roots/r$i" "$base/secrets/s$i"; done

echo "== confine: default carve-outs against none (workspace-write, bwrap+landlock)"
HOME="$home" "$cli" confine --mode workspace-write --workspace "$base/ws" -- true >/dev/null
hyperfine -N --warmup 20 --runs "$((runs * 10))" --export-json "$out/defaults.json" \
  -n bare /bin/true \
  -n 'confine, no defaults apply' \
  "env HOME=$base/empty-home $cli confine --mode workspace-write --workspace $base/plain -- true" \
  -n 'confine, git workspace + secrets' \
  "env HOME=$home $cli confine --mode workspace-write --workspace $base/ws -- true"

for backend in bwrap+landlock landlock; do
  config=()
  [ "$backend" = landlock ] && config=(--config "$conf/landlock.json")
  for kind in allow-write deny-read; do
    for n in 0 10 100 1000; do
      args=()
      for i in $(seq 1 "$n"); do
        if [ "$kind" = allow-write ]; then args+=(--allow-write "$base/roots/r$i"); fi
        if [ "$kind" = deny-read ]; then args+=(--deny-read "$base/secrets/s$i"); fi
      done
      HOME="$base/empty-home" "$cli" run --mode workspace-write --workspace "$base/plain" \
        "${config[@]}" "${args[@]}" -- /bin/true
      echo "== run, $backend, $n x --$kind"
      hyperfine -N --warmup 3 --runs "$runs" --export-json "$out/paths-$backend-$kind-$n.json" \
        -n bare /bin/true \
        -n "run, $backend, $n x --$kind" \
        "env HOME=$base/empty-home $cli run --mode workspace-write --workspace $base/plain ${config[*]} ${args[*]} -- /bin/true" |
        grep -E 'Time \(mean' || true
    done
  done
done
