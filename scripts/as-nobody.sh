#!/usr/bin/env bash
# Runs a test program as the unprivileged user nobody (uid/gid 65534, no supplementary groups),
# because root hides what user namespaces and Landlock refuse to unprivileged callers.
# Run by a non-root user it simply runs the program: that user already is unprivileged.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
  exec "$@"
fi
as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
if ! "${as_nobody[@]}" test -x "$1"; then
  echo "as-nobody: uid 65534 cannot execute $1: every directory above the build tree must be" \
       "world-searchable (chmod o+x), or build under a world-readable path" >&2
  exit 1
fi
cd /
exec "${as_nobody[@]}" "$@"
