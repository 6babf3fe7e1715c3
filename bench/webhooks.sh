#!/usr/bin/env bash
# webhooks.sh — what webhooks cost (API.md §22; issue 36): document creates (wrk,
# bench/post.lua) for a user without an endpoint and for one with an endpoint subscribed
# to every event, rounds interleaved (the machine's load drifts); then the deliveries a
# second to a local receiver (tests/webhooks/receiver.js, verifying each with the npm
# standardwebhooks package): the time for the pending deliveries to reach 0.
# Usage: bench/webhooks.sh [ROUNDS] (default 3), BUILD (default build).
set -u
cd "$(dirname "$0")/.." || exit 2
rounds=${1:-3}
bin=${BUILD:-build}/inkwell
dir=$(mktemp -d "${TMPDIR:-/tmp}/inkwell-bench-wh.XXXXXX")
trap 'kill $srv $rx 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
[ -d tests/webhooks/node_modules/standardwebhooks ] || (cd tests/webhooks && npm ci --no-audit --no-fund >/dev/null 2>&1)
port=$((20000 + RANDOM % 20000))
plain=$("$bin" key create --user plain --data-dir "$dir" 2>/dev/null | tail -1)
hooked=$("$bin" key create --user hooked --data-dir "$dir" 2>/dev/null | tail -1)
"$bin" serve --listen "127.0.0.1:$port" --data-dir "$dir" --rate-limit 0 --webhook-allow-private 1 \
    --log-level error >"$dir/log" 2>&1 &
srv=$!
# the receiver stands for another machine: below the server, so it takes only the cores
# the server leaves
(cd tests/webhooks && exec nice -n 19 node receiver.js 0) >"$dir/rx" 2>&1 &
rx=$!
for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && [ -s "$dir/rx" ] && break
    sleep 0.1
done
rport=$(head -1 "$dir/rx")
curl -sf -X POST "http://127.0.0.1:$port/api/v1/webhooks" -H "Authorization: Bearer $hooked" \
    -d "url=http://127.0.0.1:$rport/b" -d 'events=*' >/dev/null || { echo "no endpoint"; exit 1; }
pending() { curl -s "http://127.0.0.1:$port/metrics" | awk '/^inkwell_webhook_deliveries_pending /{print $2}'; }
rate() { BENCH_KEY=$1 wrk -t2 -c8 -d5s -s bench/post.lua "http://127.0.0.1:$port" | awk '/Requests\/sec/{print $2}'; }
for r in $(seq "$rounds"); do
    a=$(rate "$plain")
    b=$(rate "$hooked")
    t0=$(date +%s.%N)
    while [ "$(pending)" != "0" ]; do sleep 0.05; done
    t1=$(date +%s.%N)
    n=$(awk -v b="$b" 'BEGIN{printf "%d", b*5}')
    echo "round $r: creates/s without an endpoint $a, with one $b (ratio $(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.2f", b/a}')); the last deliveries drained $(awk -v t0="$t0" -v t1="$t1" 'BEGIN{printf "%.1f", t1-t0}') s after the creates"
done
got=$(curl -s "http://127.0.0.1:$rport/_log" | python3 -c 'import json,sys; g=json.load(sys.stdin); print(len(g), sum(all(e["verified"]) for e in g))')
echo "deliveries received, verified: $got"
# deliveries a second, alone: pings queued at once
hid=1
t0=$(date +%s.%N)
for i in $(seq 2000); do echo "url = \"http://127.0.0.1:$port/api/v1/webhooks/$hid/ping\""; echo "output = /dev/null"; done > "$dir/pings"
curl -s -X POST -H "Authorization: Bearer $hooked" --parallel --parallel-max 8 -K "$dir/pings" >/dev/null 2>&1
while [ "$(pending)" != "0" ]; do sleep 0.05; done
t1=$(date +%s.%N)
echo "2000 pings queued and delivered in $(awk -v t0="$t0" -v t1="$t1" 'BEGIN{printf "%.2f s: %.0f deliveries/s", t1-t0, 2000/(t1-t0)}')"
