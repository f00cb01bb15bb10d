#!/usr/bin/env bash
# import_model.sh FUSEFUZZ MODEL WORKDIR: exports the torchvision MODEL with make_model.py
# (random weights, non-identity BN statistics, opset 17), imports it with `fusefuzz import`, and
# judges PyTorch's output against fusefuzz's reference run of the imported graph.
# The bound oracle must find no MISMATCH. On 18+ random layers the magnitude dwarfs every output
# (cancellation), so it answers MISTRUSTED ("the data cannot tell"), which is accepted here; the
# closeness itself is then judged by the sigma oracle (the statistical error scale, built for
# deep models: docs/oracle.md), which must PASS with every element informative.
# The .onnx is generated here, never committed.
set -euo pipefail
bin=$1 model=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
/usr/bin/python3 "$here/make_model.py" "$model" "$work"
"$bin" import "$work/model.onnx" -o "$work/graph.json"
judge() {
  "$bin" compare "$work/graph.json" --inputs "$work/input.json" --outputs "$work/expected.json" "$@"
}
verdict=$(judge || true)
echo "$verdict"
case "$verdict" in
  *": PASS "* | *": MISTRUSTED "*) ;;
  *) echo "import_model.sh: $model: the bound oracle did not pass" >&2; exit 1 ;;
esac
verdict=$(judge --oracle sigma || true)
echo "$verdict"
case "$verdict" in
  *": PASS "*) ;;
  *) echo "import_model.sh: $model: the sigma oracle did not pass" >&2; exit 1 ;;
esac
