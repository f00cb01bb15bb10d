#!/usr/bin/env bash
# A short fusefuzz campaign on the PyTorch target, for ctest:
#   campaign_test.sh FUSEFUZZ MODE GRAPHS EXPECTED_EXIT [SIGNATURE_PART]
# Checks the exit status (0: no finding, 1: findings) and, when SIGNATURE_PART is given, that
# there are fusion findings, every one with SIGNATURE_PART in its signature (the blamed rule),
# and no findings of other kinds but target errors (a campaign that must find one known bug and
# nothing else). Findings are not minimized, to keep the test short.
set -u
bin=$1 mode=$2 graphs=$3 expect=$4 part=${5:-}
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# --timeout 120: importing torch takes tens of seconds on a loaded machine.
"$bin" fuzz --graphs "$graphs" --seed 7 --jobs 1 --timeout 120 -q --no-minimize \
  --target "exec:/usr/bin/python3 $here/fusefuzz_torch.py --mode $mode" --out "$out"
status=$?
cat "$out/summary.md" 2>/dev/null
if [ "$status" -ne "$expect" ]; then
  echo "campaign_test: mode $mode: expected exit $expect, got $status" >&2
  exit 1
fi
if [ -n "$part" ]; then
  /usr/bin/python3 - "$out/summary.json" "$part" <<'PY' || exit 1
import json, sys
found = json.load(open(sys.argv[1]))["unique_findings"]
fusion = [f for f in found if f["kind"] == "fusion"]
other = [f["signature"] for f in found
         if f["kind"] not in ("fusion", "target_error") or
         (f["kind"] == "fusion" and sys.argv[2] not in f["signature"])]
if not fusion or other:
    sys.exit("campaign_test: expected fusion findings with '%s' only, got %s"
             % (sys.argv[2], other or "none"))
PY
fi
exit 0
