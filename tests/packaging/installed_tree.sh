#!/usr/bin/env bash
# Checks shared by install_test.sh and deb_test.sh on an installed tree's bin/ (source it; it
# defines functions only). Each prints what was wrong on stderr and exits 1.
# Needs: $build (the build tree, for dsh-programs.txt) and $work (a scratch directory outside
# /tmp that the test removes).
packaging_dir="$(dirname "${BASH_SOURCE[0]}")"

installed_fail() { echo "$(basename "$0"): $*" >&2; exit 1; }

# Every program the build declares (dsh_program in CMake, listed in dsh-programs.txt) is in BIN,
# executable.
check_installed_programs() {
  local bin="$1" program count=0
  while read -r program; do
    [ -x "$bin/$program" ] || installed_fail "$program is not installed in $bin"
    count=$((count + 1))
  done <"$build/dsh-programs.txt"
  [ "$count" -ge 3 ] || installed_fail "dsh-programs.txt lists $count programs"
}

# probe_component BIN: the netproxy component of `probe --json` as "usable<TAB>runner<TAB>cause".
probe_component() {
  "$1/dsh-sandbox" probe --json | /usr/bin/python3 -c '
import json, sys
for c in json.load(sys.stdin).get("components", []):
    if c["component"] == "netproxy":
        print("%s\t%s\t%s" % (c["usable"], c["runner"], c.get("cause", "")))'
}

# The allow-list's proxy of BIN is reported usable, at its installed path.
check_proxy_probed_usable() {
  local bin="$1" seen
  seen="$(probe_component "$bin")"
  [ "$seen" = "True	$bin/dsh-netproxy	" ] ||
    installed_fail "probe --json reports the proxy as: ${seen:-nothing}"
}

# Starts the loopback HTTP server on $work/site; sets server_port and server_pid.
start_http_server() {
  mkdir -p "$work/site" "$work/proxy-workspace"
  echo "reached through dsh-netproxy" >"$work/site/marker.txt"
  : >"$work/requests.log"
  exec {server_fd}< <(exec /usr/bin/python3 "$packaging_dir/http_server.py" "$work/site" \
                        "$work/requests.log")
  server_pid=$!
  read -r server_port <&"$server_fd" || installed_fail "the HTTP server did not start"
}

stop_http_server() { if [ -n "${server_pid:-}" ]; then kill "$server_pid" 2>/dev/null || true; fi; }

# allow_list_run BIN SCRIPT: SCRIPT under read-only with allowed.test (and other.test, not
# allowed) resolved to the loopback server. 127.0.0.1 is listed too: the proxy drops a name's
# loopback address unless an address entry admits it (docs/evidence-and-network.md).
allow_list_run() {
  (cd "$work/proxy-workspace" &&
    "$1/dsh-sandbox" run --mode read-only --network allow:allowed.test,127.0.0.1 \
      --network-resolve allowed.test=127.0.0.1 --network-resolve other.test=127.0.0.1 \
      -- /bin/sh -c "$2")
}

# A run with an allow-list from BIN reaches the loopback server through the proxy, by the listed
# name only; the server's own log says which requests arrived.
check_allow_list_run() {
  local bin="$1" out
  out="$(allow_list_run "$bin" "curl -sS http://allowed.test:$server_port/marker.txt;
    curl -s -o /dev/null -w '%{http_code}\n' http://other.test:$server_port/other.txt")" ||
    installed_fail "the allow-list run failed: $out"
  [ "$(head -n 1 <<<"$out")" = "reached through dsh-netproxy" ] ||
    installed_fail "the allow-list run printed: $out"
  [ "$(sed -n 2p <<<"$out")" != 200 ] || installed_fail "other.test was reached: $out"
  grep -qx /marker.txt "$work/requests.log" ||
    installed_fail "the server saw no request for /marker.txt"
  ! grep -q /other.txt "$work/requests.log" || installed_fail "the server saw /other.txt"
}

# A proxy that others can write is refused before anything starts: exit 125 with a message
# naming it, no request reaches the server, and probe reports it untrusted.
check_writable_proxy_refused() {
  local bin="$1" proxy="$1/dsh-netproxy" status=0 err seen
  chmod o+w "$proxy"
  err="$(allow_list_run "$bin" "curl -sS http://allowed.test:$server_port/refused.txt" 2>&1)" ||
    status=$?
  seen="$(probe_component "$bin" || true)"
  chmod o-w "$proxy"
  [ "$status" = 125 ] || installed_fail "a world-writable proxy: exit $status: $err"
  grep -qF "allow-list's proxy $proxy cannot be trusted" <<<"$err" &&
    grep -qF "writable by its group or by others" <<<"$err" ||
    installed_fail "a world-writable proxy was refused with: $err"
  ! grep -q /refused.txt "$work/requests.log" || installed_fail "the refused run reached the server"
  grep -qF "False	$proxy	$proxy cannot be trusted" <<<"$seen" ||
    installed_fail "probe reports a world-writable proxy as: $seen"
}
