#!/usr/bin/env bash
# golden_gen.sh FUSEFUZZ SEED GOLDEN_DIR: the generator's output must match the golden files
# byte for byte (written by the g++ build; this also runs in the clang build).
set -euo pipefail
bin=$1 seed=$2 dir=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" gen --seed "$seed" --inputs "$tmp/inputs.json" >"$tmp/graph.json"
cmp "$tmp/graph.json" "$dir/gen-seed-$seed.json"
cmp "$tmp/inputs.json" "$dir/gen-seed-$seed.inputs.json"
