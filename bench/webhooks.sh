#!/usr/bin/env bash
# webhooks.sh — what webhooks cost (API.md §22; issue 36): document creates (wrk,
# bench/post.lua) for a user without an endpoint and for one with an endpoint subscribed
# to every event, rounds interleaved (the machine's load drifts); then the deliveries a
# second to a local receiver (tests/webhooks/receiver.js, verifying each with the npm
# standardwebhooks package): the time for the pending deliveries to reach 0.
# First, on a server of its own, the outbox's own cost: creates for a user whose endpoint
# never answers (a socket that listens and never accepts: events and deliveries are
# written in each create's transaction, none is sent during the rounds) against creates
# without. Each wrk run also gives the server's CPU time per create (utime + stime of
# /proc/PID/stat over the requests), steadier than requests/s on a loaded machine.
# Ends with the issue's two targets: the ratio of creates with an endpoint to creates
# without (mean of the rounds; >= 0.90; given for the endpoint never answering and for
# the receiver answering on the same cores) and the deliveries a second (>= 1,000).
# Usage: bench/webhooks.sh [ROUNDS] (default 3), BUILD (default build),
# WH_BACKEND=sqlite|postgres (default sqlite; postgres: a throwaway cluster of
# scripts/pg-test.sh, or a database made in the cluster of WH_PG_URL).
set -u
cd "$(dirname "$0")/.." || exit 2
rounds=${1:-3}
bin=${BUILD:-build}/inkwell
backend=${WH_BACKEND:-sqlite}
dir=$(mktemp -d "${TMPDIR:-/tmp}/inkwell-bench-wh.XXXXXX")
chmod 755 "$dir" # the PostgreSQL cluster runs as another user
srv='' rx='' hsrv='' hold=''
trap 'kill $srv $rx $hsrv $hold 2>/dev/null; wait 2>/dev/null; [ "$backend" = postgres ] && scripts/pg-test.sh stop "$dir/pg" >/dev/null 2>&1; rm -rf "$dir"' EXIT
[ -d tests/webhooks/node_modules/standardwebhooks ] || (cd tests/webhooks && npm ci --no-audit --no-fund >/dev/null 2>&1)
port=$((20000 + RANDOM % 20000))
db=()
if [ "$backend" = postgres ] && [ -n "${WH_PG_URL:-}" ]; then
    # a cluster of one's own: a database of this run in it
    name="bench_wh_$$"
    psql "$WH_PG_URL" -qAtc "CREATE DATABASE $name" || exit 1
    db=(--database "${WH_PG_URL%/*}/$name")
elif [ "$backend" = postgres ]; then
    url=$(scripts/pg-test.sh start "$dir/pg" | tail -n1) || { echo "no PostgreSQL"; exit 1; }
    db=(--database "$url")
fi
# the server's CPU time (clock ticks) and a wrk run's "rate:us-of-CPU-per-create"
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
rate_cpu() { # PID PORT KEY
    local c0 c1 out
    c0=$(ticks "$1")
    out=$(BENCH_KEY=$3 wrk -t2 -c8 -d5s -s bench/post.lua "http://127.0.0.1:$2")
    c1=$(ticks "$1")
    echo "$out" | awk -v c0="$c0" -v c1="$c1" -v hz="$hz" '/requests in/{n=$1} /Requests\/sec/{r=$2}
        END{printf "%s:%.0f", r, (n > 0 ? (c1 - c0) * 1e6 / hz / n : 0)}'
}
listen_port() { # the port a server's log names (it binds port 0)
    for _ in $(seq 600); do
        p=$(grep -o 'listening on .* (port [0-9]*)' "$1" 2>/dev/null | head -1 | grep -o '[0-9]*)$' | tr -d ')')
        [ -n "$p" ] && curl -sf "http://127.0.0.1:$p/healthz" >/dev/null && { echo "$p"; return; }
        sleep 0.1
    done
}
hdb=()
if [ ${#db[@]} -gt 0 ]; then
    base=${db[1]}
    psql "$base" -qAtc "CREATE DATABASE bench_wh_held_$$" || exit 1
    hdb=(--database "${base%/*}/bench_wh_held_$$")
fi
mkdir -p "$dir/held" && chmod 755 "$dir/held"
hplain=$("$bin" key create --user plain --data-dir "$dir/held" "${hdb[@]}" 2>/dev/null | tail -1)
hheld=$("$bin" key create --user held --data-dir "$dir/held" "${hdb[@]}" 2>/dev/null | tail -1)
"$bin" serve --listen 127.0.0.1:0 --data-dir "$dir/held" "${hdb[@]}" --rate-limit 0 \
    --webhook-allow-private 1 --log-level info >"$dir/held/log" 2>&1 &
hsrv=$!
python3 -c 'import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(4096)
print(s.getsockname()[1], flush=True); time.sleep(1e6)' >"$dir/held/rx" &
hold=$!
hport=$(listen_port "$dir/held/log")
for _ in $(seq 100); do [ -s "$dir/held/rx" ] && break; sleep 0.1; done
curl -sf -X POST "http://127.0.0.1:$hport/api/v1/webhooks" -H "Authorization: Bearer $hheld" \
    -d "url=http://127.0.0.1:$(head -1 "$dir/held/rx")/b" -d 'events=*' >/dev/null ||
    { echo "no endpoint (held)"; exit 1; }
hratios=()
for r in $(seq "$rounds"); do
    a=$(rate_cpu "$hsrv" "$hport" "$hplain")
    b=$(rate_cpu "$hsrv" "$hport" "$hheld")
    hratios+=("$(awk -v a="${a%:*}" -v b="${b%:*}" 'BEGIN{printf "%.3f", (a > 0 ? b/a : 0)}')")
    echo "$backend round $r, endpoint never answering: creates/s without an endpoint ${a%:*} (${a#*:} us of server CPU each), with one ${b%:*} (${b#*:} us): ratio $(awk -v a="${a%:*}" -v b="${b%:*}" 'BEGIN{printf "%.2f", b/a}'), CPU per create x$(awk -v a="${a#*:}" -v b="${b#*:}" 'BEGIN{printf "%.2f", (a > 0 ? b/a : 0)}')"
done
kill $hsrv $hold 2>/dev/null; wait $hsrv $hold 2>/dev/null; hsrv='' hold=''
plain=$("$bin" key create --user plain --data-dir "$dir" "${db[@]}" 2>/dev/null | tail -1)
hooked=$("$bin" key create --user hooked --data-dir "$dir" "${db[@]}" 2>/dev/null | tail -1)
"$bin" serve --listen "127.0.0.1:$port" --data-dir "$dir" "${db[@]}" --rate-limit 0 --webhook-allow-private 1 \
    --log-level error >"$dir/log" 2>&1 &
srv=$!
(cd tests/webhooks && exec node receiver.js 0) >"$dir/rx" 2>&1 &
rx=$!
for _ in $(seq 600); do
    curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && [ -s "$dir/rx" ] && break
    sleep 0.1
done
rport=$(head -1 "$dir/rx")
hid=$(curl -sf -X POST "http://127.0.0.1:$port/api/v1/webhooks" -H "Authorization: Bearer $hooked" \
    -d "url=http://127.0.0.1:$rport/b" -d 'events=*' | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["id"])') ||
    { echo "no endpoint"; exit 1; }
pending() { curl -s "http://127.0.0.1:$port/metrics" | awk '/^inkwell_webhook_deliveries_pending /{print $2}'; }
ratios=()
for r in $(seq "$rounds"); do
    a=$(rate_cpu "$srv" "$port" "$plain")
    b=$(rate_cpu "$srv" "$port" "$hooked")
    ca=${a#*:} cb=${b#*:} a=${a%:*} b=${b%:*}
    ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.3f", (a > 0 ? b/a : 0)}')")
    t0=$(date +%s.%N)
    while [ "$(pending)" != "0" ]; do sleep 0.05; done
    t1=$(date +%s.%N)
    n=$(awk -v b="$b" 'BEGIN{printf "%d", b*5}')
    echo "$backend round $r, receiver answering: creates/s without an endpoint $a ($ca us of server CPU each), with one $b ($cb us) (ratio $(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.2f", b/a}')); the last deliveries drained $(awk -v t0="$t0" -v t1="$t1" 'BEGIN{printf "%.1f", t1-t0}') s after the creates"
done
got=$(curl -s "http://127.0.0.1:$rport/_log" | python3 -c 'import json,sys; g=json.load(sys.stdin); print(len(g), sum(all(e["verified"]) for e in g))')
echo "deliveries received, verified: $got"
# deliveries a second, alone: 2000 pings queued while the endpoint is paused, then the
# time from enabling it to none pending
api="http://127.0.0.1:$port/api/v1/webhooks/$hid"
curl -sf -X PATCH "$api" -H "Authorization: Bearer $hooked" -d enabled=false >/dev/null
for i in $(seq 2000); do echo "url = \"$api/ping\""; echo "output = /dev/null"; done > "$dir/pings"
curl -s -X POST -H "Authorization: Bearer $hooked" --parallel --parallel-max 8 -K "$dir/pings" >/dev/null 2>&1
t0=$(date +%s.%N)
curl -sf -X PATCH "$api" -H "Authorization: Bearer $hooked" -d enabled=true >/dev/null
while [ "$(pending)" != "0" ]; do sleep 0.02; done
t1=$(date +%s.%N)
dps=$(awk -v t0="$t0" -v t1="$t1" 'BEGIN{printf "%.0f", 2000/(t1-t0)}')
echo "$backend: 2000 pings queued, then delivered in $(awk -v t0="$t0" -v t1="$t1" 'BEGIN{printf "%.2f", t1-t0}') s: $dps deliveries/s"
mean=$(printf '%s\n' "${ratios[@]}" | awk '{s+=$1} END{printf "%.2f", s/NR}')
hmean=$(printf '%s\n' "${hratios[@]}" | awk '{s+=$1} END{printf "%.2f", s/NR}')
met() { awk -v m="$1" 'BEGIN{print (m >= 0.9 ? "met" : "NOT met")}'; }
echo "$backend webhooks: creates with an endpoint / without = $hmean with the endpoint never answering (target >= 0.90: $(met "$hmean")), $mean with the receiver answering on the same cores ($(met "$mean")); deliveries/s $dps (target >= 1000: $([ "$dps" -ge 1000 ] && echo met || echo "NOT met"))"
