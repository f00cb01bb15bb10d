#!/usr/bin/env bash
# quantize_ort.sh FUSEFUZZ WORKDIR: `fusefuzz quantize` on a float residual block
# (tests/data/float-residual-block.json, exported to ONNX), then `fusefuzz check` of the
# QDQ model (and its --reduce-range twin) on ONNX Runtime at `disabled` and `all` (where ORT
# fuses it into QLinearConv and QLinearAdd): both must pass on the integer grid. A quantized
# model given again is refused (exit 2). Skipped (77) without the ORT npm package.
set -euo pipefail
bin=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
[ -d "$here/../targets/onnxruntime/node_modules/onnxruntime-node" ] || exit 77
rm -rf "$work"
mkdir -p "$work"
fail() { echo "quantize_ort.sh: $*" >&2; exit 1; }
"$bin" export "$here/data/float-residual-block.json" --onnx "$work/float.onnx" >/dev/null
"$bin" quantize "$work/float.onnx" -o "$work/int8.onnx" --calibration-inputs 4 --integer-outputs |
  tee "$work/quantize.txt"
grep -q "2 conv(s) with int8 per-channel weights, 4 activation(s)" "$work/quantize.txt" ||
  fail "not 2 quantized convs and 4 quantized activations"
# MLAS's u8s8 QLinearConv saturates int16 pair sums on x86 CPUs without VNNI (ORT 5 in
# docs/upstream-bugs.md, its own ctest upstream/ort-mlas-qlinearconv-u8s8-saturation): there
# the full-range model shows that bug, not a fusion's, so it is checked where MLAS is exact. The
# 7-bit weights of --reduce-range (ONNX Runtime's advice for such CPUs) are exact everywhere.
"$bin" quantize "$work/float.onnx" -o "$work/int8-7bit.onnx" --calibration-inputs 4 \
  --integer-outputs --reduce-range | tee "$work/quantize-7bit.txt"
grep -q "2 conv(s) with int8 per-channel weights (7-bit)" "$work/quantize-7bit.txt" ||
  fail "--reduce-range not reported"
models=int8-7bit
if [ "$(uname -m)" != x86_64 ] || grep -qE '^flags.* (avx512_vnni|avx_vnni)( |$)' /proc/cpuinfo; then
  models="int8 int8-7bit"
else
  echo "quantize_ort.sh: no VNNI: the full-range model is left to the MLAS saturation's test"
fi
for m in $models; do
  "$bin" check "$work/$m.onnx" --target onnxruntime:disabled --target onnxruntime:all \
    --samples 2 --no-minimize -o "$work/out-$m" --save-outputs "$work/outputs-$m" |
    tee "$work/check-$m.txt"
  grep -q "^check: PASS" "$work/check-$m.txt" || fail "the quantized model $m does not pass"
  grep -q "unoptimized PASS, optimized PASS" "$work/check-$m.txt" ||
    fail "$m not judged PASS on the grid (MISTRUSTED or worse)"
  # A model calibrated for other inputs answers one constant (every input inside one step of
  # the zero point): that would pass and test nothing.
  distinct=$(/usr/bin/python3 -c '
import base64, json, struct, sys
t = next(iter(json.load(open(sys.argv[1])).values()))
b = base64.b64decode(t["b64"])
print(len(set(struct.unpack("<%df" % (len(b) // 4), b))))' "$work/outputs-$m/reference-seed1.json")
  [ "$distinct" -ge 5 ] || fail "$m: the quantized output holds only $distinct distinct integers"
done
status=0
"$bin" quantize "$work/int8.onnx" -o "$work/again.onnx" 2>"$work/again.txt" || status=$?
[ "$status" -eq 2 ] || fail "a quantized model was not refused with exit 2 (got $status)"
grep -q "already quantized" "$work/again.txt" || fail "the refusal does not say why"
echo "quantize_ort.sh: ok"
