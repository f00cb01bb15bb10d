#!/bin/sh
# ctest onnx/ort-release (docs/onnx.md, "Testing another release"): two onnxruntime-node releases
# besides the pinned one, when installed (targets/onnxruntime/install-release.sh 1.16.3 and
# 1.17.0; exit 77, skipped, otherwise): their hellos say what each cannot do (probed), a finding
# folder replayed with --versions gets the first bad release (1.17.0, where PadFusion began to
# fold into MaxPool) and its report section, and a release not installed is refused.
# usage: ort_release.sh FUSEFUZZ SOURCE_DIR WORK_DIR
set -eu
fusefuzz=$1 src=$2 work=$3
cache=${FUSEFUZZ_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fusefuzz}/onnxruntime
for v in 1.16.3 1.17.0; do
  [ -f "$cache/$v/node_modules/onnxruntime-node/package.json" ] || {
    echo "onnxruntime-node $v not installed in $cache: skipped"; exit 77; }
done
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work/finding"
# The hellos (what `fusefuzz list targets` prints for each installed release).
hello() {
  echo | node "$src/targets/onnxruntime/fusefuzz-ort.js" --ort-module \
    "$cache/$1/node_modules/onnxruntime-node" | head -n 1
}
hello 1.16.3 >"$work/hello-1.16.3.json"
hello 1.17.0 >"$work/hello-1.17.0.json"
grep -q '"capabilities":\["onnx","onnx_only","bench","batch","repro"\],.*"limits":{"disable":.*"rewrites":' \
  "$work/hello-1.16.3.json" || fail "1.16.3's hello: $(cat "$work/hello-1.16.3.json")"
grep -q '"unoptimized_run"' "$work/hello-1.16.3.json" && fail "1.16.3 honours the level"
grep -q '"capabilities":\["onnx","onnx_only","rewrites","bench","batch","repro"\],.*"limits":{"disable":.*"spurious_rewrites":' \
  "$work/hello-1.17.0.json" || fail "1.17.0's hello: $(cat "$work/hello-1.17.0.json")"
# A finding folder: the repro as repro.json beside a report.md.
cp "$src/corpus/onnxruntime/padfusion-ceil-mode-maxpool-shape.repro.json" "$work/finding/repro.json"
printf '# Finding\n' >"$work/finding/report.md"
"$fusefuzz" replay "$work/finding" --versions onnxruntime@1.16.3..1.17.0:all >"$work/out.txt"
cat "$work/out.txt"
grep -q '^  1.16.3  good  PASS' "$work/out.txt" || fail "1.16.3 not good"
grep -q '^  1.17.0  bad  MISMATCH, fusion$' "$work/out.txt" || fail "1.17.0 not bad (unblamed)"
grep -q 'first bad 1.17.0 (good on 1.16.3 before it); first good after it: none' "$work/out.txt" ||
  fail "bisection"
grep -q '"first_bad": "1.17.0"' "$work/finding/versions.json" || fail "versions.json"
grep -q '^## Releases' "$work/finding/report.md" || fail "no Releases section in report.md"
# Twice: the section is replaced, not repeated.
"$fusefuzz" replay "$work/finding" --versions onnxruntime@1.16.3..1.17.0:all >/dev/null
[ "$(grep -c '^## Releases' "$work/finding/report.md")" = 1 ] || fail "section repeated"
# Not installed: exit 2 and the install command.
FUSEFUZZ_CACHE=$work/empty-cache "$fusefuzz" fuzz --graphs 1 --out "$work/camp" \
  --target onnxruntime@1.17.0:all 2>"$work/err.txt" && fail "an uninstalled release ran"
[ $? -eq 2 ] || fail "exit status not 2"
grep -q 'install-release.sh 1.17.0' "$work/err.txt" || fail "no install command: $(cat "$work/err.txt")"
echo "ok"
