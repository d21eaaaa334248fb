#!/usr/bin/env bash
# The two bindings against the real CLI (BIN_DIR first on PATH): the Python package's unittest
# suite, then `pip install` of it into a fresh venv (offline: --no-build-isolation and a venv
# that sees the system's setuptools and wheel) and its example run from there; the Node
# package's suite with node's own test runner. Usage: bindings_test.sh BIN_DIR SOURCE_DIR python|pip|node
set -euo pipefail
bin="$1" source="$2" which="$3"
export PATH="$bin:$PATH"
work="$(mktemp -d /var/tmp/dsh-bindings.XXXXXX)"
trap 'rm -rf "$work"' EXIT
case "$which" in
  python)
    cd "$source/bindings/python"
    PYTHONPATH=. PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -m unittest discover -s tests -v
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
    "$work/venv/bin/python" -c 'import dsh_sandbox, sys; sys.exit(0 if "venv" in dsh_sandbox.__file__ else 1)'
    echo "bindings_test: pip install of bindings/python works, and its example runs"
    ;;
  node)
    cd "$source/bindings/node"
    node --test test/
    ;;
  *) echo "bindings_test: python, pip or node" >&2; exit 2 ;;
esac
