#!/usr/bin/env bash
# ctest fuzz.fusion.write_repro: a crash input of fusion_fuzzer (with an injected fault) becomes
# a reproducer that `fusefuzz replay` confirms, and that passes once the fault is dropped.
#   repro_roundtrip_test.sh FUSION_FUZZER_REPLAY FUSEFUZZ
set -euo pipefail
tool=$1
fusefuzz=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export FUSEFUZZ_INJECT=through-activation
"$tool" --dump "$tmp" --random 200 --seed 7 --max-len 2048 2>/dev/null
for f in "$tmp"/*; do
  if "$tool" --write-repro "$tmp/finding.repro.json" "$f" >/dev/null 2>&1; then
    grep -q '"input_sha1": "'"$(basename "$f")"'"' "$tmp/finding.repro.json" ||
      { echo "provenance does not name the input's SHA-1" >&2; exit 1; }
    unset FUSEFUZZ_INJECT
    "$fusefuzz" replay "$tmp/finding.repro.json"
    "$fusefuzz" replay --without-faults --expect pass "$tmp/finding.repro.json"
    exit 0
  fi
done
echo "no input with a finding among 200" >&2
exit 1
