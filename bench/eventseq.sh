#!/usr/bin/env bash
# bench/eventseq.sh [BASE_BIN] — the event sequence's figures (docs/benchmarks.md):
#   - create, show and list throughput (wrk, as bench/run.sh: server on core 0 with one
#     HTTP thread, wrk on core 1) of this build and, when BASE_BIN is given, of another
#     binary (e.g. main's), back to back in alternating rounds so drift hits both alike
#   - time to first delta of 500 streamed builtin creates (bench/sse.py ttfd)
#   - regenerate against create of a builtin document (bench/sse.py regen)
#   - with INKWELL_BENCH_PG_URL (a cluster's postgres:// URL, e.g. scripts/pg-test.sh's): time
#     to first delta of a stream on process B of process A's generation (bench/sse.py
#     remote), and jobs/s of 1,000 async creates (bench/sse.py drain)
# BENCH_SECONDS (5), BENCH_ROUNDS (2), BENCH_DOCS (2000) scale it.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
NEW=$BUILD/inkwell
BASE=${1:-}
DUR=${BENCH_SECONDS:-5}
ROUNDS=${BENCH_ROUNDS:-2}
DOCS=${BENCH_DOCS:-2000}
work=$(mktemp -d /tmp/inkwell-evbench.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
waitport() { for _ in $(seq 200); do curl -s -o /dev/null "http://127.0.0.1:$1/$2" && return 0; sleep 0.05; done; return 1; }
wrk_rps() {  # URL LUA → req/s
  taskset -c 1 wrk -t1 -c32 -d"${DUR}s" --latency -s "$2" "$1" | awk '/Requests\/sec/ {print $2}'
}

# serve BIN DIR [args...] → sets sport and spid
serve() {
  local bin=$1 dir=$2; shift 2
  sport=$(port)
  taskset -c 0 "$bin" serve --listen "127.0.0.1:$sport" --data-dir "$dir" --threads 1 --workers 2 \
    --rate-limit 0 --log-level warn "$@" & spid=$!; pids+=($spid)
  waitport "$sport" healthz
}
stop() { kill "$spid"; wait "$spid" 2>/dev/null || true; }

# one seeded data directory per binary (their schemas differ)
declare -A key
bins=(new)
[ -n "$BASE" ] && bins=(base new)
for b in "${bins[@]}"; do
  bin=$NEW; [ "$b" = base ] && bin=$BASE
  "$bin" key create --user bench --data-dir "$work/$b" > "$work/$b.key" 2>/dev/null
  key[$b]=$(cat "$work/$b.key")
  serve "$bin" "$work/$b"
  python3 bench/seed.py "$sport" "${key[$b]}" "$DOCS"
  for _ in $(seq 600); do
    n=$(curl -s -H "Authorization: Bearer ${key[$b]}" "http://127.0.0.1:$sport/api/v1/documents?favorite=0&per_page=1" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["meta"]["total"])')
    [ "$n" = "$DOCS" ] && break; sleep 0.2
  done
  stop
  printf 'wrk.headers["Authorization"] = "Bearer %s"\n' "${key[$b]}" > "$work/$b.lua"
done

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
  for b in "${bins[@]}"; do
    bin=$NEW; [ "$b" = base ] && bin=$BASE
    serve "$bin" "$work/$b"
    show=$(wrk_rps "http://127.0.0.1:$sport/api/v1/documents/$((DOCS / 2))" "$work/$b.lua")
    list=$(wrk_rps "http://127.0.0.1:$sport/api/v1/documents" "$work/$b.lua")
    create=$(BENCH_KEY=${key[$b]} wrk_rps "http://127.0.0.1:$sport" bench/post.lua)
    stop
    printf 'round %d %-4s  show %8s  list %8s  create %8s req/s\n' "$r" "$b" "$show" "$list" "$create"
  done
done
for b in "${bins[@]}"; do
  bin=$NEW; [ "$b" = base ] && bin=$BASE
  "$bin" key create --user sse --data-dir "$work/$b-sse" > "$work/$b-sse.key" 2>/dev/null
  serve "$bin" "$work/$b-sse"
  echo "== $b"
  taskset -c 1 python3 bench/sse.py ttfd "$sport" "$(cat "$work/$b-sse.key")" 500
  [ "$b" = base ] || taskset -c 1 python3 bench/sse.py regen "$sport" "$(cat "$work/$b-sse.key")" 300
  stop
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ -n "${INKWELL_BENCH_PG_URL:-}" ]; then
  # two processes on one database: A generates (builtin, 100 ms: its first piece 50 ms
  # after the claim), B streams
  for b in "${bins[@]}"; do
    bin=$NEW; [ "$b" = base ] && bin=$BASE
    db="${INKWELL_BENCH_PG_URL%/*}/evbench_$b"
    psql "$INKWELL_BENCH_PG_URL" -qc "DROP DATABASE IF EXISTS evbench_$b" -c "CREATE DATABASE evbench_$b" >/dev/null
    "$bin" key create --user remote --data-dir "$work/$b-pg" --database "$db" > "$work/$b-pg.key" 2>/dev/null
    serve "$bin" "$work/$b-pg" --database "$db" --builtin-delay-ms 100; aport=$sport; apid=$spid
    serve "$bin" "$work/$b-pgb" --database "$db"; bport=$sport
    echo "== $b (PostgreSQL)"
    taskset -c 1 python3 bench/sse.py remote "$aport" "$bport" "$(cat "$work/$b-pg.key")" 100
    stop; spid=$apid; stop
    # the job path's throughput with every piece sent to the other processes (no delay)
    serve "$bin" "$work/$b-pg" --database "$db"
    taskset -c 1 python3 bench/sse.py drain "$sport" "$(cat "$work/$b-pg.key")" 1000
    stop
  done
fi
