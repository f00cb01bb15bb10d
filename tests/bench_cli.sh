#!/usr/bin/env bash
# `fusefuzz bench --filter` on a row of one binary only: the other binary is not run (no
# "Failed to match any benchmarks"), rate counters print their unit once ("graphs=2.1k/s", not
# "graphs/s=2.1k/s"), and Debian's "Library was built as DEBUG" line is replaced by a note.
#   tests/bench_cli.sh FUSEFUZZ OUT_DIR
set -uo pipefail
rm -rf "$2"  # bench refuses a non-empty --out: each run starts from none
out=$("$1" bench --filter 'BM_Harness/generate$' --out "$2" -- --benchmark_min_time=0.001 2>&1)
status=$?
echo "$out"
fail() { echo "bench_cli: $*"; exit 1; }
[ $status -eq 0 ] || fail "exit $status"
grep -q 'Failed to match' <<<"$out" && fail "a binary ran with a filter that matches none of its rows"
grep -q 'Library was built as DEBUG' <<<"$out" && fail "the library's DEBUG warning was passed on"
grep -q '/s=' <<<"$out" && fail "a counter prints its unit twice"
grep -q 'graphs=' <<<"$out" || fail "no graphs counter"
"$1" bench --filter 'no_such_row' --out "$2" --force >/dev/null 2>&1
[ $? -eq 2 ] || fail "a filter matching nothing must exit 2"
# The folder holds the first run's files now: without --force, exit 2 naming the way out.
err=$("$1" bench --filter 'BM_Harness/generate$' --out "$2" 2>&1)
[ $? -eq 2 ] || fail "a non-empty --out without --force must exit 2"
grep -q -- '--force' <<<"$err" || fail "the refusal does not name --force: $err"
echo "bench_cli: ok"
