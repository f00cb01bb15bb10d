#!/usr/bin/env bash
# import_model.sh FUSEFUZZ MODEL WORKDIR: exports the torchvision MODEL with make_model.py
# (random weights, non-identity BN statistics, opset 17), imports it with `fusefuzz import`, and
# judges PyTorch's output against fusefuzz's reference run of the imported graph with the bound
# oracle (`fusefuzz compare`, exit 1 on mismatch). The .onnx is generated here, never committed.
set -euo pipefail
bin=$1 model=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
/usr/bin/python3 "$here/make_model.py" "$model" "$work"
"$bin" import "$work/model.onnx" -o "$work/graph.json"
"$bin" compare "$work/graph.json" --inputs "$work/input.json" --outputs "$work/expected.json"
