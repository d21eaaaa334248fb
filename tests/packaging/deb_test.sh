#!/usr/bin/env bash
# Builds the Debian package with CPack and checks it without touching the system: its control
# fields (Depends: bubblewrap and the proxy's libraries), files owned by root, every program
# stripped with its debug symbols in the -dbgsym package, and the unpacked tree (dpkg-deb -x)
# running a confined command with its own launcher and an allow-list run through its own proxy
# (and refusing that proxy once it is world-writable), a run and a job from / (the job as root and
# as nobody without XDG_RUNTIME_DIR). With DSH_SANDBOX_TEST_DEB_INSTALL=1 (set
# by .ci/run: CI is a fresh machine) and no dsh-sandbox package installed, it also runs the real
# `apt-get install ./dsh-sandbox_*.deb`, the README's command, an allow-list run, a run from /, a
# job as nobody without XDG_RUNTIME_DIR and both bindings' suites against /usr/bin, and removes
# the package again, so the machine is left as it was found.
# Usage: deb_test.sh BUILD_DIR
set -euo pipefail
build="$1"
source "$(dirname "${BASH_SOURCE[0]}")/installed_tree.sh"
work="$(mktemp -d "$build/deb-test.XXXXXX")"
chmod 755 "$work"
installed=0
cleanup() {
  stop_http_server
  if [ "$installed" = 1 ]; then apt-get remove -y -qq --purge dsh-sandbox >/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
(cd "$work" && cpack --config "$build/CPackConfig.cmake" -G DEB >/dev/null)
deb="$(ls "$work"/dsh-sandbox_*.deb)"
fields="$(dpkg-deb -f "$deb" Package Depends)"
grep -qx 'Package: dsh-sandbox' <<<"$fields" && grep -q '^Depends: .*bubblewrap' <<<"$fields" &&
  grep -q '^Depends: .*libidn2' <<<"$fields" ||
  { echo "deb_test: control fields: $fields" >&2; exit 1; }
listing="$(dpkg-deb -c "$deb")"
for file in ./usr/bin/dsh-sandbox ./usr/bin/landlock-run ./usr/bin/dsh-netproxy ./usr/bin/dsh-seccomp-exec \
            ./usr/share/man/man1/dsh-sandbox.1 \
            ./usr/include/dsh/sandbox/executor.h ./usr/lib/cmake/dsh-sandbox/dsh-sandboxConfig.cmake; do
  grep -q " $file\$" <<<"$listing" || { echo "deb_test: $file missing from the package" >&2; exit 1; }
done
# The CLI and its runners decide later runs: root-owned, not writable by group or others.
if grep -E '\./usr/bin/[^/]+$' <<<"$listing" | grep -vE '^-rwxr-xr-x root/root'; then
  echo "deb_test: a program of the package is not root-owned 0755" >&2
  exit 1
fi

source="$(cd "$packaging_dir/../.." && pwd)"

# From /: read-only adds no writable root, so nothing above the installed CLI is one.
check_run_from_root() {
  local out
  out="$(cd / && "$1/dsh-sandbox" run --mode read-only -- /bin/sh -c 'pwd; echo ran')" ||
    installed_fail "a read-only run from / failed: $out"
  [ "$out" = "$(printf '/\nran')" ] || installed_fail "a read-only run from / printed: $out"
}

# A background job started from / (read-only adds no writable root there either) as root, and as
# nobody with no XDG_RUNTIME_DIR and no home (a container's service user): start, wait, and the
# job's output read back through its handle.
check_job_from_root() {
  local bin="$1" handle out
  shift
  handle="$(cd / && "$@" "$bin/dsh-sandbox" start --mode read-only -- \
              /bin/sh -c 'echo job-ran-as-$(id -u)')" ||
    installed_fail "start from / ($*) failed: $handle"
  out="$(cd / && "$@" "$bin/dsh-sandbox" job-wait --timeout 60 "$handle")" ||
    installed_fail "job-wait $handle ($*) failed: $out"
  grep -qE "^ *job-ran-as-$("$@" id -u)$" <<<"$out" || installed_fail "job $handle ($*) printed: $out"
}
check_job_without_runtime_dir() {
  check_job_from_root "$1" env
  check_job_from_root "$1" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
    env -u XDG_RUNTIME_DIR HOME=/nonexistent
}

unpacked="$work/root"
dpkg-deb -x "$deb" "$unpacked"
check_installed_programs "$unpacked/usr/bin"
# Stripped programs; the debug symbols of each in the -dbgsym package, under its build ID.
dbgsym="$(ls "$work"/dsh-sandbox-dbgsym_*.ddeb)"
dbg_listing="$(dpkg-deb -c "$dbgsym")"
while read -r program; do
  file -b "$unpacked/usr/bin/$program" | grep -q ', stripped$' ||
    { echo "deb_test: /usr/bin/$program is not stripped" >&2; exit 1; }
  id="$(readelf -n "$unpacked/usr/bin/$program" | sed -n 's/.*Build ID: //p')"
  grep -q " \./usr/lib/debug/\.build-id/${id:0:2}/${id:2}\.debug\$" <<<"$dbg_listing" ||
    { echo "deb_test: no debug symbols for /usr/bin/$program (build ID ${id:-none})" >&2; exit 1; }
done <"$build/dsh-programs.txt"
workspace="$work/workspace"
mkdir "$workspace"
out="$(cd "$workspace" && "$unpacked/usr/bin/dsh-sandbox" run --mode read-only -- ls /)"
grep -qx usr <<<"$out" || { echo "deb_test: the unpacked CLI printed: $out" >&2; exit 1; }
check_proxy_probed_usable "$unpacked/usr/bin"
start_http_server
check_allow_list_run "$unpacked/usr/bin"
check_writable_proxy_refused "$unpacked/usr/bin"
check_run_from_root "$unpacked/usr/bin"
check_job_without_runtime_dir "$unpacked/usr/bin"

if [ "${DSH_SANDBOX_TEST_DEB_INSTALL:-0}" = 1 ]; then
  if dpkg-query -W -f='${Status}' dsh-sandbox 2>/dev/null | grep -q 'install ok installed'; then
    echo "deb_test: dsh-sandbox is installed already; the real install is left out" >&2
  else
    installed=1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" >/dev/null
    (cd "$workspace" && /usr/bin/dsh-sandbox run --mode read-only -- ls) >/dev/null
    /usr/bin/dsh-sandbox probe | grep -q '/usr/bin/landlock-run'
    check_proxy_probed_usable /usr/bin
    : >"$work/requests.log"
    check_allow_list_run /usr/bin
    check_run_from_root /usr/bin
    check_job_without_runtime_dir /usr/bin
    # Both bindings' suites, driving the installed CLI (first on PATH).
    "$packaging_dir/bindings_test.sh" --installed /usr/bin "$source" python
    "$packaging_dir/bindings_test.sh" --installed /usr/bin "$source" node
    echo "deb_test: apt-get install ./$(basename "$deb"), a read-only run, an allow-list run, a" \
         "run from /, a job as nobody without XDG_RUNTIME_DIR and both bindings' suites work"
  fi
fi
echo "deb_test: $(basename "$deb") ($(du -h "$deb" | cut -f1), installed $(dpkg-deb -f "$deb" \
  Installed-Size) KiB) and $(basename "$dbgsym") ($(du -h "$dbgsym" | cut -f1)) check out"
