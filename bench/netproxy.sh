#!/usr/bin/env bash
# The network allow-list's cost on loopback: a 100 MB download through the proxy chain against
# the same download with the network inherited, the connection set-up curl sees, and 100
# concurrent connections. Usage: bench/netproxy.sh BUILD_DIR (needs python3 and curl).
set -euo pipefail
bin="$1/bin"
dir=$(mktemp -d /var/tmp/dsh-netproxy-bench.XXXXXX)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$dir"' EXIT
head -c 100000000 /dev/zero >"$dir/big.bin"
echo ok >"$dir/small"
python3 - "$dir" >"$dir/port" <<'PY' &
import http.server, os, sys
os.chdir(sys.argv[1])
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
print(s.server_port, flush=True)
s.serve_forever()
PY
server=$!
cd "$dir"  # the workspace: never the build tree, which a run must not be able to write
while [ ! -s "$dir/port" ]; do sleep 0.05; done
port=$(cat "$dir/port")
allow=(--network allow:bench.test,127.0.0.1 --network-resolve bench.test=127.0.0.1)
for round in 1 2 3; do
  direct=$("$bin/dsh-sandbox" run -- curl -s -o /dev/null -w '%{speed_download}' \
    "http://127.0.0.1:$port/big.bin")
  proxied=$("$bin/dsh-sandbox" run "${allow[@]}" -- curl -s -o /dev/null -w '%{speed_download}' \
    "http://bench.test:$port/big.bin")
  echo "round $round: direct $direct B/s, proxy $proxied B/s, ratio $(python3 -c "print(round($proxied/$direct, 3))")"
done
"$bin/dsh-sandbox" run -- curl -s -o /dev/null -w 'direct first byte %{time_starttransfer}s\n' \
  "http://127.0.0.1:$port/small"
"$bin/dsh-sandbox" run "${allow[@]}" -- curl -s -o /dev/null \
  -w 'proxy first byte %{time_starttransfer}s\n' "http://bench.test:$port/small"
"$bin/dsh-sandbox" run "${allow[@]}" -- bash -c "
  start=\$(date +%s.%N)
  for i in \$(seq 100); do curl -s -o /dev/null -w '%{http_code}\n' http://bench.test:$port/small & done | sort | uniq -c
  wait; echo \"100 concurrent: \$(python3 -c \"print(round(\$(date +%s.%N)-\$start, 3))\")s\""
