#!/usr/bin/env bash
# The planted XNNPACK adapter fault (FUSEFUZZ_PLANT_XNNPACK_FAULT, fuzz/xnnpack_fuzzer.cc) is
# found by a short run of the in-process target, as a code-change run in CI would find it:
#   engine_plant_test.sh FUZZER REPLAY SECONDS CORPUS_DIR
# With the libFuzzer binary (fuzz preset, FUZZER executable): `FUZZER -max_total_time=SECONDS`
# on a copy of the seed corpus must abort with the finding's message, blamed on the planted
# rule, and leave its reproducer JSON. Without it (release preset: FUZZER is "-"): the
# standalone runner's --find over the corpus and mutants of it must report the finding.
# Exit 0 when found, 1 when not.
set -euo pipefail
fuzzer=$1 replay=$2 seconds=$3 corpus=$4
export FUSEFUZZ_PLANT_XNNPACK_FAULT="fuse Clamp Node into upstream Node"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$fuzzer" != "-" ] && [ -x "$fuzzer" ]; then
  cp -r "$corpus" "$tmp/corpus"
  mkdir -p "$tmp/repro"
  if FUSEFUZZ_REPRO_DIR="$tmp/repro" "$fuzzer" -max_total_time="$seconds" \
      -artifact_prefix="$tmp/" "$tmp/corpus" >"$tmp/log" 2>&1; then
    echo "engine_plant_test: $fuzzer ran $seconds s without finding the planted fault" >&2
    tail -n 5 "$tmp/log" >&2
    exit 1
  fi
  grep -a "fusefuzz finding: fusion in $FUSEFUZZ_PLANT_XNNPACK_FAULT" "$tmp/log" >&2 || {
    echo "engine_plant_test: $fuzzer stopped without the planted finding:" >&2
    tail -n 30 "$tmp/log" >&2
    exit 1
  }
  grep -a "stat::number_of_executed_units\|Done\|fusefuzz: signature" "$tmp/log" >&2 || true
  ls "$tmp"/crash-* >/dev/null
  repro=$(ls "$tmp"/repro/*.repro.json)
  grep -q '"rule": "fuse Clamp Node into upstream Node"' "$repro" || {
    echo "engine_plant_test: $repro does not blame the planted rule" >&2
    exit 1
  }
  # The crash input regenerates the same finding in the standalone runner (triage's step).
  "$replay" --write-repro "$tmp/again.json" "$(ls "$tmp"/crash-* | head -n 1)" >&2
else
  "$replay" --find --random 600 --seed 1 --max-len 4096 "$corpus" >"$tmp/out" || {
    echo "engine_plant_test: $replay --find saw no planted finding" >&2
    exit 1
  }
  cat "$tmp/out" >&2
  grep -q "fusion fuse Clamp Node into upstream Node" "$tmp/out"
fi
echo "engine_plant_test: planted fault found" >&2
