#!/usr/bin/env bash
# ctest fuzz.fusion.triage: crash inputs of two injected faults, many inputs per bug, become one
# finding folder per signature (fuzz/triage_crashes.sh): as many folders as distinct signatures,
# fewer than inputs, each minimized reproducer confirmed by replay, every input accounted for,
# and a second run over the same inputs adds nothing.
#   triage_test.sh FUSION_FUZZER_REPLAY FUSEFUZZ
set -euo pipefail
tool=$1
fusefuzz=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export FUSEFUZZ_INJECT=through-activation,bn-bn-half-fold FUSEFUZZ_MINIMIZE_BUDGET=20
mkdir -p "$tmp/all" "$tmp/crashes"
"$tool" --dump "$tmp/all" --random 300 --seed 11 --max-len 2048 2>/dev/null
# Keep the inputs with a finding, as libFuzzer's crash-<sha1> files, and their signatures.
for f in "$tmp/all"/*; do
  sig=$("$tool" --write-repro "$tmp/r.json" "$f" 2>/dev/null | sed -n 's/^signature //p') || true
  [ -n "$sig" ] || continue
  cp "$f" "$tmp/crashes/crash-$(basename "$f")"
  echo "$sig" >>"$tmp/sigs"
done
[ -s "$tmp/sigs" ] || { echo "no input with a finding among 300" >&2; exit 1; }
inputs=$(wc -l <"$tmp/sigs")
distinct=$(sort -u "$tmp/sigs" | wc -l)
echo "$inputs crash inputs, $distinct distinct signatures" >&2
[ "$inputs" -gt "$distinct" ] || { echo "need more inputs than bugs to test dedup" >&2; exit 1; }

"$here/triage_crashes.sh" "$tool" "$fusefuzz" "$tmp/findings" "$tmp/crashes"/crash-*
folders=$(find "$tmp/findings" -mindepth 1 -maxdepth 1 -type d | wc -l)
[ "$folders" -eq "$distinct" ] ||
  { echo "expected $distinct finding folders, got $folders" >&2; exit 1; }
for s in $(sort -u "$tmp/sigs"); do
  d=$tmp/findings/$s
  for f in repro.json original.repro.json report.md before.dot inputs.txt; do
    [ -s "$d/$f" ] || { echo "$d/$f missing" >&2; exit 1; }
  done
  [ "$(wc -l <"$d/inputs.txt")" -eq "$(grep -cxF "$s" "$tmp/sigs")" ] ||
    { echo "$d/inputs.txt does not list every input of $s" >&2; exit 1; }
done
unset FUSEFUZZ_INJECT
"$fusefuzz" replay "$tmp/findings"
"$fusefuzz" replay --without-faults --expect pass "$tmp/findings"
# Idempotent: the same inputs again add no folder and no input line.
before=$(cat "$tmp/findings"/*/inputs.txt | wc -l)
FUSEFUZZ_INJECT=through-activation,bn-bn-half-fold \
  "$here/triage_crashes.sh" "$tool" "$fusefuzz" "$tmp/findings" "$tmp/crashes"/crash-* 2>/dev/null
[ "$(cat "$tmp/findings"/*/inputs.txt | wc -l)" -eq "$before" ] ||
  { echo "a second run changed inputs.txt" >&2; exit 1; }
[ "$(find "$tmp/findings" -mindepth 1 -maxdepth 1 -type d | wc -l)" -eq "$distinct" ]
