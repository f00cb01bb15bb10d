#!/usr/bin/env bash
# Turns fusion_fuzzer crash inputs (or an engine target's: its <target>_replay as the tool, fuzz/
# engine_fuzzer.h) into one finding folder per bug, keyed by the campaign's dedup
# signature (target, kind, blamed rule, op pattern of the blamed nodes), so that a libFuzzer run
# with a thousand crash files of one bug yields one reproducer, not a thousand.
#   triage_crashes.sh FUSION_FUZZER_REPLAY FUSEFUZZ FINDINGS_DIR CRASH...
# Writes, per new signature, FINDINGS_DIR/<signature>/:
#   original.repro.json   the crash input's case as generated (blamed)
#   repro.json report.md before/after.dot(.svg)   minimized (fusefuzz minimize --folder)
#   inputs.txt            every crash input with this signature (the first one is copied beside)
# Re-running on the same folder adds only new inputs. Prints one line per input and a total;
# exit 0, or 2 on bad arguments. Faults come from $FUSEFUZZ_INJECT, as for the fuzzer.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 FUSION_FUZZER_REPLAY FUSEFUZZ FINDINGS_DIR CRASH..." >&2
  exit 2
fi
tool=$1
fusefuzz=$2
findings=$3
shift 3
for x in "$tool" "$fusefuzz"; do
  [ -x "$x" ] || { echo "$0: $x: not an executable" >&2; exit 2; }
done
budget=${FUSEFUZZ_MINIMIZE_BUDGET:-30}
mkdir -p "$findings"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

new=0 dup=0 none=0
for c in "$@"; do
  [ -f "$c" ] || continue
  name=$(basename "$c")
  sig=$("$tool" --write-repro "$tmp/r.json" "$c" 2>/dev/null | sed -n 's/^signature //p') || true
  if [ -z "$sig" ]; then
    echo "  $name: no finding when replayed (flaky, or not a finding of the fusion check)" >&2
    none=$((none + 1))
    continue
  fi
  dir=$findings/$sig
  if [ -f "$dir/inputs.txt" ]; then
    grep -qxF "$name" "$dir/inputs.txt" || echo "$name" >>"$dir/inputs.txt"
    echo "  $name: duplicate of $sig" >&2
    dup=$((dup + 1))
    continue
  fi
  mkdir -p "$dir"
  cp "$c" "$dir/$name"
  # Written again at its final path, so that its replay command names the right file.
  "$tool" --write-repro "$dir/original.repro.json" "$c" >/dev/null 2>&1
  if ! "$fusefuzz" minimize "$dir/original.repro.json" --folder "$dir" --budget "$budget" \
      >/dev/null 2>"$tmp/min.err"; then
    echo "  $name: not minimized ($(tail -n 1 "$tmp/min.err")); keeping the original" >&2
    cp "$dir/original.repro.json" "$dir/repro.json"
  fi
  if "$fusefuzz" replay "$dir/repro.json" >/dev/null 2>&1; then
    echo "  $name: new finding $sig (replay confirms)" >&2
  else
    echo "  $name: new finding $sig, but replay does NOT confirm it" >&2
  fi
  echo "$name" >"$dir/inputs.txt"
  new=$((new + 1))
done
echo "triage: $new new findings, $dup duplicate inputs, $none inputs without a finding -> $findings" >&2
