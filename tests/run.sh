#!/usr/bin/env bash
# Runs every suite: the unit tests (each tests/unit/test_*.c program), then the
# black-box HTTP suite against the real binary on SQLite and on a throwaway
# PostgreSQL cluster, then the web app's browser tests (tests/web, Chromium) on both,
# then the OpenAPI checks. Ends with the line "N passed, N failed".
#
# Two suites run at a time (two workers; the machine has two cores and a suite's servers
# mostly wait): the longest first, each worker with its own PostgreSQL cluster, so a test
# that restarts its cluster (test_pg_multi, test_store_pg) or uses PostgreSQL from the
# SQLite suite (test_unicode) never meets the other worker's. Each suite's line is
# printed in the fixed order below as soon as it and every suite above it have ended;
# its time is its own (wall time, beside the other worker's suite).
#
# Environment:
#   SUITES      which groups to run (default "units http web openapi"; the sanitizer
#               passes run "units http", docs/testing.md)
#   HTTP_TESTS  the HTTP suite's test files (patterns for tests/http/run.py; default all)
#   UNIT_SKIP   unit test programs not to run (names, e.g. "test_openai"; default none)
#   BACKENDS    the HTTP and web suites' backends (default "sqlite postgres")
#   WORKERS     suites at a time (default 2)
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SUITES=${SUITES:-units http web openapi}
HTTP_TESTS=${HTTP_TESTS:-}
UNIT_SKIP=${UNIT_SKIP:-}
WORKERS=${WORKERS:-2}
BACKENDS=${BACKENDS:-sqlite postgres}
export INKWELL_BIN="$PWD/$BUILD/inkwell"
# ThreadSanitizer (make SANITIZE=thread): reports of a library's own internals only are
# suppressed (tests/tsan.supp, each explained); a report makes a unit test exit 66 and a
# server's log fail its test (tests/http/harness.py)
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}suppressions=$PWD/tests/tsan.supp:second_deadlock_stack=1:exitcode=66"
logdir=$(mktemp -d /tmp/inkwell-tests.XXXXXX)
chmod 755 "$logdir"
res="$logdir/results"
mkdir -p "$res"
passed=0
failed=0
want() { case " $SUITES " in *" $1 "*) return 0 ;; esac; return 1; }

# One PostgreSQL cluster per worker (pg1, pg2...).
pg_ok=1
cleanup() {
  for ((w = 1; w <= WORKERS; w++)); do scripts/pg-test.sh stop "$logdir/pg$w" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT
for ((w = 1; w <= WORKERS; w++)); do
  if url=$(scripts/pg-test.sh start "$logdir/pg$w" 2>"$logdir/pg$w-start.log"); then
    echo "$url" >"$logdir/pg$w.url"
  else
    echo "FAIL: could not start the test PostgreSQL:"; cat "$logdir/pg$w-start.log"
    failed=$((failed + 1)); pg_ok=0
  fi
done

count() { # parses "... N passed, M failed" from the last such line of a log
  local line
  line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
  if [ -z "$line" ]; then echo "0 1"; return; fi
  echo "$line" | sed -E 's/.* ([0-9]+) passed, ([0-9]+) failed.*/\1 \2/'
}

# The architecture's one rule a build cannot check: no circle between the folders of
# src/ (their #include lines), nothing below src/api/ reaching into it, nothing outside
# src/store/ calling through the store's ops table (nor outside src/media/ through the
# media store's), libmicrohttpd only in src/http/, no
# internal header (_int.h) of a folder included from another, a request's fields only in
# src/http/.
log="$logdir/layers.log"
{
  python3 scripts/include-graph.py
  # (src/media/ has an ops table of its own, the media store's: m->ops-> there only)
  ops=$(grep -rn -- '->ops->' src | grep -v '^src/store/' | grep -vE '^src/media/[a-z_0-9]+\.c:[0-9]+:.*[^a-z_]m->ops->' || true)
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

# npm installs before the workers start (two at once in one node_modules would race)
npm_ok=1
if want web && { [ ! -f tests/web/node_modules/playwright-core/package.json ] ||
  [ tests/web/package-lock.json -nt tests/web/node_modules/.package-lock.json ]; }; then
  (cd tests/web && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error) >"$logdir/npm-web.log" 2>&1 ||
    { echo "FAIL: npm ci in tests/web:"; tail -n 20 "$logdir/npm-web.log"; failed=$((failed + 1)); }
fi
# the S3 server of tests/http/test_s3.py (both HTTP workers run it)
if want http && { [ ! -f tests/s3/node_modules/s3rver/package.json ] ||
  [ tests/s3/package-lock.json -nt tests/s3/node_modules/.package-lock.json ]; }; then
  (cd tests/s3 && npm ci --no-audit --no-fund --loglevel=error) >"$logdir/npm-s3.log" 2>&1 ||
    { echo "FAIL: npm ci in tests/s3:"; tail -n 20 "$logdir/npm-s3.log"; failed=$((failed + 1)); }
fi
# the OpenID provider of tests/http/test_oidc.py, test_pg_oidc.py and tests/web/oidc.test.mjs
if { want http || want web; } && { [ ! -f tests/oidc/node_modules/oidc-provider/package.json ] ||
  [ tests/oidc/package-lock.json -nt tests/oidc/node_modules/.package-lock.json ]; }; then
  (cd tests/oidc && npm ci --no-audit --no-fund --loglevel=error) >"$logdir/npm-oidc.log" 2>&1 ||
    { echo "FAIL: npm ci in tests/oidc:"; tail -n 20 "$logdir/npm-oidc.log"; failed=$((failed + 1)); }
fi
if want openapi && ! (cd tests/openapi && npm ci --no-audit --no-fund --loglevel=error) >"$logdir/npm.log" 2>&1; then
  echo "FAIL: npm ci in tests/openapi:"; tail -n 20 "$logdir/npm.log"
  failed=$((failed + 1)); npm_ok=0
fi

# The suites, in the order their lines are printed: "KIND ARG" (KIND: unit, http, web,
# openapi). `order` is the order the workers take them in: the longest first.
jobs=()
if want units; then
  for t in "$BUILD"/tests/test_*; do
    case " $UNIT_SKIP " in *" $(basename "$t") "*) continue ;; esac
    [ -x "$t" ] && jobs+=("unit $t")
  done
fi
for backend in $BACKENDS; do
  [ "$backend" = postgres ] && [ $pg_ok = 0 ] && continue
  # a backend's HTTP suite is two jobs sharing its modules (tests/http/run.py claims):
  # both workers take from the longest suite until it is done, then move on
  if want http; then for ((w = 1; w <= WORKERS; w++)); do jobs+=("http $backend $w"); done; fi
done
for backend in $BACKENDS; do
  [ "$backend" = postgres ] && [ $pg_ok = 0 ] && continue
  want web && jobs+=("web $backend")
done
if want openapi && [ $npm_ok = 1 ]; then
  for mode in lint client responses prism; do jobs+=("openapi $mode"); done
fi
order=()
for k in "http postgres" "http sqlite" "unit" "web postgres" "web sqlite" "openapi lint" "openapi client" "openapi responses" "openapi prism"; do
  for i in "${!jobs[@]}"; do [[ "${jobs[$i]}" == "$k"* ]] && order+=("$i"); done
done

# runs job $1 on worker $2 (its PostgreSQL cluster); writes "PASSED FAILED SECONDS STATUS"
# to $res/$1 when it ends
run_job() {
  local i=$1 w=$2 kind arg shard log t0 status p f
  read -r kind arg shard <<<"${jobs[$i]}"
  log="$logdir/$kind-$(basename "$arg")${shard:+-$shard}.log"
  [ "$kind" = unit ] && log="$logdir/$(basename "$arg").log"
  export INKWELL_TEST_PG_URL INKWELL_TEST_PG_DIR="$logdir/pg$w"
  INKWELL_TEST_PG_URL=$(cat "$logdir/pg$w.url" 2>/dev/null)
  t0=$(date +%s)
  case $kind in
    unit) "$arg" ;;
    http)
      # shellcheck disable=SC2086 # HTTP_TESTS: a list of patterns
      mkdir -p "$logdir/claims-$arg"
      INKWELL_TEST_BACKEND=$arg INKWELL_TEST_LOGDIR="$logdir" INKWELL_TEST_CLAIMS="$logdir/claims-$arg" \
        INKWELL_TEST_SHARD="$shard" python3 tests/http/run.py $HTTP_TESTS ;;
    web) BUILD="$BUILD" INKWELL_TEST_BACKEND=$arg INKWELL_TEST_LOGDIR="$logdir" tests/web/run.sh ;;
    openapi)
      # the answers the HTTP suites recorded: both must have ended
      if [ "$arg" = responses ]; then
        for j in "${!jobs[@]}"; do
          [[ "${jobs[$j]}" == http* ]] || continue
          while [ ! -e "$res/$j" ]; do sleep 1; done
        done
      fi
      case $arg in
        responses) node tests/openapi/check.mjs responses "$logdir"/exchanges-*.jsonl ;;
        prism) timeout 300 node tests/openapi/prism.mjs "$INKWELL_BIN" ;;
        *) node tests/openapi/check.mjs "$arg" ;;
      esac ;;
  esac >"$log" 2>&1
  if [ $? = 0 ]; then status=ok; else status=FAILED; fi
  read -r p f < <(count "$log")
  [ "$status" = FAILED ] && [ "$f" = 0 ] && f=1
  echo "$p $f $(($(date +%s) - t0)) $status $log" >"$res/$i.tmp" && mv "$res/$i.tmp" "$res/$i"
}

# a worker takes the next suite of `order` no other has claimed (mkdir is atomic)
worker() {
  local w=$1 i
  for i in "${order[@]}"; do
    mkdir "$res/claim-$i" 2>/dev/null || continue
    run_job "$i" "$w"
  done
}

# prints job $1's line (and, when it failed, the end of its log)
report() {
  local i=$1 kind arg shard p f s status log name
  read -r kind arg shard <<<"${jobs[$i]}"
  read -r p f s status log <"$res/$i"
  passed=$((passed + p)); failed=$((failed + f))
  case $kind in
    unit) name=$(basename "$arg") ;;
    *) name="$kind ($arg${shard:+ $shard})"; [ "$kind" = openapi ] && name="openapi $arg" ;;
  esac
  printf '%-28s %4d passed, %d failed %6s%s\n' "$name" "$p" "$f" "${s}s" "$([ "$status" = ok ] && [ "$f" = 0 ] || echo "   <-- see $log")"
  case $kind in
    unit) [ "$status" = ok ] || tail -n 30 "$log" ;;
    http)
      grep -E '^module times:' "$log" | cut -c1-200 | sed 's/^/  /'
      [ "$f" = 0 ] || grep -E -A 25 '^(FAIL|ERROR):' "$log" | head -n 150 ;;
    web)
      grep -E '^web: [0-9]+ skipped' "$log" | grep -v ': 0 skipped' | sed 's/^/  /'
      [ "$f" = 0 ] || grep -E -B 2 -A 30 '^ *not ok ' "$log" | head -n 150 ;;
    openapi) [ "$f" = 0 ] || grep -E -A 3 '^FAIL' "$log" | head -n 80 ;;
  esac
}

pids=()
for ((w = 1; w <= WORKERS; w++)); do
  worker "$w" &
  pids+=($!)
done
for i in "${!jobs[@]}"; do
  while [ ! -e "$res/$i" ]; do
    # a worker that died without writing its result would leave us waiting: count it
    alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    if [ $alive = 0 ] && [ ! -e "$res/$i" ]; then
      echo "0 1 0 FAILED (no result)" >"$res/$i"
    fi
    sleep 1
  done
  report "$i"
done
wait

# no secret an HTTP suite used or received reaches a server log (issue 34): the harness
# recorded them in secrets-*.txt; tests/secrets_check.py greps every server log for each
if ls "$logdir"/secrets-*.txt >/dev/null 2>&1; then
  if python3 tests/secrets_check.py "$logdir" >"$logdir/secrets-check.log" 2>&1; then
    passed=$((passed + 1)); printf '%-28s %s\n' "secrets in logs" "$(tail -n 1 "$logdir/secrets-check.log")"
  else
    failed=$((failed + 1)); echo "FAIL: secrets in logs:"; head -n 30 "$logdir/secrets-check.log"
  fi
fi

echo "logs: $logdir"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
