#!/usr/bin/env bash
# check_quant_model.sh FUSEFUZZ WORKDIR [SAMPLES]: the founding report on PyTorch's real
# quantization flows (issue 26). A torchvision ResNet-18 (random weights, non-identity BN
# statistics), quantized by make_quant_model.py (per-channel int8 weights, uint8 min/max
# activations, the residual blocks' outputs answered too), through
#   ptq_eager           fuse_modules with lists by declaration order: top-1 collapses, check
#                       files a fusion finding blamed on the declaration-order group of the first
#                       residual block and shrinks the model to that block (<= 8 nodes) within
#                       the default minimize budget, starting from the first departing layer's
#                       block (docs/check.md, "Shrinking from the departing layer");
#   ptq_eager_dataflow  the correct lists: no finding (PASS, or NOT JUDGED where the carried
#                       spread leaves no output element informative: docs/check.md);
#   ptq_fx, ptq_fx_qnnpack  prepare_fx/convert_fx on onednn and qnnpack: the same.
# Takes minutes (a whole int8 ResNet per run, the blame and the minimization): not in ctest.
# The graph is generated here, never committed.
set -euo pipefail
bin=$1 work=$2 samples=${3:-2}
here=$(cd "$(dirname "$0")" && pwd)
torch="exec:/usr/bin/python3 $here/../../targets/pytorch/fusefuzz_torch.py --mode"
fail() { echo "check_quant_model.sh: $*" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
/usr/bin/python3 "$here/make_quant_model.py" "$work/resnet18-int8.json" --block-outputs

run() {  # run MODE: check on that mode, output in $work/MODE.txt, exit status in $status
  local mode=$1
  local start=$SECONDS
  status=0
  # The default minimize budget (120 s): the minimizer starts from the departing layer's block.
  "$bin" check "$work/resnet18-int8.json" --samples "$samples" --timeout 900 \
    --target "$torch $mode" -o "$work/$mode" >"$work/$mode.txt" 2>&1 ||
    status=$?
  cat "$work/$mode.txt"
  echo "check_quant_model.sh: $mode: exit $status, $((SECONDS - start)) s"
}

for mode in ptq_eager_dataflow ptq_fx ptq_fx_qnnpack; do
  run "$mode"
  # The fc output's admitted spread exceeds 1 step on every logit after 20 int8 layers: nothing
  # there is informative, so the honest verdict is NOT JUDGED (exit 3), never a finding.
  [ "$status" -eq 0 ] || [ "$status" -eq 3 ] || fail "$mode exited $status, not 0 or 3"
  grep -Eq "^check: (PASS|NOT JUDGED)" "$work/$mode.txt" || fail "$mode: neither PASS nor NOT JUDGED"
  grep -Eq "^classifier agreement over $samples samples: top-1 ([0-9]+)/\1," "$work/$mode.txt" ||
    fail "$mode: top-1 disagrees"
done

run ptq_eager
[ "$status" -eq 1 ] || fail "ptq_eager exited $status, not 1"
grep -q "blamed on 'ptq_eager:Conv2d-BatchNorm2d-ReLU'" "$work/ptq_eager.txt" ||
  fail "ptq_eager: not blamed on the declaration-order group"
repro=$(ls "$work"/ptq_eager/findings/*/repro.json)
/usr/bin/python3 - "$repro" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
ops = [n["op"] for n in r["graph"]["nodes"]]
print("check_quant_model.sh: culprit: %d nodes: %s" % (len(ops), " ".join(ops)))
print("check_quant_model.sh: blamed rewrite: %s" % json.dumps(r.get("blame", {}).get("nodes")))
if "Add" not in ops or "Relu" not in ops or ops.count("Conv") > 3 or len(ops) > 8:
    sys.exit("check_quant_model.sh: the culprit is not a residual block of <= 8 nodes")
EOF
echo "check_quant_model.sh: ok"
