#!/usr/bin/env bash
# A short deterministic campaign on mlir:MODE (targets/mlir/README.md), for ctest. Passes when
# the campaign finds nothing, or, with ALLOWED_RULE, when every finding is a fusion finding
# blamed on that pass (a known upstream bug, docs/upstream-bugs.md) and its standalone
# reproducer (reproduce.sh, MLIR alone) exits 1: the bug reproduced. Extra arguments go to
# `fusefuzz fuzz` (e.g. --disable affine-loop-fusion). Exit 77 (skipped) without mlir-22-tools.
#   usage: mlir_campaign.sh FUSEFUZZ MODE GRAPHS SEED WORK_DIR ALLOWED_RULE|- [FUZZ_ARGS...]
set -euo pipefail
fusefuzz=$1 mode=$2 graphs=$3 seed=$4 work=$5 allowed=$6
shift 6
[ -x /usr/lib/llvm-22/bin/mlir-opt ] || { echo "mlir-22-tools missing: skipped"; exit 77; }
rc=0
"$fusefuzz" fuzz --target "mlir:$mode" --graphs "$graphs" --seed "$seed" --jobs 1 --quiet \
  --no-minimize --force --out "$work" "$@" || rc=$?
[ "$rc" -eq 0 ] && { echo "mlir_campaign: mlir:$mode: no finding in $graphs graphs"; exit 0; }
[ "$rc" -eq 1 ] || { echo "FAIL: mlir:$mode: fusefuzz fuzz exited $rc"; exit 1; }
[ "$allowed" != "-" ] || { echo "FAIL: mlir:$mode: findings in $work (none expected)"; exit 1; }
python3 - "$work" "$allowed" <<'PY'
import json, subprocess, sys
work, allowed = sys.argv[1], sys.argv[2]
s = json.load(open(work + "/summary.json"))
bad = []
for u in s["unique_findings"]:
    f = json.load(open(work + "/" + u["folder"] + "/repro.json"))["finding"]
    rule = f.get("blame", {}).get("rule", "")
    if u["kind"] != "fusion" or rule != allowed:
        bad.append("%s: kind %s, blamed on '%s'" % (u["folder"], u["kind"], rule))
        continue
    folder = work + "/" + u["folder"]
    rc = subprocess.run(["bash", folder + "/reproduce.sh"], capture_output=True, text=True)
    if rc.returncode != 1:
        bad.append("%s: reproduce.sh exited %d (1 expected): %s" %
                   (u["folder"], rc.returncode, rc.stdout + rc.stderr))
if bad:
    print("FAIL: findings not blamed on %s:\n  %s" % (allowed, "\n  ".join(bad)))
    sys.exit(1)
print("mlir_campaign: %d unique findings, all blamed on %s" % (len(s["unique_findings"]), allowed))
PY
