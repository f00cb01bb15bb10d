#!/bin/bash
# Folders per root cause, black box: each of the 14 planted float faults behind the example
# target without capabilities (no rewrites reported, no bisection), one campaign each, the same
# setup as the issue-28 measurements. Prints "fault findings folders" per line and the total.
#   tests/planted_triage.sh [BUILD_DIR] [OUT_DIR]     (defaults: build/release, a temp folder)
# Not a ctest entry (14 campaigns); Triage.OneCauseGivesAtMostTwoFoldersBlackBox checks the
# four that used to split.
set -euo pipefail
build=${1:-build/release}
out=${2:-$(mktemp -d)}
mkdir -p "$out"
faults="through-activation declaration-order bn-bn-half-fold multi-consumer bn-before-padded-conv
bias-not-scaled eps-dropped groups-layout relu6-unbounded activation-before-add sub-const-side
pad-mode-ignored pool-nonmonotone fc-mul-broadcast"
total=0
for f in $faults; do
  rm -rf "${out:?}/$f"
  status=0
  "$build/fusefuzz" fuzz --graphs 300 --seed 11 -j 2 -q \
    --target "exec:$build/fusefuzz-example-target --no-capabilities --inject $f" \
    --out "$out/$f" >"$out/$f.log" 2>&1 || status=$?
  if [ "$status" -gt 1 ]; then
    echo "$f: fusefuzz exited $status (see $out/$f.log)" >&2
    exit 2
  fi
  findings=$(grep -o '"findings": *[0-9]*' "$out/$f/summary.json" | head -1 | grep -o '[0-9]*$')
  folders=$(find "$out/$f/findings" -mindepth 1 -maxdepth 1 -type d | wc -l)
  total=$((total + folders))
  echo "$f $findings $folders"
done
echo "total folders: $total  (campaigns in $out)"
