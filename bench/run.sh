#!/usr/bin/env bash
# make bench: wrk against inkwell seeded with 10,000 documents, beside a bare
# libmicrohttpd baseline in the same run. The server runs on core 0 with one HTTP
# thread, wrk on core 1. Prints req/s, p50 and p99 latency and the ratio to the
# baseline; then the generator micro-benchmarks.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DUR=${BENCH_SECONDS:-8}
CONNS=${BENCH_CONNECTIONS:-32}
work=$(mktemp -d /tmp/inkwell-bench.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
waitport() { for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$1/$2" && return 0; sleep 0.05; done; return 1; }

# wrk_run NAME URL [lua] → "NAME req/s p50 p99"
wrk_run() {
  local name=$1 url=$2 script=${3:-} out
  if [ -n "$script" ]; then out=$(taskset -c 1 wrk -t1 -c"$CONNS" -d"${DUR}s" --latency -s "$script" "$url")
  else out=$(taskset -c 1 wrk -t1 -c"$CONNS" -d"${DUR}s" --latency "$url"); fi
  local rps p50 p99 non2xx
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  p50=$(echo "$out" | awk '$1=="50%" {print $2}')
  p99=$(echo "$out" | awk '$1=="99%" {print $2}')
  non2xx=$(echo "$out" | awk '/Non-2xx/ {print $5}')
  echo "$name $rps $p50 $p99 ${non2xx:-0}"
}

bport=$(port)
taskset -c 0 "$BUILD/bench-baseline" "$bport" 1 & pids+=($!)
waitport "$bport" ""
base=$(wrk_run baseline "http://127.0.0.1:$bport/")

iport=$(port)
"$BUILD/inkwell" key create --user bench --data-dir "$work/data" > "$work/key" 2>/dev/null
key=$(cat "$work/key")
taskset -c 0 "$BUILD/inkwell" serve --listen "127.0.0.1:$iport" --data-dir "$work/data" --threads 1 \
  --workers 2 --rate-limit 0 --log-level warn & pids+=($!)
waitport "$iport" healthz
echo "seeding 10,000 documents..." >&2
python3 bench/seed.py "$iport" "$key" 10000
for _ in $(seq 600); do  # wait for the seeded jobs to finish
  n=$(curl -s -H "Authorization: Bearer $key" "http://127.0.0.1:$iport/api/v1/documents?favorite=0&per_page=10" | python3 -c 'import json,sys; print(json.load(sys.stdin)["meta"]["total"])')
  [ "$n" = 10000 ] && break; sleep 0.2
done
export BENCH_KEY=$key
auth=(-H "Authorization: Bearer $key")
cat > "$work/get.lua" <<LUA
wrk.headers["Authorization"] = "Bearer $key"
LUA
results=("$base")
results+=("$(wrk_run show "http://127.0.0.1:$iport/api/v1/documents/5000" "$work/get.lua")")
results+=("$(wrk_run list "http://127.0.0.1:$iport/api/v1/documents" "$work/get.lua")")
# the same list from a second process on the same database with the rendered-record
# cache off (SQLite WAL lets it read beside the first); stopped before any job exists
nport=$(port)
taskset -c 0 "$BUILD/inkwell" serve --listen "127.0.0.1:$nport" --data-dir "$work/data" --threads 1 \
  --workers 1 --rate-limit 0 --log-level warn --record-cache-mb 0 & nopid=$!
waitport "$nport" healthz
results+=("$(wrk_run list-nocache "http://127.0.0.1:$nport/api/v1/documents" "$work/get.lua")")
kill "$nopid"; wait "$nopid" 2>/dev/null || true
results+=("$(wrk_run list-search "http://127.0.0.1:$iport/api/v1/documents?search=garden" "$work/get.lua")")
results+=("$(wrk_run create "http://127.0.0.1:$iport" bench/post.lua)")
for res in 1024x1024 1792x1024 1024x1792; do
  results+=("$(IMAGE_RES=$res CONNS=2 wrk_run "image-$res" "http://127.0.0.1:$iport" bench/post.lua)")
done
# the baseline again at the end: this machine's speed drifts; ratios use the mean
base2=$(wrk_run baseline-end "http://127.0.0.1:$bport/")
results=("$base2" "${results[@]}")
for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
wait 2>/dev/null || true
pids=()

base_rps=$(echo "$base $base2" | awk '{print ($2 + $7) / 2}')
printf '\n%-20s %12s %10s %10s %8s %8s\n' scenario req/s p50 p99 ratio non-2xx
for r in "${results[@]}"; do
  set -- $r
  printf '%-20s %12s %10s %10s %8.3f %8s\n' "$1" "$2" "$3" "$4" "$(awk -v a="$2" -v b="$base_rps" 'BEGIN {print a / b}')" "$5"
done
echo "ratios are to the mean of the two baseline runs ($base_rps req/s)"
echo "targets: show >= 0.4, list >= 0.2, create >= 0.05 of the baseline"
for b in "$BUILD"/bench-text "$BUILD"/bench-image; do
  [ -x "$b" ] && { echo; echo "== $(basename "$b") (one core, servers stopped)"; taskset -c 0 "$b"; }
done
exit 0
