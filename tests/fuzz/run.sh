#!/usr/bin/env bash
# run.sh [SECONDS] — builds every tests/fuzz/fuzz_*.c as a libFuzzer target (clang,
# ASan + UBSan) linked with the project sources, then runs each for SECONDS (default
# $FUZZ_SECONDS, else 60) on a scratch copy of its seed corpus tests/fuzz/corpus/<name>/.
# Exits non-zero if a target fails to build or finds a crash; the crash input is kept
# under $FUZZ_OUT/crashes/ and its path printed.
#
# Environment:
#   FUZZ_SRCS     project sources to link (default: every src/**/*.c but src/main.c)
#   FUZZ_TARGETS  targets to run, e.g. "fuzz_form fuzz_pct" (default: all)
#   FUZZ_OUT      build and work directory (default: build/fuzz)
#   FUZZ_CC       compiler (default: clang, else clang-14)
#   FUZZ_FLAGS    extra libFuzzer flags, e.g. "-jobs=2 -workers=2"
# shellcheck disable=SC2086  # flag and file lists are word-split on purpose
set -u

cd "$(dirname "$0")/../.." || exit 2

secs=${1:-${FUZZ_SECONDS:-60}}
case $secs in
'' | *[!0-9]*) echo "run.sh: SECONDS must be a number, got '$secs'" >&2; exit 2 ;;
esac

cc=${FUZZ_CC:-}
if [ -z "$cc" ]; then
    if command -v clang >/dev/null 2>&1; then cc=clang; else cc=clang-14; fi
fi
command -v "$cc" >/dev/null 2>&1 || { echo "run.sh: $cc not found (apt-get install clang libclang-rt-14-dev)" >&2; exit 2; }

pkgs=$(make -s --no-print-directory print-pkgs) || exit 2 # the Makefile's PKGS
pkg_cflags=$(pkg-config --cflags $pkgs) || exit 2
# linked: the Makefile's PKGS but those loaded at first use (src/core/lazylib.h)
pkg_libs=$(pkg-config --libs $(make -s --no-print-directory print-link-pkgs)) || exit 2
srcs=${FUZZ_SRCS:-$(find src -name '*.c' ! -path src/main.c | sort)}
if [ -z "${FUZZ_SRCS:-}" ]; then
    # the compiled-in static files (core/assets.h) are a generated source: make it
    assets=${BUILD:-build}/gen/assets.c
    make --no-print-directory "$assets" >/dev/null || { echo "run.sh: cannot make $assets" >&2; exit 2; }
    srcs="$srcs $assets"
fi
out=${FUZZ_OUT:-build/fuzz}
san="-fsanitize=address,undefined -fno-sanitize-recover=all"
cflags="-g -O1 -Isrc -D_GNU_SOURCE $pkg_cflags"

mkdir -p "$out/obj" "$out/bin" "$out/crashes" "$out/logs" || exit 2

# Project sources once, with coverage instrumentation but no fuzzer main().
objs=""
for src in $srcs; do
    obj="$out/obj/$(echo "$src" | tr / _).o"
    if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find src -name '*.h' -newer "$obj" | head -n 1)" ]; then
        echo "  CC      $src"
        $cc $cflags -fsanitize=fuzzer-no-link $san -c "$src" -o "$obj" || { echo "run.sh: cannot build $src" >&2; exit 2; }
    fi
    objs="$objs $obj"
done

targets=${FUZZ_TARGETS:-$(for f in tests/fuzz/fuzz_*.c; do basename "$f" .c; done)}
for t in $targets; do
    echo "  LINK    $t"
    $cc $cflags -fsanitize=fuzzer $san -Itests/fuzz -o "$out/bin/$t" "tests/fuzz/$t.c" $objs \
        $pkg_libs -lm -lpthread || { echo "run.sh: cannot build $t" >&2; exit 2; }
done

scratch=$(mktemp -d "${TMPDIR:-/tmp}/inkwell-fuzz.XXXXXX") || exit 2
trap 'rm -rf "$scratch"' EXIT INT TERM

failed=""
for t in $targets; do
    corpus="$scratch/$t"
    mkdir -p "$corpus"
    [ -d "tests/fuzz/corpus/$t" ] && cp -R "tests/fuzz/corpus/$t/." "$corpus/"
    dict=""
    [ -f "tests/fuzz/$t.dict" ] && dict="-dict=tests/fuzz/$t.dict"
    log="$out/logs/$t.log"
    echo "== $t: ${secs}s, seeds $(find "$corpus" -type f | wc -l), log $log"
    "$out/bin/$t" -max_len=4096 -timeout=5 -max_total_time="$secs" -print_final_stats=1 \
        -artifact_prefix="$out/crashes/$t-" $dict ${FUZZ_FLAGS:-} "$corpus" >"$log" 2>&1
    rc=$?
    # the last status line carries coverage (cov), features (ft) and the corpus size
    grep -E '^#[0-9]+' "$log" | tail -n 1 | sed 's/^/   /'
    grep -E 'stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$log" | sed 's/^/   /'
    if [ $rc -ne 0 ]; then
        echo "!! $t FAILED (exit $rc):"
        grep -E 'ERROR: |runtime error|fuzz invariant failed|deadly signal|timeout' "$log" | head -n 5 | sed 's/^/   /'
        grep -E 'Test unit written to|artifact_prefix' "$log" | sed 's/^/   /'
        echo "   reproduce: $out/bin/$t <crash-file>"
        failed="$failed $t"
    fi
done

if [ -n "$failed" ]; then
    echo "fuzz: FAILED:$failed"
    exit 1
fi
echo "fuzz: all targets ran ${secs}s without a crash"
