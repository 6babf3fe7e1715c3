#!/usr/bin/env bash
# bench/export_load.sh — the export scenario of make bench (issue 17 item 2): a server
# with its defaults (2 HTTP threads, 2 export threads) and the export cache off, 8 users
# exporting a 1 MB document as PDF at once for BENCH_EXPORT_SECONDS (default 30), while
# another user's list and /healthz are measured (bench/export_load.py). One line out.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
secs=${BENCH_EXPORT_SECONDS:-30}
work=$(mktemp -d /tmp/inkwell-bench-export.XXXXXX)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
keys=()
for u in lister e1 e2 e3 e4 e5 e6 e7 e8; do
  keys+=("$("$BUILD/inkwell" key create --user "$u" --data-dir "$work/data" 2>/dev/null)")
done
"$BUILD/inkwell" serve --listen "127.0.0.1:$port" --data-dir "$work/data" --rate-limit 0 \
  --log-level warn --export-cache-mb 0 & pid=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.05; done
python3 bench/export_load.py "$port" "$secs" "${keys[@]}"
