#!/usr/bin/env bash
# `fusefuzz export` and `fusefuzz compare` without ONNX Runtime: a graph and a reproducer export
# to the backend-test layout; the reference outputs written there pass `compare`, a changed
# output fails it (exit 1), and bad input is exit 2.  usage: onnx_export_cli.sh FUSEFUZZ SRC WORK
set -euo pipefail
ff=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

"$ff" export "$src/corpus/seeds/op-fusedconv.json" --onnx "$work/g/model.onnx" --inputs-pb "$work/g" \
  | grep -q "ONNX opset 17, 2 input(s), 1 output(s), 1 decomposition(s)" || fail "export summary"
for f in model.onnx test_data_set_0/input_0.pb test_data_set_0/input_1.pb test_data_set_0/output_0.pb; do
  [ -s "$work/g/$f" ] || fail "missing $f"
done
# The written reference outputs pass the oracle, read back from .pb
"$ff" compare "$src/corpus/seeds/op-fusedconv.json" --inputs-pb "$work/g/test_data_set_0" \
  --outputs "$work/g/test_data_set_0" | grep -q ": PASS" || fail "compare of reference outputs"
# Same bytes every time
"$ff" export "$src/corpus/seeds/op-fusedconv.json" --onnx "$work/again.onnx" >/dev/null
cmp -s "$work/g/model.onnx" "$work/again.onnx" || fail "export is not deterministic"

# A reproducer brings its graph and inputs
repro=$(ls "$src"/corpus/faults/*.repro.json | head -1)
"$ff" export "$repro" --onnx "$work/r/model.onnx" --inputs-pb "$work/r" >/dev/null || fail "repro export"
"$ff" compare "$repro" --outputs "$work/r/test_data_set_0" >/dev/null || fail "repro compare"

# A wrong output is a mismatch (exit 1): the run's outputs of another seed's inputs
"$ff" run "$src/corpus/seeds/op-fusedconv.json" --seed 2 -o "$work/other.json" >/dev/null
set +e
"$ff" compare "$src/corpus/seeds/op-fusedconv.json" --inputs-pb "$work/g/test_data_set_0" \
  --outputs "$work/other.json" >/dev/null
[ $? -eq 1 ] || fail "a wrong output must exit 1"
touch "$work/a-file"
"$ff" export "$src/corpus/seeds/op-conv.json" --onnx "$work/a-file/y.onnx" 2>/dev/null
[ $? -eq 2 ] || fail "unwritable output must exit 2"
mkdir -p "$work/empty"
"$ff" compare "$src/corpus/seeds/op-conv.json" --outputs "$work/empty" 2>/dev/null
[ $? -eq 2 ] || fail "a folder without output_0.pb must exit 2"
# import: back to a graph that runs; a model fusefuzz exported comes back as the same graph,
# its GroupNorm (decomposed into Reshape, InstanceNorm, Reshape, Mul, Add) included
set -e
"$ff" import "$work/g/model.onnx" -o "$work/imported.json" >/dev/null
"$ff" run "$work/imported.json" >/dev/null
"$ff" export "$src/corpus/seeds/op-norms.json" --onnx "$work/norms.onnx" >/dev/null
msg=$("$ff" import "$work/norms.onnx" -o "$work/norms.json")
case "$msg" in *"1 node(s) that fusefuzz's export decomposed are back as one node"*) ;;
  *) fail "import message: $msg" ;; esac
grep -q '"op": "GroupNorm"' "$work/norms.json" || fail "GroupNorm did not come back"
"$ff" export "$work/norms.json" --onnx "$work/norms-again.onnx" >/dev/null
"$ff" import "$work/norms-again.onnx" -o "$work/norms-again.json" >/dev/null
cmp -s "$work/norms.json" "$work/norms-again.json" || fail "export -> import is not a fixpoint"
# A file that is not a model is exit 2 naming it
set +e
msg=$("$ff" import "$src/corpus/seeds/op-norms.json" -o "$work/x.json" 2>&1)
[ $? -eq 2 ] || fail "import of a non-model must exit 2"
case "$msg" in *"op-norms.json"*) ;; *) fail "import error message: $msg" ;; esac
echo "onnx_export_cli: ok"
