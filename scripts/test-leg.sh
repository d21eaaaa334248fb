#!/usr/bin/env bash
# Runs a test program in the user leg named by DSH_TEST_LEG: "nobody" runs it through
# as-nobody.sh, anything else (the caller leg, and GoogleTest's discovery at build time) runs it
# as it is. CMake prepends this script to every integration test command (the test target's
# CROSSCOMPILING_EMULATOR), so one discovered list of cases serves both legs.
#
# Root's per-user state (verdicts, the record of writable workspaces, jobs) lives in the fixed
# /run/dsh-sandbox, shared by every root process: one case's stale record entry (a /var/tmp
# workspace) would refuse another case's symlinked workspace. So a root caller-leg case runs in
# its own mount namespace with an empty private tmpfs (0700, root's) over /run/dsh-sandbox: the
# same path, the same trust checks, nothing shared with the host or another case. The product
# has no override for that location: nothing a confined command can set moves trusted state.
# The nobody leg's state is under $XDG_RUNTIME_DIR, which its cases set per test.
set -euo pipefail
if [ "${DSH_TEST_LEG:-}" = nobody ]; then
  exec "$(dirname "${BASH_SOURCE[0]}")/as-nobody.sh" "$@"
fi
if [ "${DSH_TEST_LEG:-}" = caller ] && [ "$(id -u)" = 0 ]; then
  mkdir -p -m 0700 /run/dsh-sandbox  # the mount point; its host content stays hidden
  exec unshare --mount --propagation private -- /bin/sh -c \
    'mount -t tmpfs -o mode=0700,size=64m dsh-test-state /run/dsh-sandbox && exec "$@"' sh "$@"
fi
exec "$@"
