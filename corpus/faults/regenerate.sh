#!/usr/bin/env bash
# Regenerates corpus/faults/<fault>.repro.json: for each catalogued fault, a campaign with only
# that fault injected finds it, blames it and minimizes it; the first finding blamed on the fault
# is kept. Nothing here is hand-written. Usage: corpus/faults/regenerate.sh [FUSEFUZZ_BINARY
# [FAULT...]] (all faults by default).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../build/release/fusefuzz}
shift || true
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
faults=("$@")
[ ${#faults[@]} -gt 0 ] || mapfile -t faults < <("$bin" list faults | awk '{print $1}')
# Faults that corrupt a quantized rule need quantized graphs (`--quant`); the negative-scale one
# needs the generator's allow_negative_scale too.
quant_rules='\[corrupts (qdq-[a-z-]*|quantize-activation-drop|pad-qconv-fold)\]'
negative_cfg="$work/negative-scale.json"
echo '{"quant": {"enabled": true, "allow_negative_scale": true}}' >"$negative_cfg"
for fault in "${faults[@]}"; do
  found=""
  gen=()
  if "$bin" list faults | grep -E "^$fault " | grep -Eq "$quant_rules"; then
    gen=(--quant)
    [ "$fault" = maxpool-negative-scale ] && gen+=(--config "$negative_cfg")
  fi
  for seed in 1 2 3 4 5 6 7 8; do
    out="$work/$fault-$seed"
    "$bin" fuzz "${gen[@]}" --inject "$fault" --graphs 1500 --seed "$seed" --jobs 1 -q --out "$out" \
      --minimize-budget 20 >/dev/null 2>&1 || true
    for f in $(ls -d "$out"/findings/fusion-"$fault"-* 2>/dev/null | sort); do
      found="$f/repro.json"
      break
    done
    [ -n "$found" ] && break
  done
  if [ -z "$found" ]; then
    echo "regenerate: no finding for $fault" >&2
    continue
  fi
  # The stored command names the file where it lives in the repository.
  sed "s#\"command\": \"fusefuzz replay [^\"]*\"#\"command\": \"fusefuzz replay corpus/faults/$fault.repro.json --expect fail\"#" \
    "$found" >"$here/$fault.repro.json"
  echo "regenerate: $fault <- $found" >&2
done
