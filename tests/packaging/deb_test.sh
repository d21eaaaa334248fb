#!/usr/bin/env bash
# Builds the Debian package with CPack and checks it without touching the system: its control
# fields (Depends: bubblewrap), files owned by root, and the unpacked tree (dpkg-deb -x) running
# a confined command with its own launcher. With DSH_SANDBOX_TEST_DEB_INSTALL=1 (set by .ci/run:
# CI is a fresh machine) and no dsh-sandbox package installed, it also runs the real
# `apt-get install ./dsh-sandbox_*.deb`, the README's command, and removes the package again, so
# the machine is left as it was found.
# Usage: deb_test.sh BUILD_DIR
set -euo pipefail
build="$1"
work="$(mktemp -d "$build/deb-test.XXXXXX")"
chmod 755 "$work"
installed=0
cleanup() {
  if [ "$installed" = 1 ]; then apt-get remove -y -qq --purge dsh-sandbox >/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
(cd "$work" && cpack --config "$build/CPackConfig.cmake" -G DEB >/dev/null)
deb="$(ls "$work"/dsh-sandbox_*.deb)"
fields="$(dpkg-deb -f "$deb" Package Depends)"
grep -qx 'Package: dsh-sandbox' <<<"$fields" && grep -q '^Depends: .*bubblewrap' <<<"$fields" ||
  { echo "deb_test: control fields: $fields" >&2; exit 1; }
listing="$(dpkg-deb -c "$deb")"
for file in ./usr/bin/dsh-sandbox ./usr/bin/landlock-run ./usr/share/man/man1/dsh-sandbox.1 \
            ./usr/include/dsh/sandbox/executor.h ./usr/lib/cmake/dsh-sandbox/dsh-sandboxConfig.cmake; do
  grep -q " $file\$" <<<"$listing" || { echo "deb_test: $file missing from the package" >&2; exit 1; }
done
# The CLI and the launcher decide later runs: root-owned, not writable by group or others.
if grep -E '\./usr/bin/[^/]+$' <<<"$listing" | grep -vE '^-rwxr-xr-x root/root'; then
  echo "deb_test: a program of the package is not root-owned 0755" >&2
  exit 1
fi

unpacked="$work/root"
dpkg-deb -x "$deb" "$unpacked"
workspace="$work/workspace"
mkdir "$workspace"
out="$(cd "$workspace" && "$unpacked/usr/bin/dsh-sandbox" run --mode read-only -- ls /)"
grep -qx usr <<<"$out" || { echo "deb_test: the unpacked CLI printed: $out" >&2; exit 1; }

if [ "${DSH_SANDBOX_TEST_DEB_INSTALL:-0}" = 1 ]; then
  if dpkg-query -W -f='${Status}' dsh-sandbox 2>/dev/null | grep -q 'install ok installed'; then
    echo "deb_test: dsh-sandbox is installed already; the real install is left out" >&2
  else
    installed=1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" >/dev/null
    (cd "$workspace" && /usr/bin/dsh-sandbox run --mode read-only -- ls) >/dev/null
    /usr/bin/dsh-sandbox probe | grep -q '/usr/bin/landlock-run'
    echo "deb_test: apt-get install ./$(basename "$deb") and dsh-sandbox run --mode read-only -- ls work"
  fi
fi
echo "deb_test: $(basename "$deb") checks out"
