#!/usr/bin/env bash
# The two bindings against an installed CLI: `cmake --install` of BUILD_DIR into a fresh prefix
# beside the build tree (not under /tmp: the provider refuses a launcher a confined run could
# replace, docs/trust.md), whose bin/ then comes first on PATH. `python` and `node` run the
# package's own suite (unittest; node's test runner) in the leg DSH_TEST_LEG names: the install
# is the caller's, the suite alone goes through scripts/test-leg.sh (as nobody in that leg).
# `pip` installs the Python package into a fresh venv (offline: --no-build-isolation and a venv
# that sees the system's setuptools and wheel) and runs its example from there.
# With --installed BIN_DIR instead of BUILD_DIR, the suite drives a copy installed already (the
# Debian package's /usr/bin, in deb_test.sh) and nothing is installed here.
# Usage: bindings_test.sh BUILD_DIR SOURCE_DIR python|pip|node
#        bindings_test.sh --installed BIN_DIR SOURCE_DIR python|pip|node
set -euo pipefail
if [ "$1" = --installed ]; then
  bin="$2" source="$3" which="$4"
  work="$(mktemp -d /var/tmp/dsh-bindings-test.XXXXXX)"
else
  build="$1" source="$2" which="$3"
  work="$(mktemp -d "$build/bindings-test.XXXXXX")"
  bin="$work/prefix/bin"
fi
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
[ -n "${build:-}" ] && cmake --install "$build" --prefix "$work/prefix" >/dev/null
export PATH="$bin:$PATH"
[ "$(command -v dsh-sandbox)" = "$bin/dsh-sandbox" ] ||
  { echo "bindings_test: dsh-sandbox on PATH is $(command -v dsh-sandbox), not $bin's" >&2; exit 1; }
export DSH_HTTP_SERVER="$source/tests/packaging/http_server.py" PYTHONDONTWRITEBYTECODE=1
leg="$source/scripts/test-leg.sh"
case "$which" in
  python)
    "$leg" /bin/sh -c 'cd "$1" && PYTHONPATH=. exec /usr/bin/python3 -m unittest discover -s tests -v' \
      sh "$source/bindings/python"
    ;;
  node)
    "$leg" /bin/sh -c 'cd "$1" && exec node --test test/' sh "$source/bindings/node"
    ;;
  pip)
    cp -r "$source/bindings/python" "$work/src"
    # --system-site-packages: the build backend (Debian's python3-setuptools, python3-wheel) comes
    # from the system, so the install needs no index.
    /usr/bin/python3 -m venv --system-site-packages "$work/venv"
    "$work/venv/bin/pip" install -q --no-build-isolation --no-index "$work/src"
    mkdir "$work/workspace"
    cd "$work"  # not the source tree: the import must come from the installed package
    out="$("$work/venv/bin/python" "$work/src/examples/harness.py" "$work/workspace")"
    grep -q '\[live\] hello' <<<"$out" && grep -q 'denied by the sandbox: True' <<<"$out" ||
      { echo "bindings_test: the installed example printed: $out" >&2; exit 1; }
    [ ! -e "$work/outside" ] || { echo "bindings_test: the denied write happened" >&2; exit 1; }
    "$work/venv/bin/python" -c 'import dsh_sandbox, dsh_sandbox.aio, sys; sys.exit(0 if "venv" in dsh_sandbox.__file__ else 1)'
    echo "bindings_test: pip install of bindings/python works, and its example runs"
    ;;
  *) echo "bindings_test: python, pip or node" >&2; exit 2 ;;
esac
