#!/usr/bin/env bash
# Opset-19 export (docs/onnx.md, "Opset 17, and 19 where needed"): Debian's libonnx 1.12 checker
# knows opsets <= 17, so the models that need opset 19 (Pad mode "wrap", dilated AvgPool) are
# validated here instead: exported, run by ONNX Runtime at optimization level "disabled" and
# judged against fusefuzz's reference with the bound oracle. Also checks that the export chose
# opset 19 for them and kept opset 17 for a graph that does not need it.
#   usage: onnx_opset19.sh FUSEFUZZ SOURCE_DIR WORK_DIR
# Exit 77 (ctest: skipped) when ONNX Runtime is not installed (ci/setup installs it).
set -euo pipefail
fusefuzz=$1 src=$2 work=$3
ort_dir=$src/targets/onnxruntime
if ! command -v node >/dev/null || [ ! -d "$ort_dir/node_modules/onnxruntime-node" ]; then
  echo "onnx_opset19: ONNX Runtime is not installed (run ci/setup); skipped"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work"
cases=(opset19-pad-wrap opset19-avgpool-dilated)
dirs=()
for c in "${cases[@]}"; do
  out=$("$fusefuzz" export "$src/tests/data/$c.json" --seed 3 --onnx "$work/$c/model.onnx" \
          --inputs-pb "$work/$c")
  echo "$out"
  case $out in
    *"ONNX opset 19"*"libonnx checker skipped"*) ;;
    *) echo "FAIL: $c: expected an opset-19 export with the checker skipped"; exit 1 ;;
  esac
  dirs+=("$work/$c")
done
# A graph without wrap pads or dilated average pools stays at opset 17, checked by libonnx.
plain=$("$fusefuzz" export "$src/corpus/seeds/op-pad.json" --onnx "$work/plain.onnx")
case $plain in
  *"ONNX opset 17"*"libonnx checker and shape inference: ok"*) ;;
  *) echo "FAIL: op-pad.json: expected opset 17, checked: $plain"; exit 1 ;;
esac
(cd "$ort_dir" && node run-model.js --level disabled "${dirs[@]}") >"$work/ort.log"
for c in "${cases[@]}"; do
  set_dir=$work/$c/test_data_set_0
  "$fusefuzz" compare "$src/tests/data/$c.json" --inputs-pb "$set_dir" \
    --outputs "$set_dir/ort_disabled"
done
echo "onnx_opset19: ${#cases[@]} opset-19 models agree with the reference in ONNX Runtime"
