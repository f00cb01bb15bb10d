#!/usr/bin/env bash
# The quantization modes on the hand-built graphs of quant_graphs/, for ctest:
#   quant_check_test.sh FUSEFUZZ MODE
# Each graph is checked (`fusefuzz check`, 2 input samples, no minimization); it must PASS,
# or give exactly the finding quant_graphs/expected.txt lists for the mode and graph (or be
# answered unsupported where it says so). "KIND|pass" is a known false alarm of fusefuzz that a
# fix in progress removes: that finding or a PASS.
set -u
bin=$1 mode=$2
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failed=0 n=0
for g in "$here"/quant_graphs/*.json; do
  name=$(basename "$g" .json)
  n=$((n + 1))
  want=$(awk -v m="$mode" -v g="$name" '$1 == m && $2 == g { print $3 }' \
           "$here/quant_graphs/expected.txt")
  # --timeout 120: importing torch takes tens of seconds on a loaded machine.
  "$bin" check "$g" --target "pytorch:$mode" --samples 2 --no-minimize -q --timeout 120 \
    -o "$out/$name" >"$out/$name.log" 2>&1
  status=$?
  found=$(ls "$out/$name/findings" 2>/dev/null | head -1)
  passed=0
  [ "$status" -eq 0 ] && ! grep -q "NOT CHECKED" "$out/$name.log" && passed=1
  if [ -z "$want" ] && [ "$passed" -eq 1 ]; then
    echo "PASS     $mode $name"
  elif [[ "$want" == *"|pass" ]] && [ "$passed" -eq 1 ]; then
    echo "PASS     $mode $name (listed as a known false alarm: fixed)"
  elif [[ "$want" == *"|pass" ]] && [ "$status" -eq 1 ] && [[ "$found" == "${want%|pass}"-* ]]; then
    echo "EXPECTED $mode $name: $found (known false alarm)"
  elif [ "$want" = unsupported ] && [ "$status" -eq 2 ] &&
       grep -q "NOT CHECKED: UNSUPPORTED" "$out/$name.log"; then
    echo "EXPECTED $mode $name: unsupported"
  elif [ -n "$want" ] && [ "$status" -eq 1 ] && [[ "$found" == "$want"-* ]]; then
    echo "EXPECTED $mode $name: $found"
  else
    echo "FAIL     $mode $name: exit $status, finding '${found:-none}', expected '${want:-PASS}'"
    tail -5 "$out/$name.log"
    failed=$((failed + 1))
  fi
done
echo "quant_check_test: mode $mode: $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
