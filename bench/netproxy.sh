#!/usr/bin/env bash
# The network allow-list's cost on loopback: a 100 MB download through the proxy chain against
# the same download with the network inherited (direct) and through the floor of any relay (a
# bare splice relay on the host's loopback that checks nothing), the connection set-up curl
# sees, and 100 concurrent connections.
# Usage: bench/netproxy.sh BUILD_DIR [ROUNDS] (needs python3 and curl).
# Each round downloads once each way, back to back; the medians of the rounds' ratios are printed
# last, since one 100 MB transfer on loopback takes about 0.1 s and single rounds scatter.
set -euo pipefail
bin="$(cd "$1" && pwd)/bin"
rounds="${2:-9}"
dir=$(mktemp -d /var/tmp/dsh-netproxy-bench.XXXXXX)
trap 'kill "$server" "$relay" 2>/dev/null || true; rm -rf "$dir"' EXIT
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
# The floor: what one relay hop costs at best, one process splicing each accepted connection
# to the server and back (socket -> pipe -> socket in the kernel, 1 MiB pipes, as the proxy).
python3 - "$port" >"$dir/relay-port" <<'PY' &
import fcntl, os, socket, sys, threading
upstream_port = int(sys.argv[1])
listener = socket.create_server(("127.0.0.1", 0))
print(listener.getsockname()[1], flush=True)
def pump(source, sink):
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, 1031, 1 << 20)  # F_SETPIPE_SZ
    try:
        while (n := os.splice(source.fileno(), write_end, 1 << 20)) > 0:
            while n > 0:
                n -= os.splice(read_end, sink.fileno(), n)
    except OSError:
        pass
    sink.shutdown(socket.SHUT_WR)
while True:
    client, _ = listener.accept()
    upstream = socket.create_connection(("127.0.0.1", upstream_port))
    for a, b in ((client, upstream), (upstream, client)):
        threading.Thread(target=pump, args=(a, b), daemon=True).start()
PY
relay=$!
while [ ! -s "$dir/relay-port" ]; do sleep 0.05; done
relay_port=$(cat "$dir/relay-port")
allow=(--network allow:bench.test,127.0.0.1 --network-resolve bench.test=127.0.0.1)
speed() { "$bin/dsh-sandbox" run "$@" -s -o /dev/null -w '%{speed_download}'; }
: >"$dir/ratios"
for round in $(seq "$rounds"); do
  direct=$(speed -- curl "http://127.0.0.1:$port/big.bin")
  floor=$(speed -- curl "http://127.0.0.1:$relay_port/big.bin")
  proxied=$(speed "${allow[@]}" -- curl "http://bench.test:$port/big.bin")
  python3 - "$round" "$direct" "$floor" "$proxied" <<'PY' | tee -a "$dir/ratios"
import sys
r, d, f, p = sys.argv[1], *map(float, sys.argv[2:])
print(f"round {r}: direct {d/1e6:.0f} MB/s, bare relay {f/1e6:.0f} MB/s, proxy {p/1e6:.0f} MB/s,"
      f" proxy/direct {p/d:.3f} relay/direct {f/d:.3f} proxy/relay {p/f:.3f}")
PY
done
python3 - "$dir/ratios" <<'PY'
import re, statistics, sys
rows = [dict(re.findall(r"(\S+/\S+) ([0-9.]+)", line)) for line in open(sys.argv[1])]
print(f"medians over {len(rows)} rounds:",
      ", ".join(f"{k} {statistics.median(float(r[k]) for r in rows):.3f}" for k in rows[0]))
PY
"$bin/dsh-sandbox" run -- curl -s -o /dev/null -w 'direct first byte %{time_starttransfer}s\n' \
  "http://127.0.0.1:$port/small"
"$bin/dsh-sandbox" run "${allow[@]}" -- curl -s -o /dev/null \
  -w 'proxy first byte %{time_starttransfer}s\n' "http://bench.test:$port/small"
"$bin/dsh-sandbox" run "${allow[@]}" -- bash -c "
  start=\$(date +%s.%N)
  for i in \$(seq 100); do curl -s -o /dev/null -w '%{http_code}\n' http://bench.test:$port/small & done | sort | uniq -c
  wait; echo \"100 concurrent: \$(python3 -c \"print(round(\$(date +%s.%N)-\$start, 3))\")s\""
