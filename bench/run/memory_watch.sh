#!/usr/bin/env bash
# The cost of the supervisor's watch of the tree's memory, which runs only where no cgroup bounds
# memory (RLIMIT_DATA: a user without a delegated cgroup, nobody on this kind of host). One
# binary, two variants: the default bound (watched) against `--max-memory unlimited` (no
# RLIMIT_DATA, no watch); everything else is the same. Run as root it drops to nobody (setpriv),
# as any other user it runs as that user.
# 1. a short run (`/bin/true`), interleaved (paired.py): what a run pays for the watch's set-up;
# 2. the CPU time (user+sys of the whole tree, /usr/bin/time) of a run whose command sleeps, alone
#    and with 100 sleeping children: what the watch's looks every 100 ms cost while a tree lives.
# Usage: bench/run/memory_watch.sh [BUILD_DIR]   (ROUNDS= for the paired rounds, SLEEP= seconds)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:-$repo/build}" && pwd)"
cli="$build/bin/dsh-sandbox"
rounds="${ROUNDS:-200}"
sleep_s="${SLEEP:-10}"
# The config outside the workspace: a config a confined run could have written is refused.
scratch="$(mktemp -d /var/tmp/dsh-bench-XXXXXX)"
chmod 0755 "$scratch"
trap 'rm -rf "$scratch"' EXIT
workspace="$scratch/ws"
mkdir -m 0777 "$workspace"
as_user=()
[ "$(id -u)" = 0 ] && as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
landlock_cfg="$scratch/landlock-only.json"
echo '{"bwrapPath":"/nonexistent/bwrap"}' >"$landlock_cfg"
chmod 0644 "$landlock_cfg"
cd "$workspace"
run=("$cli" run --mode workspace-write --workspace "$workspace")
for config in "" "--config $landlock_cfg"; do
  backend=${config:+landlock}; backend=${backend:-bwrap+landlock}
  # shellcheck disable=SC2086  # the config's two words
  enforced=$("${as_user[@]}" "${run[@]}" $config --json -- /bin/true |
             python3 -c 'import json,sys; print(json.load(sys.stdin)["bounds"]["memory"]["enforcedBy"])')
  echo "== $backend: memory enforcedBy: $enforced"
  "${as_user[@]}" /usr/bin/python3 "$repo/bench/run/paired.py" "$rounds" \
    "true=${run[*]} $config --max-memory unlimited -- /bin/true|||${run[*]} $config -- /bin/true"
  for children in 0 100; do
    script="for i in \$(seq $children); do sleep $sleep_s & done; sleep $sleep_s; wait"
    for bound in unlimited 4G; do
      for _ in 1 2 3; do
        # shellcheck disable=SC2086
        /usr/bin/time -f "$backend children=$children max-memory=$bound: %U user %S sys %e wall" \
          "${as_user[@]}" "${run[@]}" $config --max-memory "$bound" -c "$script" >/dev/null
      done
    done
  done
done
