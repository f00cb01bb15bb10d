#!/usr/bin/env bash
# check_qat_model.sh FUSEFUZZ WORKDIR: PyTorch's own QDQ export of a QAT-prepared CNN
# (make_qat_model.py, per-tensor and per-channel int8 weights) imports, and `check --layers`
# passes it on the embedded engine and, when installed, ONNX Runtime, with every layer judged.
set -euo pipefail
bin=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
targets=(embedded)
[ -d "$here/../../targets/onnxruntime/node_modules/onnxruntime-node" ] && targets+=(onnxruntime:all)
for v in per-tensor per-channel; do
  /usr/bin/python3 "$here/make_qat_model.py" "$work/qat-$v.onnx" "$v"
  for t in "${targets[@]}"; do
    "$bin" check "$work/qat-$v.onnx" --target "$t" --layers --no-minimize -q -o "$work/out" \
      >"$work/$v-$t.txt"
    cat "$work/$v-$t.txt"
    grep -q "^check: PASS" "$work/$v-$t.txt" || { echo "check_qat_model.sh: $v on $t fails" >&2; exit 1; }
    grep -q "; 0 departing" "$work/$v-$t.txt" || { echo "check_qat_model.sh: $v on $t: a layer departs" >&2; exit 1; }
  done
done
echo "check_qat_model.sh: ok"
