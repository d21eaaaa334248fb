#!/usr/bin/env bash
# The README's first command: set up, build, and run the main job, a confined command that
# writes once inside its workspace (allowed) and once beside it (denied). The result is checked
# from outside the sandbox, never taken from the confined command's word.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
repo="$(repo_root)"
ensure_packages
build="$(build_root "$repo")"
echo "dsh-sandbox: building in $build" >&2
configure_and_build "$build" >/dev/null

echo "\$ dsh-sandbox probe"
"$build/bin/dsh-sandbox" probe || true
echo

demo="$(mktemp -d /tmp/dsh-demo-XXXXXX)"
trap 'rm -rf "$demo"' EXIT
workspace="$demo/workspace"
outside="$demo/outside.txt"
mkdir "$workspace"
command="echo allowed > $workspace/inside.txt; echo denied > $outside"

# Until `dsh-sandbox run` lands (issue 5) the demo drives the Landlock launcher directly with
# the workspace-write grants the provider will give it.
launcher="$build/bin/landlock-run"
confined=("$launcher" --ro / --rw /dev/null --rw "$workspace" -- bash -c "$command")
echo "\$ ${confined[*]:0:7} -- bash -c '$command'"
set +e
"${confined[@]}"
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
