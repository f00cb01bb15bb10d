#!/usr/bin/env bash
# A short deterministic campaign against a built-in mobile runtime target (targets/xnnpack/,
# targets/armnn/). Passes when the campaign finds nothing, or, with ALLOWED_RULE, when every
# finding is an optimized-run finding blamed on ALLOWED_RULE (a known upstream bug of that rule,
# docs/upstream-bugs.md) and none is a kernel, crash or timeout finding, except crashes whose
# stderr contains ALLOWED_CRASH (a known upstream abort).
#   usage: mobile_campaign.sh FUSEFUZZ TARGET GRAPHS WORK_DIR [ALLOWED_RULE [ALLOWED_CRASH]]
set -euo pipefail
fusefuzz=$1 target=$2 graphs=$3 work=$4 allowed=${5:-} allowed_crash=${6:-}
rc=0
"$fusefuzz" fuzz --target "$target" --graphs "$graphs" --seed 1 --jobs 1 --quiet \
  --no-minimize --force --out "$work" || rc=$?
[ "$rc" -eq 0 ] && { echo "mobile_campaign: $target: no finding in $graphs graphs"; exit 0; }
[ "$rc" -eq 1 ] || { echo "FAIL: $target: fusefuzz fuzz exited $rc"; exit 1; }
[ -n "$allowed" ] || { echo "FAIL: $target: findings in $work (none expected)"; exit 1; }
python3 - "$work" "$allowed" "$allowed_crash" <<'PY'
import json, sys
work, allowed, allowed_crash = sys.argv[1], sys.argv[2], sys.argv[3]
s = json.load(open(work + "/summary.json"))
bad = []
for u in s["unique_findings"]:
    f = json.load(open(work + "/" + u["folder"] + "/repro.json"))["finding"]
    rule = f.get("blame", {}).get("rule", "")
    if u["kind"] == "crash" and allowed_crash:
        if allowed_crash in open(work + "/" + u["folder"] + "/report.md").read():
            continue
    if u["kind"] not in ("fusion", "target_error") or rule != allowed:
        bad.append("%s: kind %s, blamed on '%s'" % (u["folder"], u["kind"], rule))
n = len(s["unique_findings"])
if bad:
    print("FAIL: findings not blamed on %s:\n  %s" % (allowed, "\n  ".join(bad)))
    sys.exit(1)
print("mobile_campaign: %d unique findings, all known (%s%s)" %
      (n, allowed, ", crash: " + allowed_crash if allowed_crash else ""))
PY
