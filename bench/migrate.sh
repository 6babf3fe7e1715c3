#!/usr/bin/env bash
# bench/migrate.sh — `inkwell migrate` (API.md §25) at scale: a SQLite data directory
# seeded by build/bench-seed (documents as the API's builtin create stores them, each
# with its revision 1) to each size of BENCH_MIGRATE_SIZES (default 100000,1000000),
# copied into an empty PostgreSQL database of a throwaway cluster (scripts/pg-test.sh)
# and back into a new data directory. Prints, per size and direction, the seconds, the
# documents a second and the rows a second (every table: documents, revisions, users,
# keys, counts, ...), each including the verification (every row read back and
# checksummed before the commit). The machine is shared: the load average is printed
# beside the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SIZES=${BENCH_MIGRATE_SIZES:-100000,1000000}
work=$(mktemp -d /tmp/inkwell-bench-migrate.XXXXXX)
chmod 755 "$work" # the PostgreSQL cluster runs as another user (scripts/pg-test.sh)
pg="$work/pg"
cleanup() { scripts/pg-test.sh stop "$pg" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
url=$(scripts/pg-test.sh start "$pg" | tail -n1)
mkdir -p "$work/data"
"$BUILD/inkwell" key create --user bench --data-dir "$work/data" >/dev/null 2>&1
have=0
n=0
for size in ${SIZES//,/ }; do
  echo "seeding to $size documents..." >&2
  "$BUILD/bench-seed" "$work/data/inkwell.db" bench "$have" "$size" 5000 2>&1 | grep -v ' info ' >&2 || true
  have=$size
  n=$((n + 1))
  db="m$n"
  psql "$url" -qAtc "CREATE DATABASE $db" >/dev/null
  to="${url%/*}/$db"
  rows() { grep -o 'done, [0-9]* rows' "$1" | grep -o '[0-9]*'; }
  t0=$(date +%s.%N)
  "$BUILD/inkwell" migrate --from "$work/data" --to "$to" 2> "$work/to.log" || { tail -5 "$work/to.log"; exit 1; }
  t1=$(date +%s.%N)
  rm -rf "$work/back"
  "$BUILD/inkwell" migrate --from "$to" --to "$work/back" 2> "$work/back.log" || { tail -5 "$work/back.log"; exit 1; }
  t2=$(date +%s.%N)
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  r1=$(rows "$work/to.log"); r2=$(rows "$work/back.log")
  awk -v s="$size" -v a="$t0" -v b="$t1" -v c="$t2" -v r1="$r1" -v r2="$r2" -v l="$load" 'BEGIN {
    printf "migrate %d documents: sqlite->postgres %.1f s (%.0f documents/s, %.0f rows/s of %d);", s, b-a, s/(b-a), r1/(b-a), r1
    printf " postgres->sqlite %.1f s (%.0f documents/s, %.0f rows/s); load average %s\n", c-b, s/(c-b), r2/(c-b), l }'
  psql "$url" -qAtc "DROP DATABASE $db" >/dev/null
done
