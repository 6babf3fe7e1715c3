#!/usr/bin/env bash
# Browser tests of the web app (tests/web/*.test.mjs) with node's test runner; installs
# playwright-core with `npm ci` when needed (never a browser: Debian's /usr/bin/chromium
# is used). Prints the TAP stream, then "N passed, N failed" for tests/run.sh; a skipped
# (or todo) test counts as failed: a test that did not run proved nothing.
# Arguments: test files to run instead of ./*.test.mjs.
set -uo pipefail
cd "$(dirname "$0")"
if [ ! -f node_modules/playwright-core/package.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >&2 || { echo "web: 0 passed, 1 failed (npm ci)"; exit 1; }
fi
out=$(mktemp)
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(./*.test.mjs)
node --test --test-reporter=tap "${files[@]}" 2>&1 | tee "$out"
pass=$(sed -nE 's/^# pass ([0-9]+)$/\1/p' "$out" | tail -n 1)
fail=$(sed -nE 's/^# fail ([0-9]+)$/\1/p' "$out" | tail -n 1)
skip=$(sed -nE 's/^# skipped ([0-9]+)$/\1/p' "$out" | tail -n 1)
cancelled=$(sed -nE 's/^# cancelled ([0-9]+)$/\1/p' "$out" | tail -n 1)
todo=$(sed -nE 's/^# todo ([0-9]+)$/\1/p' "$out" | tail -n 1)
rm -f "$out"
[ -n "$pass" ] || { echo "web: 0 passed, 1 failed (no tally from node --test)"; exit 1; }
# a skipped or todo test (not in node's pass count) is counted as failed
skipped=$((${skip:-0} + ${todo:-0}))
fail=$((${fail:-0} + ${cancelled:-0} + skipped))
[ "$skipped" -eq 0 ] || echo "web: $skipped skipped or todo test(s), counted as failed"
echo "web: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
