#!/usr/bin/env bash
# Runs every suite: the unit tests (each tests/unit/test_*.c program), then the
# black-box HTTP suite against the real binary on SQLite and on a throwaway
# PostgreSQL cluster, then the web app's browser tests (tests/web, Chromium) on both.
# Ends with the line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export INKWELL_BIN="$PWD/$BUILD/inkwell"
logdir=$(mktemp -d /tmp/inkwell-tests.XXXXXX)
chmod 755 "$logdir"
pgdir="$logdir/pg"
passed=0
failed=0

cleanup() { scripts/pg-test.sh stop "$pgdir" >/dev/null 2>&1 || true; }
trap cleanup EXIT

if url=$(scripts/pg-test.sh start "$pgdir" 2>"$logdir/pg-start.log"); then
  export INKWELL_TEST_PG_URL="$url" INKWELL_TEST_PG_DIR="$pgdir"
else
  echo "FAIL: could not start the test PostgreSQL:"; cat "$logdir/pg-start.log"
  failed=$((failed + 1))
fi

t_suite=$(date +%s)
secs() { echo "$(( $(date +%s) - t_suite ))s"; } # the suite's own time (t_suite: its start)

count() { # parses "... N passed, M failed" from the last such line of a log
  local line
  line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
  if [ -z "$line" ]; then echo "0 1"; return; fi
  echo "$line" | sed -E 's/.* ([0-9]+) passed, ([0-9]+) failed.*/\1 \2/'
}

# The architecture's one rule a build cannot check: no circle between the folders of
# src/ (their #include lines), nothing below src/api/ reaching into it, nothing outside
# src/store/ calling through the store's ops table, libmicrohttpd only in src/http/, no
# internal header (_int.h) of a folder included from another, a request's fields only in
# src/http/.
log="$logdir/layers.log"
{
  python3 scripts/include-graph.py
  ops=$(grep -rn -- '->ops->' src | grep -v '^src/store/' || true)
  mhd=$(grep -rln 'microhttpd' src | grep -v '^src/http/' || true)
  [ -z "$ops" ] || echo "FAIL: ops table called outside src/store/: $ops"
  [ -z "$mhd" ] || echo "FAIL: libmicrohttpd named outside src/http/: $mhd"
  # a request's fields are src/http/'s (req_int.h): elsewhere http_req_t is opaque, so
  # the compiler refuses any r->field; what keeps it so is that no one else defines the
  # struct or includes a header of src/http/ that does (include-graph.py: _int.h)
  req=$(grep -rlE 'struct[[:space:]]+http_req[[:space:]]*\{' src tests bench | grep -v '^src/http/' || true)
  reqh=$(grep -rlE '#include "http/(req|server)_int\.h"' src tests bench | grep -v '^src/http/' || true)
  [ -z "$req" ] || echo "FAIL: struct http_req defined outside src/http/: $req"
  [ -z "$reqh" ] || echo "FAIL: src/http/'s request fields included outside it: $reqh"
} >"$log" 2>&1
if grep -q 'FAIL' "$log"; then
  failed=$((failed + 1)); printf '%-28s %4d passed, %d failed   <-- see %s\n' "layers" 0 1 "$log"; cat "$log"
else
  passed=$((passed + 1)); printf '%-28s %4d passed, %d failed\n' "layers" 1 0
fi

for t in "$BUILD"/tests/test_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  log="$logdir/$name.log"
  t_suite=$(date +%s)
  if "$t" >"$log" 2>&1; then status=ok; else status=FAILED; fi
  read -r p f < <(count "$log")
  [ "$status" = FAILED ] && [ "$f" = 0 ] && f=1
  passed=$((passed + p)); failed=$((failed + f))
  printf '%-28s %4d passed, %d failed %6s%s\n' "$name" "$p" "$f" "$(secs)" "$([ "$status" = ok ] || echo "   <-- see $log")"
  [ "$status" = ok ] || tail -n 30 "$log"
done

for backend in sqlite postgres; do
  [ "$backend" = postgres ] && [ -z "${INKWELL_TEST_PG_URL:-}" ] && continue
  log="$logdir/http-$backend.log"
  t_suite=$(date +%s)
  INKWELL_TEST_BACKEND=$backend INKWELL_TEST_LOGDIR="$logdir" python3 tests/http/run.py >"$log" 2>&1
  read -r p f < <(count "$log")
  passed=$((passed + p)); failed=$((failed + f))
  printf '%-28s %4d passed, %d failed %6s%s\n' "http ($backend)" "$p" "$f" "$(secs)" "$([ "$f" = 0 ] || echo "   <-- see $log")"
  [ "$f" = 0 ] || grep -E -A 25 '^(FAIL|ERROR):' "$log" | head -n 150
done

for backend in sqlite postgres; do
  [ "$backend" = postgres ] && [ -z "${INKWELL_TEST_PG_URL:-}" ] && continue
  log="$logdir/web-$backend.log"
  t_suite=$(date +%s)
  BUILD="$BUILD" INKWELL_TEST_BACKEND=$backend INKWELL_TEST_LOGDIR="$logdir" tests/web/run.sh >"$log" 2>&1
  read -r p f < <(count "$log")
  passed=$((passed + p)); failed=$((failed + f))
  printf '%-28s %4d passed, %d failed %6s%s\n' "web ($backend)" "$p" "$f" "$(secs)" "$([ "$f" = 0 ] || echo "   <-- see $log")"
  grep -E '^web: [0-9]+ skipped' "$log" | grep -v ': 0 skipped' | sed 's/^/  /'
  [ "$f" = 0 ] || grep -E -B 2 -A 30 '^ *not ok ' "$log" | head -n 150
done

# The OpenAPI document: valid (two third-party linters), a generated client compiles,
# every answer the HTTP suites above recorded conforms to it, and a validating proxy
# (Stoplight Prism, --errors) in front of a real server flags none of a replay of their
# traffic (tests/openapi/prism.mjs; bounded to 5 minutes).
if (cd tests/openapi && npm ci --no-audit --no-fund --loglevel=error) >"$logdir/npm.log" 2>&1; then
  for mode in lint client responses prism; do
    log="$logdir/openapi-$mode.log"
    t_suite=$(date +%s)
    args=()
    [ "$mode" = responses ] && args=("$logdir"/exchanges-*.jsonl)
    if [ "$mode" = prism ]; then
      timeout 300 node tests/openapi/prism.mjs "$INKWELL_BIN" >"$log" 2>&1
    else
      node tests/openapi/check.mjs "$mode" "${args[@]}" >"$log" 2>&1
    fi
    read -r p f < <(count "$log")
    passed=$((passed + p)); failed=$((failed + f))
    printf '%-28s %4d passed, %d failed %6s%s\n' "openapi $mode" "$p" "$f" "$(secs)" "$([ "$f" = 0 ] || echo "   <-- see $log")"
    [ "$f" = 0 ] || grep -E -A 3 '^FAIL' "$log" | head -n 80
  done
else
  echo "FAIL: npm ci in tests/openapi:"; tail -n 20 "$logdir/npm.log"
  failed=$((failed + 1))
fi

echo "logs: $logdir"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
