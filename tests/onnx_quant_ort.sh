#!/usr/bin/env bash
# Quantized graphs through ONNX Runtime (docs/onnx.md, "Quantization"): the hand-built graphs of
# tests/data/quant/ and N generated `--quant` graphs (when the generator has --quant) are
# exported as QDQ models (`fusefuzz export`, checked by libonnx), run by ONNX Runtime at levels
# "disabled" (the float Conv/Add between DQ and Q: ONNX's rounding semantics) and "all" (ORT's
# QDQ fusions: QLinearConv and MLAS's integer kernels), and each run is judged against the
# reference with fusefuzz's oracle (`fusefuzz compare`; integer outputs by the grid oracle).
#   usage: onnx_quant_ort.sh FUSEFUZZ SOURCE_DIR WORK_DIR N_GENERATED [GEN_SEED]
# Exit 77 (ctest: skipped) when ONNX Runtime is not installed (ci/setup installs it), or when the
# reference cannot run quantized graphs yet.
set -euo pipefail
fusefuzz=$1 src=$2 work=$3 n=$4 seed=${5:-1}
ort_dir=$src/targets/onnxruntime
if ! command -v node >/dev/null || ! (cd "$ort_dir" && node -e "require('onnxruntime-node')") \
     2>/dev/null; then
  echo "onnx_quant_ort: ONNX Runtime is not installed (run ci/setup); skipped"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work"
cases=()
for g in "$src"/tests/data/quant/*.json; do
  name=hand-$(basename "$g" .json)
  mkdir -p "$work/$name"
  cp "$g" "$work/$name/graph.json"
  cases+=("$name")
done
if "$fusefuzz" gen --quant --seed "$seed" --case 0 >/dev/null 2>&1; then
  for ((i = 0; i < n; i++)); do
    name=gen-$seed-$i
    mkdir -p "$work/$name"
    "$fusefuzz" gen --quant --seed "$seed" --case "$i" --inputs "$work/$name/inputs.json" \
      >"$work/$name/graph.json"
    cases+=("$name")
  done
else
  echo "onnx_quant_ort: the generator has no --quant yet: hand-built graphs only"
fi
for c in "${cases[@]}"; do
  inputs=()
  [ -f "$work/$c/inputs.json" ] && inputs=(--inputs "$work/$c/inputs.json")
  if ! err=$("$fusefuzz" export "$work/$c/graph.json" "${inputs[@]}" --onnx \
               "$work/$c/model.onnx" --inputs-pb "$work/$c" 2>&1 >/dev/null); then
    if grep -q "not supported by the reference" <<<"$err"; then
      echo "onnx_quant_ort: the reference cannot run quantized graphs yet ($err); skipped"
      exit 77
    fi
    echo "EXPORT FAILED: $c: $err"
    exit 1
  fi
done
dirs=()
for c in "${cases[@]}"; do dirs+=("$work/$c"); done
# Level "disabled" runs ONNX's own semantics (float ops between DQ and Q): any disagreement is
# fusefuzz's (export, reference or oracle) and fails the test. Level "all" runs ORT's QDQ
# fusions, whose real bugs the campaign files (`fusefuzz fuzz --quant --target onnxruntime:all`,
# docs/upstream-bugs.md): here they are counted by class, not failed on.
failed=0 passed=0 mistrusted=0 upstream=0 upstream_errors=0
for level in disabled all; do
  (cd "$ort_dir" && node run-model.js --level "$level" "${dirs[@]}") >"$work/ort-$level.log" 2>&1 || true
  for c in "${cases[@]}"; do
    set_dir=$work/$c/test_data_set_0
    if [ ! -d "$set_dir/ort_$level" ]; then
      # ORT refused or failed the model at this level (its message is in ort-LEVEL.log).
      if [ "$level" = disabled ]; then
        failed=$((failed + 1))
        echo "ORT ERROR (disabled): $c: $(grep -F "$work/$c: " "$work/ort-$level.log" | head -1)"
      else
        upstream_errors=$((upstream_errors + 1))
        echo "ORT ERROR (all, upstream class): $c: $(grep -F "$work/$c: " "$work/ort-$level.log" | head -1 | cut -c1-300)"
      fi
      continue
    fi
    if out=$("$fusefuzz" compare "$work/$c/graph.json" --inputs-pb "$set_dir" \
               --outputs "$set_dir/ort_$level" 2>&1); then
      passed=$((passed + 1))
    elif grep -q "MISTRUSTED" <<<"$out"; then
      mistrusted=$((mistrusted + 1))  # too few informative elements: not a verdict
    elif [ "$level" = disabled ]; then
      failed=$((failed + 1))
      echo "MISMATCH (disabled): $c: ${out:0:800}"
    else
      upstream=$((upstream + 1))
      echo "MISMATCH (all, upstream class): $c: ${out:0:300}"
    fi
  done
done
echo "onnx_quant_ort: ${#cases[@]} quantized graphs through ONNX Runtime at levels disabled and" \
  "all: $passed runs pass, $mistrusted MISTRUSTED, $failed fail at disabled;" \
  "at all (ORT's QDQ fusions): $upstream mismatches, $upstream_errors errors"
[ "$failed" -eq 0 ]
