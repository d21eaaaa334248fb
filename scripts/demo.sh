#!/usr/bin/env bash
# The README's first command: set up, build, and run the main job, a confined command that
# writes once inside its workspace (allowed) and once beside it (denied). The result is checked
# from outside the sandbox, never taken from the confined command's word.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
repo="$(repo_root)"
ensure_packages
# The demo's own tree, beside the one ./scripts/test.sh builds everything in: only the programs
# this demo runs (the CLI and the runners it starts: the dsh_programs target), no test, as a
# Release unity build. A unity build compiles a directory's sources as one translation unit, so
# the heavy headers every source includes (nlohmann/json, fmt, CLI11) are parsed and their
# templates compiled once per directory instead of once per file: about a third of the CPU time
# of a per-file build with debug information. Ninja's progress lines go to stderr, so a first
# build on a slow machine is never silent.
build="$(build_root "$repo")-demo"
echo "dsh-sandbox: configuring $build" >&2
configure "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON -DBUILD_TESTING=OFF
echo "dsh-sandbox: building $(paste -sd' ' "$build/dsh-programs.txt") in $build" >&2
cmake --build "$build" --target dsh_programs >&2

echo "\$ dsh-sandbox probe"
"$build/bin/dsh-sandbox" probe || true
echo

# Under /var/tmp, not /tmp: bwrap gives workspace-write a private /tmp, where a write beside the
# workspace would land in a throwaway tmpfs instead of being refused.
demo="$(mktemp -d /var/tmp/dsh-demo-XXXXXX)"
trap 'rm -rf "$demo"' EXIT
workspace="$demo/workspace"
outside="$demo/outside.txt"
mkdir "$workspace"
command="echo allowed > $workspace/inside.txt; echo denied > $outside"

# The command starts in the workspace root (without --workdir, wherever the caller stands); the
# cd only shows where a person would usually be.
echo "\$ cd $workspace && dsh-sandbox run --mode workspace-write --workspace $workspace -c '$command'"
set +e
(cd "$workspace" && "$build/bin/dsh-sandbox" run --mode workspace-write --workspace "$workspace" -c "$command")
code=$?
set -e
echo "[exit code: $code]"
echo
echo "checked from outside the sandbox:"
verdict=0
if [ "$(cat "$workspace/inside.txt" 2>/dev/null)" = allowed ]; then
  echo "  allowed  $workspace/inside.txt was written inside the workspace"
else
  echo "  FAILED   $workspace/inside.txt is missing: the allowed write did not land"; verdict=1
fi
if [ -e "$outside" ]; then
  echo "  FAILED   $outside exists: the write outside the workspace was NOT denied"; verdict=1
else
  echo "  denied   $outside does not exist: the write outside the workspace was refused"
fi
exit "$verdict"
