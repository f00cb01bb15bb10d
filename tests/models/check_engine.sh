#!/usr/bin/env bash
# check_engine.sh FUSEFUZZ MODEL TARGET WORKDIR: `fusefuzz check` of a torchvision MODEL (random
# weights, non-identity BN statistics, 224x224) on an engine, judged by check's default oracle
# (sigma, docs/oracle.md). A healthy engine must PASS every sample with top-1 agreement: before
# the sigma oracle, allclose reported ONNX Runtime's plain kernels on ResNet-18 as a kernel
# finding (docs/check.md). The .onnx is generated here, never committed.
set -euo pipefail
bin=$1 model=$2 target=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
/usr/bin/python3 "$here/make_model.py" "$model" "$work"
"$bin" check "$work/model.onnx" --target "$target" --samples 2 --no-minimize -o "$work/out" |
  tee "$work/check.txt"
fail() { echo "check_engine.sh: $model on $target: $*" >&2; exit 1; }
grep -q "^check: PASS" "$work/check.txt" || fail "does not pass"
grep -q "top-1 2/2, top-5 2/2" "$work/check.txt" || fail "top-1/top-5 disagree"
echo "check_engine.sh: ok"
