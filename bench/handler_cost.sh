#!/usr/bin/env bash
# bench/handler_cost.sh BIN [BASE_BIN] — instructions the server spends per request in
# its request handler (callgrind, --toggle-collect=on_access: everything between
# libmicrohttpd's parsing and its sending), for a show, a list of 10, a create and a
# regenerate of a builtin document. Load does not change an instruction count, so this
# compares two builds on a busy machine where wrk cannot (docs/benchmarks.md, "Event
# sequence"). Each figure is the difference of two runs (20 creates, then 100 or 500
# requests of the kind on one keep-alive connection) / 400, so start-up and the
# creates drop out. Needs valgrind; about a minute a run.
set -euo pipefail
cd "$(dirname "$0")/.."
KINDS=${HANDLER_KINDS:-show list create regen}

run() { # BIN KIND N → instructions in on_access
  local bin=$1 kind=$2 n=$3 d port pid
  d=$(mktemp -d /tmp/inkwell-hcost.XXXXXX)
  local key
  key=$("$bin" key create --user cost --data-dir "$d" 2>/dev/null)
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  valgrind --tool=callgrind --toggle-collect=on_access --callgrind-out-file="$d/cg.out" \
    "$bin" serve --data-dir "$d" --listen "127.0.0.1:$port" --threads 1 --workers 2 \
    --rate-limit 0 --log-level warn >/dev/null 2>"$d/vg.log" &
  pid=$!
  for _ in $(seq 300); do curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.2; done
  python3 - "$port" "$key" "$kind" "$n" <<'PY'
import http.client, sys, urllib.parse
port, key, kind, n = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
auth = {"Authorization": "Bearer " + key}
form = {**auth, "Content-Type": "application/x-www-form-urlencoded"}
body = urllib.parse.urlencode({"name": "bench note", "prompt": "a short note on garden soil"})
def req(method, path, data=None, headers=auth, want=200):
    c.request(method, path, data, headers)
    r = c.getresponse(); r.read()
    assert r.status == want, (method, path, r.status)
for _ in range(20):
    req("POST", "/api/v1/documents", body, form, 201)
for _ in range(n):
    if kind == "create":
        req("POST", "/api/v1/documents", body, form, 201)
    elif kind == "regen":
        req("POST", "/api/v1/documents/1/regenerate", "", form)
    elif kind == "show":
        req("GET", "/api/v1/documents/1")
    else:
        req("GET", "/api/v1/documents?per_page=10")
PY
  kill "$pid"; wait "$pid" 2>/dev/null || true
  awk '/^(summary|totals):/ {print $2; exit}' "$d/cg.out"
  rm -rf "$d"
}

for bin in "$@"; do
  for kind in $KINDS; do
    a=$(run "$bin" "$kind" 100)
    b=$(run "$bin" "$kind" 500)
    printf '%-40s %-7s %8d instructions/request\n' "$bin" "$kind" $(( (b - a) / 400 ))
  done
done
