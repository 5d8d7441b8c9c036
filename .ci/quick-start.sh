#!/usr/bin/env bash
# The README's quick start as a new user runs it, on whatever node the machine has first on PATH
# (Node 20 here): after `npm ci`, `npm start` must bring satang up on its embedded defaults until
# /healthz answers, stop cleanly on SIGTERM, and `npx satang --help` must exit 0. Run by .ci/run
# right after its `npm ci`. The data goes to a temporary folder and the ports are ones of its own, so a
# developer's .satang and 8080/7070 are left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "machine's node: $(node --version); node that npm scripts run: $(npm exec --offline -- node --version)"

data=$(mktemp -d)
# The embedded PostgreSQL runs as its own user when satang runs as root: it must reach its folder.
chmod 0755 "$data"
log="$data/npm-start.log"
http_port=${QUICK_START_PORT:-28080}
sandbox_port=$((http_port + 1))
pg_port=$((http_port + 2))
cleanup() {
  if [ -n "${pid:-}" ]; then kill -KILL -- "-$pid" 2>/dev/null || true; fi
  # An embedded PostgreSQL left behind by a satang that crashed would hold its port.
  pkill -KILL -f -- "-D $data/" 2>/dev/null || true
  rm -rf "$data"
}
trap cleanup EXIT

npx satang --help >/dev/null
echo "npx satang --help: exit 0"
# Outside npm scripts the machine's node runs bin/satang.js, which hands over to the Node 24 of node_modules.
node bin/satang.js --help >/dev/null
echo "node bin/satang.js --help on the machine's node: exit 0"

SATANG_DATA_DIR="$data/satang" SATANG_HTTP_PORT=$http_port SATANG_SANDBOX_PORT=$sandbox_port SATANG_EMBEDDED_PG_PORT=$pg_port setsid npm start >"$log" 2>&1 &
pid=$!
up=""
for _ in $(seq 1 180); do
  if ! kill -0 "$pid" 2>/dev/null; then break; fi
  if curl -fsS "http://127.0.0.1:$http_port/healthz" >"$data/healthz.json" 2>/dev/null; then up=yes; break; fi
  sleep 1
done
if [ -z "$up" ]; then
  if kill -0 "$pid" 2>/dev/null; then echo "npm start: /healthz on port $http_port did not answer 200 within 180 s; its output:" >&2
  else echo "npm start: exited before /healthz on port $http_port answered 200; its output:" >&2; fi
  cat "$log" >&2
  exit 1
fi
echo "npm start: /healthz answered $(cat "$data/healthz.json")"
# SIGTERM to the whole process group, as a terminal's Ctrl-C (SIGINT) or a supervisor stopping a
# service does: npm and the satang it started both get it, and satang must stop cleanly.
kill -TERM -- "-$pid"
for _ in $(seq 1 30); do kill -0 -- "-$pid" 2>/dev/null || break; sleep 1; done
if kill -0 -- "-$pid" 2>/dev/null; then
  echo "npm start: processes still running 30 s after SIGTERM:" >&2
  ps -o pid,args -g "$pid" >&2 || true
  cat "$log" >&2
  exit 1
fi
set +e
wait "$pid"
code=$?
set -e
if [ "$code" -ne 0 ] && [ "$code" -ne 143 ]; then
  echo "npm start: exited $code after SIGTERM; its output:" >&2
  cat "$log" >&2
  exit 1
fi
if pgrep -f -- "-D $data/" >/dev/null; then
  echo "npm start: its embedded PostgreSQL is still running after satang stopped; its output:" >&2
  cat "$log" >&2
  exit 1
fi
echo "npm start: stopped on SIGTERM (exit $code), its embedded PostgreSQL with it"
