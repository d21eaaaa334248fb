#!/usr/bin/env bash
# `dsh-sandbox run -- /bin/true` end to end, against a bare fork+exec of /bin/true and against
# each backend's runner alone, in ONE hyperfine run (-N: hyperfine forks+execs each command
# itself, no shell in between); then, in an adjacent run with the same anchors, the same
# /bin/true under what a user would pick instead: firejail, Anthropic's sandbox-runtime (srt)
# and OpenAI's `codex sandbox`. Targets: Landlock backend <= 2x bare; bwrap backend <= bwrap
# alone + 1 ms. Usage: bench/run/run.sh [BUILD_DIR]   (RUNS=, PEER_RUNS= override run counts)
#
# The peers are installed HERE, never as project dependencies: firejail, ripgrep and socat (srt
# needs the last two) with apt-get when missing and running as root; srt and codex with npm into
# BUILD_DIR/bench/run/npm, pinned (SRT_VERSION=, CODEX_VERSION= override). A peer that cannot
# run on this host is not timed; its exact error goes to BUILD_DIR/bench/run/unavailable.txt.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:-$repo/build}" && pwd)"
# Each run's workspace is the working directory: it must not hold the CLI (a binary a confined
# run could replace is refused), so the runs start in a scratch directory of their own.
workspace="$(mktemp -d /var/tmp/dsh-bench-XXXXXX)"
trap 'rm -rf "$workspace"' EXIT
cd "$workspace"
runs="${RUNS:-1000}"
peer_runs="${PEER_RUNS:-100}"
srt_version="${SRT_VERSION:-0.0.78}"
codex_version="${CODEX_VERSION:-0.171.0}"
results="$build/bench/run"
mkdir -p "$results"
command -v hyperfine >/dev/null || { echo "hyperfine is required" >&2; exit 1; }

cmake --build "$build" --target dsh-sandbox landlock-run >/dev/null
cli="$build/bin/dsh-sandbox"
launcher="$build/bin/landlock-run"
has_run=0
if "$cli" run --help 2>&1 | grep -q 'dsh-sandbox run'; then has_run=1; else
  echo "warning: this dsh-sandbox has no 'run' subcommand; timing the runners and peers only" >&2
fi

# --- peers: install into the build tree ---------------------------------------------------
if ! command -v firejail >/dev/null || ! command -v rg >/dev/null || ! command -v socat >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y --no-install-recommends firejail ripgrep socat >/dev/null 2>&1 ||
      { apt-get update >/dev/null && apt-get install -y --no-install-recommends firejail ripgrep socat >/dev/null; } ||
      echo "warning: apt-get could not install firejail/ripgrep/socat" >&2
  else
    echo "warning: not root; firejail, ripgrep or socat missing and not installed" >&2
  fi
fi
npm_dir="$results/npm"
installed() { node -p "require('$npm_dir/node_modules/$1/package.json').version" 2>/dev/null; }
if [ "$(installed @anthropic-ai/sandbox-runtime)" != "$srt_version" ] ||
   [ "$(installed @openai/codex)" != "$codex_version" ]; then
  npm install --prefix "$npm_dir" --no-audit --no-fund --loglevel=error \
    "@anthropic-ai/sandbox-runtime@$srt_version" "@openai/codex@$codex_version" >/dev/null ||
    echo "warning: npm install of srt/codex failed" >&2
fi
srt="$npm_dir/node_modules/.bin/srt"
codex="$npm_dir/node_modules/.bin/codex"  # the npm entry point: a node wrapper
codex_native=$(find "$npm_dir"/node_modules/@openai -path '*/vendor/*/bin/codex' -type f 2>/dev/null | head -n1 || true)
# Keep the peers' state in the build tree: codex writes under CODEX_HOME, srt puts its proxy
# sockets in TMPDIR (and leaves them behind). srt's settings: nothing writable, no network.
export CODEX_HOME="$results/codex-home"
srt_tmp="$results/srt-tmp"
srt_settings="$results/srt-settings.json"
mkdir -p "$CODEX_HOME" "$srt_tmp"
echo '{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}' >"$srt_settings"

# --- commands -------------------------------------------------------------------------------
landlock_cfg="$results/landlock-only.json"
echo '{"bwrapPath":"/nonexistent/bwrap"}' >"$landlock_cfg"
bwrap_alone="bwrap --ro-bind / / --dev /dev --unshare-pid --proc /proc --die-with-parent --new-session --cap-drop ALL -- /bin/true"
landlock_alone="$launcher --ro / --rw /dev/null -- /bin/true"
# The exact runner argv `run` would spawn on each backend (from `confine`), for the split of
# dsh-sandbox's own cost from the runner's.
confined() {  # confine ARGS... -> "backend<TAB>argv joined by spaces"
  "$cli" confine --mode read-only "$@" -- /bin/true | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert not any(" " in a or a == "" for a in j["argv"]), "argv word with a space"
print(j["backend"] + "\t" + " ".join(j["argv"]))'
}
IFS=$'\t' read -r natural_backend natural_argv < <(confined)
IFS=$'\t' read -r forced_backend forced_argv < <(confined --config "$landlock_cfg")
echo "natural backend: $natural_backend; with $landlock_cfg: $forced_backend" >&2
# The same CLI installed without landlock-run beside it: the bwrap backend with no Landlock layer.
bwrap_only_dir="$results/bwrap-only"
mkdir -p "$bwrap_only_dir" && cp "$cli" "$bwrap_only_dir/dsh-sandbox"
run_bwrap="$bwrap_only_dir/dsh-sandbox run --mode read-only -- /bin/true"
# The floor under any wrapper process (fork_exec_wait.c), built static against glibc and musl.
floor_glibc="$results/fork-exec-wait-glibc"
floor_musl="$results/fork-exec-wait-musl"
cc -O2 -static -o "$floor_glibc" "$repo/bench/run/fork_exec_wait.c"
command -v musl-gcc >/dev/null || { echo "musl-gcc is required (apt-get install musl-tools)" >&2; exit 1; }
musl-gcc -O2 -static -o "$floor_musl" "$repo/bench/run/fork_exec_wait.c"
run_natural="$cli run --mode read-only -- /bin/true"
run_landlock="$cli run --mode read-only --config $landlock_cfg -- /bin/true"

# Run each command once: it must exit 0 here (hyperfine aborts otherwise). This also warms the
# per-user verdict cache. A failing peer is recorded with its error, not timed.
: >"$results/unavailable.txt"
usable() {  # usable NAME CMD...
  local name=$1 out rc=0; shift
  out=$("$@" 2>&1 </dev/null) || rc=$?
  if [ "$rc" = 0 ]; then return 0; fi
  printf '%s: exit %s: %s\n' "$name" "$rc" "$out" | tee -a "$results/unavailable.txt" >&2
  return 1
}
fast=(-n bare /bin/true -n 'bwrap alone' "$bwrap_alone" -n 'landlock-run alone' "$landlock_alone"
      -n 'runner argv, bwrap+landlock' "$natural_argv" -n 'runner argv, landlock' "$forced_argv"
      -n 'floor: fork+exec+wait, static glibc' "$floor_glibc /bin/true"
      -n 'floor: fork+exec+wait, static musl' "$floor_musl /bin/true")
anchors=(-n bare /bin/true -n 'bwrap alone' "$bwrap_alone")
if [ "$has_run" = 1 ]; then
  for c in "$run_natural" "$run_landlock" "$run_bwrap"; do
    # shellcheck disable=SC2086  # the command is split into words as hyperfine -N splits it
    usable "$c" $c || { echo "dsh-sandbox run fails; stopping" >&2; exit 1; }
    # shellcheck disable=SC2086
    echo "$c --json: $(${c/ run / run --json } | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j.get("backend"), j.get("enforcement"), "exit", j.get("exitCode"))')" >&2
  done
  # The ladder under `run`: `confine` (start-up, config, cached verdict, the wrap; spawns
  # nothing), then `run` (the supervisor, the runner, the command).
  fast+=(-n 'dsh-sandbox confine, landlock' "$cli confine --mode read-only --config $landlock_cfg -- /bin/true"
         -n 'dsh-sandbox run, bwrap+landlock' "$run_natural" -n 'dsh-sandbox run, landlock' "$run_landlock"
         -n 'dsh-sandbox run, bwrap' "$run_bwrap")
  anchors+=(-n 'dsh-sandbox run, bwrap+landlock' "$run_natural" -n 'dsh-sandbox run, landlock' "$run_landlock")
fi
peers=()
fj_plain="firejail --quiet --noprofile /bin/true"
fj_ro="firejail --quiet --noprofile --read-only=/ --caps.drop=all --nonewprivs --seccomp /bin/true"
srt_cmd="env TMPDIR=$srt_tmp $srt --settings $srt_settings /bin/true"
# shellcheck disable=SC2086
usable "firejail" $fj_plain && peers+=(-n 'firejail --noprofile' "$fj_plain")
# shellcheck disable=SC2086
usable "firejail read-only" $fj_ro && peers+=(-n 'firejail read-only' "$fj_ro")
# shellcheck disable=SC2086
usable "srt" $srt_cmd && peers+=(-n 'srt' "$srt_cmd")
usable "codex sandbox" "$codex" sandbox -- /bin/true && peers+=(-n 'codex sandbox (npm)' "$codex sandbox -- /bin/true")
if [ -n "$codex_native" ] && usable "codex sandbox (native)" "$codex_native" sandbox -- /bin/true; then
  peers+=(-n 'codex sandbox (native binary)' "$codex_native sandbox -- /bin/true")
fi

# --- measure --------------------------------------------------------------------------------
echo "host: $(uname -r), $(nproc) CPUs; load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
hyperfine -N --warmup 50 --runs "$runs" --export-json "$results/run.json" "${fast[@]}" >&2
echo "load between: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
hyperfine -N --warmup 5 --runs "$peer_runs" --export-json "$results/peers.json" \
  "${anchors[@]}" "${peers[@]}" >&2
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
rm -rf "${srt_tmp:?}"/*

python3 - "$results/run.json" "$results/peers.json" <<'PY'
import json, statistics, sys

def load(path):
    return {r["command"]: r["times"] for r in json.load(open(path))["results"]}

def q(ts, p):
    s = sorted(ts); return s[min(len(s) - 1, int(p * len(s)))]

for path in sys.argv[1:]:
    rows = load(path)
    bare = statistics.median(rows["bare"])
    print(f"{path}  ({len(rows['bare'])} runs per command)")
    for name, ts in rows.items():
        m = statistics.median(ts)
        print(f"  {name:40s} median {m * 1e6:9.1f} us  (p25 {q(ts, .25) * 1e6:9.1f}, p75 {q(ts, .75) * 1e6:9.1f})"
              f"  ratio {m / bare:7.2f}x")
    med = {k: statistics.median(v) for k, v in rows.items()}
    if "dsh-sandbox run, landlock" in med:
        ll = med["dsh-sandbox run, landlock"] / bare
        print(f"  target landlock <= 2x bare: {ll:.2f}x -> {'met' if ll <= 2 else 'MISSED'}")
    for backend, runner in (("bwrap", "bwrap alone"),
                            ("bwrap+landlock", "bwrap alone"),
                            ("bwrap+landlock", "runner argv, bwrap+landlock")):
        if f"dsh-sandbox run, {backend}" in med and runner in med:
            extra = (med[f"dsh-sandbox run, {backend}"] - med[runner]) * 1e3
            print(f"  target run on {backend} <= {runner} + 1 ms: +{extra:.2f} ms"
                  f" -> {'met' if extra <= 1 else 'MISSED'}")
PY
if [ -s "$results/unavailable.txt" ]; then echo "not timed:"; cat "$results/unavailable.txt"; fi
