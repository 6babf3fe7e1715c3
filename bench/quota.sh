#!/usr/bin/env bash
# bench/quota.sh (part of make bench): what quotas (API.md §19) cost a create and a show.
# One server (core 0, one HTTP thread), two users: "free" with no quota and "capped" with
# a quota far above what the run uses, so that every create checks it and counts against
# it. wrk (core 1) runs create and show for each, alternately, twice; prints req/s, p50
# and p99 of each run. The check reads the usage with the key (one statement) and the
# count is in the creating transaction: the two should be within noise.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DUR=${BENCH_SECONDS:-8}
CONNS=${BENCH_CONNECTIONS:-32}
work=$(mktemp -d /tmp/inkwell-quota.XXXXXX)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$BUILD/inkwell" user create capped --quota-words 1000000000000 --quota-images 1000000 \
  --data-dir "$work/data" >/dev/null
free=$("$BUILD/inkwell" key create --user free --data-dir "$work/data" 2>/dev/null)
capped=$("$BUILD/inkwell" key create --user capped --data-dir "$work/data" 2>/dev/null)
taskset -c 0 "$BUILD/inkwell" serve --listen "127.0.0.1:$port" --data-dir "$work/data" --threads 1 \
  --workers 2 --rate-limit 0 --log-level warn & pid=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.05; done
for k in "$free" "$capped"; do  # a document to show for each
  curl -s -o /dev/null -H "Authorization: Bearer $k" -d 'name=n&prompt=green+tea' \
    "http://127.0.0.1:$port/api/v1/documents"
done
run() {  # NAME KEY URL [lua]
  local out
  printf 'wrk.headers["Authorization"] = "Bearer %s"\n' "$2" > "$work/get.lua"
  if [ "${4:-}" ]; then out=$(BENCH_KEY=$2 taskset -c 1 wrk -t1 -c"$CONNS" -d"${DUR}s" --latency -s "$4" "$3")
  else out=$(taskset -c 1 wrk -t1 -c"$CONNS" -d"${DUR}s" --latency -s "$work/get.lua" "$3"); fi
  printf '%-22s %10s %10s %10s %8s\n' "$1" "$(echo "$out" | awk '/Requests\/sec/ {print $2}')" \
    "$(echo "$out" | awk '$1=="50%" {print $2}')" "$(echo "$out" | awk '$1=="99%" {print $2}')" \
    "$(echo "$out" | awk '/Non-2xx/ {print $5}')"
}
echo "== quotas (API.md §19): create and show, a user without a quota and one with"
printf '%-22s %10s %10s %10s %8s\n' scenario req/s p50 p99 non-2xx
for round in 1 2; do
  run "create, no quota" "$free" "http://127.0.0.1:$port" bench/post.lua
  run "create, quota" "$capped" "http://127.0.0.1:$port" bench/post.lua
  run "show, no quota" "$free" "http://127.0.0.1:$port/api/v1/documents/1"
  run "show, quota" "$capped" "http://127.0.0.1:$port/api/v1/documents/2"
done
