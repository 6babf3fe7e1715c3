#!/usr/bin/env bash
# bench/signin_flood.sh — the sign-in flood of make bench (issue 34): a server with its
# defaults (2 HTTP threads, 2 password threads, 8 places), 200 clients sending wrong
# passwords for BENCH_SIGNIN_SECONDS (default 20) while another user's list is measured
# (bench/signin_flood.py; target p99 <= 50 ms). One line out.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
secs=${BENCH_SIGNIN_SECONDS:-20}
work=$(mktemp -d /tmp/inkwell-bench-signin.XXXXXX)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
key=$("$BUILD/inkwell" key create --user lister --data-dir "$work/data" 2>/dev/null)
"$BUILD/inkwell" serve --listen "127.0.0.1:$port" --data-dir "$work/data" --rate-limit 0 \
  --log-level warn --trusted-proxies 127.0.0.1 & pid=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.05; done
(ulimit -n 4096; python3 bench/signin_flood.py "$port" "$secs" "$key")
