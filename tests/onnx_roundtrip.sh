#!/usr/bin/env bash
# ONNX round trip through ONNX Runtime (docs/onnx.md): every seed graph and N generated graphs
# are exported (`fusefuzz export`, checked by libonnx), run by ONNX Runtime at optimization level
# "disabled" (targets/onnxruntime/run-model.js) and judged with fusefuzz's bound oracle
# (`fusefuzz compare`). Expected: no mismatch, except the known ORT kernel defects below.
#   usage: onnx_roundtrip.sh FUSEFUZZ SOURCE_DIR WORK_DIR N_GENERATED [GEN_SEED]
# Exit 77 (ctest: skipped) when ONNX Runtime is not installed (ci/setup installs it).
set -euo pipefail
fusefuzz=$1 src=$2 work=$3 n=$4 seed=${5:-1}
ort_dir=$src/targets/onnxruntime
if ! command -v node >/dev/null || [ ! -d "$ort_dir/node_modules/onnxruntime-node" ]; then
  echo "onnx_roundtrip: ONNX Runtime is not installed (run ci/setup); skipped"
  exit 77
fi
# Known kernel defects of ONNX Runtime 1.30 (CPU), by fusefuzz op: a mismatch in a graph that
# contains one of these ops is counted, not failed.
#   Elu: ORT computes alpha*(exp(x)-1) in float32, not expm1: near 0 the cancellation costs up
#        to u*alpha absolute, far more than u*|y| (docs/onnx.md, "Known ORT defects").
known_defect_ops='"op": "Elu"'

rm -rf "$work"
mkdir -p "$work"
cases=()
for g in "$src"/corpus/seeds/*.json; do
  name=seed-$(basename "$g" .json)
  mkdir -p "$work/$name"
  cp "$g" "$work/$name/graph.json"
  cases+=("$name")
done
for ((i = 0; i < n; i++)); do
  name=gen-$seed-$i
  mkdir -p "$work/$name"
  "$fusefuzz" gen --seed "$seed" --case "$i" --inputs "$work/$name/inputs.json" \
    >"$work/$name/graph.json"
  cases+=("$name")
done
for c in "${cases[@]}"; do
  inputs=()
  [ -f "$work/$c/inputs.json" ] && inputs=(--inputs "$work/$c/inputs.json")
  "$fusefuzz" export "$work/$c/graph.json" "${inputs[@]}" --onnx "$work/$c/model.onnx" \
    --inputs-pb "$work/$c" >/dev/null
done
dirs=()
for c in "${cases[@]}"; do dirs+=("$work/$c"); done
(cd "$ort_dir" && node run-model.js --level disabled "${dirs[@]}") >"$work/ort.log"

passed=0 failed=0 known=0 not_judged=0
for c in "${cases[@]}"; do
  set_dir=$work/$c/test_data_set_0
  if out=$("$fusefuzz" compare "$work/$c/graph.json" --inputs-pb "$set_dir" \
             --outputs "$set_dir/ort_disabled" 2>&1); then
    passed=$((passed + 1))
  elif [[ $out == *": MISTRUSTED ("* ]]; then
    # The data cannot tell (e.g. a Relu6 that clamps every element): neither a pass nor a
    # mismatch. Counted apart, and bounded below, so the test cannot pass on nothing judged.
    not_judged=$((not_judged + 1))
    echo "not judged: $c: ${out:0:300}"
  elif grep -q "$known_defect_ops" "$work/$c/graph.json"; then
    known=$((known + 1))
    echo "known ORT defect (Elu): $c: ${out:0:300}"
  else
    failed=$((failed + 1))
    echo "MISMATCH: $c: ${out:0:600}"
  fi
done
echo "onnx_roundtrip: ${#cases[@]} graphs (seeds + $n generated with seed $seed) through ONNX" \
  "Runtime at level disabled: $passed pass, $known known ORT defects, $not_judged not judged," \
  "$failed unexpected"
if ((not_judged * 20 > ${#cases[@]})); then
  echo "onnx_roundtrip: more than 5% of the graphs could not be judged" >&2
  exit 1
fi
echo "$((passed + known)) passed, $failed failed"
[ "$failed" -eq 0 ]
