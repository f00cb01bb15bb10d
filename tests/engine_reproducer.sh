#!/usr/bin/env bash
# An engine pack's own reproducer (protocol capability repro, docs/target-protocol.md): a small
# campaign whose oracle admits no difference at all (allclose, atol = rtol = 0: the engine's
# float32 result is never the fp64 reference exactly) files a finding; its folder must hold the
# pack's reproducer FILE, which must compile against the engine alone (LIBS), run, print both
# values and exit 1 (the difference is still there).
# $FUZZ_ARGS replaces that campaign (a real finding), $EXPECT the line the reproducer must print.
#   usage: engine_reproducer.sh FUSEFUZZ TARGET FILE WORK_DIR LIBS...
set -euo pipefail
fusefuzz=$1 target=$2 file=$3 work=$4
shift 4
fuzz_args=${FUZZ_ARGS:---graphs 4 --seed 1 --no-minimize --oracle allclose --atol 0 --rtol 0}
expect=${EXPECT:-BUG: outside the bound}
rm -rf "$work"
rc=0
# shellcheck disable=SC2086
"$fusefuzz" fuzz --target "$target" $fuzz_args --jobs 1 --quiet --no-sensitivity-check --force \
  --out "$work/campaign" || rc=$?
[ "$rc" -eq 1 ] || { echo "FAIL: $target: expected a finding (exit 1), fuzz exited $rc"; exit 1; }
found=$(find "$work/campaign/findings" -name "$file" | head -n 1)
[ -n "$found" ] || { echo "FAIL: $target: no $file in any finding folder"; exit 1; }
folder=$(dirname "$found")
head -n 3 "$found"
g++ -std=c++17 -O1 -w "$found" -o "$work/reproduce" "$@"
rc=0
"$work/reproduce" > "$work/out.txt" || rc=$?
cat "$work/out.txt"
[ "$rc" -eq 1 ] || { echo "FAIL: $target: the reproducer exited $rc, expected 1"; exit 1; }
grep -q "$expect" "$work/out.txt"
echo "engine_reproducer: $target: $folder/$file compiles and reproduces"
