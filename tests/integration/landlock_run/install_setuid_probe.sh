#!/bin/sh
# CTest fixture for landlock_run_integration: installs (or, with --remove, removes) a
# setuid-root copy of ll_probe, so the nobody leg can check that a setuid-root binary does not
# raise the effective uid under landlock-run. Run as the caller; only root can create it, and a
# non-root run leaves nothing, which the nobody leg then reports (a failure under
# DSH_SANDBOX_TESTS_MUST_RUN=1).
set -eu
if [ "${1:-}" = "--remove" ]; then
  rm -f "$2"
  exit 0
fi
source=$1
target=$2
rm -f "$target"
if [ "$(id -u)" -ne 0 ]; then
  echo "install_setuid_probe: not root; no setuid-root probe installed" >&2
  exit 0
fi
mkdir -p "$(dirname "$target")"
install -o 0 -g 0 -m 4755 "$source" "$target"
