#!/usr/bin/env bash
# bench/metrics.sh (run by make bench): what counting costs. Two servers on copies
# of one seeded data directory, one with --metrics on and one with --metrics off,
# both on core 0 with one HTTP thread (only one is measured at a time), wrk on core 1.
# Each scenario (show, list, create) is measured ROUNDS times on each, alternating
# which goes first, and the ratio on/off of the medians is printed next to the
# run-to-run spread of the off runs (max/min - 1): counting is free when the ratio's
# distance from 1 is within that spread.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DUR=${BENCH_SECONDS:-5}
CONNS=${BENCH_CONNECTIONS:-32}
ROUNDS=${BENCH_METRICS_ROUNDS:-3}
N=${BENCH_METRICS_DOCS:-2000}
work=$(mktemp -d /tmp/inkwell-bench-metrics.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
waitport() { for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$1/$2" && return 0; sleep 0.05; done; return 1; }
serve() { # DATA METRICS: starts a server; its port in $served, its pid added to pids
  served=$(port)
  taskset -c 0 "$BUILD/inkwell" serve --listen "127.0.0.1:$served" --data-dir "$1" --threads 1 \
    --workers 2 --rate-limit 0 --log-level warn --metrics "$2" >/dev/null 2>&1 & pids+=($!)
  waitport "$served" healthz
}
rps() { # URL [lua] -> req/s
  local out
  if [ -n "${2:-}" ]; then out=$(taskset -c 1 wrk -t1 -c"$CONNS" -d"${DUR}s" -s "$2" "$1")
  else out=$(taskset -c 1 wrk -t1 -c"$CONNS" -d"${DUR}s" "$1"); fi
  echo "$out" | awk '/Requests\/sec/ {print $2}'
}

"$BUILD/inkwell" key create --user bench --data-dir "$work/on" > "$work/key" 2>/dev/null
key=$(cat "$work/key")
export BENCH_KEY=$key
serve "$work/on" on; p=$served
echo "metrics bench: seeding $N documents..." >&2
python3 bench/seed.py "$p" "$key" "$N"
for _ in $(seq 600); do
  n=$(curl -s -H "Authorization: Bearer $key" "http://127.0.0.1:$p/api/v1/documents?favorite=0" | python3 -c 'import json,sys; print(json.load(sys.stdin)["meta"]["total"])')
  [ "$n" = "$N" ] && break; sleep 0.2
done
kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true; pids=()
cp -a "$work/on" "$work/off"
printf 'wrk.headers["Authorization"] = "Bearer %s"\n' "$key" > "$work/get.lua"
serve "$work/on" on; port_on=$served
serve "$work/off" off; port_off=$served

declare -A runs
for r in $(seq "$ROUNDS"); do
  order="on off"; [ $((r % 2)) -eq 0 ] && order="off on"
  for sc in show list create; do
    for m in $order; do
      pp=port_$m
      case $sc in
        show) v=$(rps "http://127.0.0.1:${!pp}/api/v1/documents/$((N / 2))" "$work/get.lua") ;;
        list) v=$(rps "http://127.0.0.1:${!pp}/api/v1/documents" "$work/get.lua") ;;
        create) v=$(rps "http://127.0.0.1:${!pp}" bench/post.lua) ;;
      esac
      runs[$sc-$m]="${runs[$sc-$m]:-} $v"
    done
  done
done

printf '\n== metrics on vs off (%d rounds of %d s, %d connections, one HTTP thread)\n' "$ROUNDS" "$DUR" "$CONNS"
printf '%-8s %-30s %-30s %10s %10s\n' scenario "on req/s" "off req/s" "on/off" "off spread"
for sc in show list create; do
  python3 - "$sc" "${runs[$sc-on]}" "${runs[$sc-off]}" <<'PY'
import statistics, sys
sc, on, off = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
ratio = statistics.median(on) / statistics.median(off)
spread = max(off) / min(off) - 1
print(f"{sc:<8} {' '.join(f'{x:.0f}' for x in on):<30} {' '.join(f'{x:.0f}' for x in off):<30} {ratio:10.3f} {spread * 100:9.1f}%")
PY
done
