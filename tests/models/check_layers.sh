#!/usr/bin/env bash
# check_layers.sh FUSEFUZZ MODEL TARGET WORKDIR [FLAVOR]: `fusefuzz check --layers` of a
# torchvision MODEL (make_model.py, random weights) quantized by `fusefuzz quantize --flavor
# FLAVOR` (default onnxruntime; pytorch for the pytorch: modes), on an int8 TARGET: every
# quantization boundary judged teacher-forced must have >= 95% of its elements informative, none
# may depart, and exposing the boundaries must leave the reported rewrites the same
# (docs/check.md, "Layer by layer"). Minutes per model: ctest label long.
set -euo pipefail
bin=$1 model=$2 target=$3 work=$4 flavor=${5:-onnxruntime}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
/usr/bin/python3 "$here/make_model.py" "$model" "$work"
"$bin" quantize "$work/model.onnx" -o "$work/int8.onnx" --flavor "$flavor"
"$bin" check "$work/int8.onnx" --target "$target" --layers --no-minimize -q -o "$work/out" \
  --json "$work/check.json" | tee "$work/check.txt"
/usr/bin/python3 - "$work/check.json" <<'PY'
import json, sys
layers = json.load(open(sys.argv[1]))["targets"][0]["samples"][0]["layers"]
share = layers["min_informative_share"]
print("check_layers.sh: least informative share %.4f, first departing %s, same fusion %s"
      % (share, layers["first_departing"], layers["same_fusion"]))
if share < 0.95 or layers["first_departing"] is not None or not layers["same_fusion"]:
    sys.exit("check_layers.sh: FAILED")
PY
echo "check_layers.sh: ok"
