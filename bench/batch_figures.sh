#!/bin/sh
# Paired figures for several cases per target call (docs/campaign.md, "Several cases per target
# call"): the same campaign with --batch 1 and --batch K, back to back, same seed; graphs/s of
# each, their ratio, the load average around them, and whether the finding folders (names and
# repro.json) are the same. Exit status 1 when they are not (a `long` ctest runs it on ONNX Runtime).
#   bench/batch_figures.sh FUSEFUZZ TARGET GRAPHS K [extra fuzz options...]
#   bench/batch_figures.sh build/release/fusefuzz onnxruntime:all 400 16 --seed 3
set -eu
if [ $# -lt 4 ]; then
  echo "usage: $0 FUSEFUZZ TARGET GRAPHS K [fuzz options...]" >&2
  exit 2
fi
fusefuzz=$1 target=$2 graphs=$3 k=$4
shift 4
# KEEP=DIR keeps both output folders there (DIR/b1, DIR/bK).
work=${KEEP:-$(mktemp -d)}
mkdir -p "$work"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
for b in 1 "$k"; do
  rm -rf "$work/b$b"
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  status=0
  "$fusefuzz" fuzz --target "$target" --graphs "$graphs" --batch "$b" -q \
    --out "$work/b$b" "$@" >"$work/b$b.log" 2>&1 || status=$?
  if [ "$status" -gt 1 ]; then
    cat "$work/b$b.log" >&2
    exit "$status"
  fi
  echo "batch $b: load before $load, exit $status"
done
python3 - "$work" "$k" <<'EOF'
import json, os, sys
work, k = sys.argv[1], sys.argv[2]
def summary(b):
    return json.load(open(os.path.join(work, "b" + b, "summary.json")))
def findings(b):
    d = os.path.join(work, "b" + b, "findings")
    if not os.path.isdir(d):
        return {}
    out = {}
    for n in sorted(os.listdir(d)):
        r = json.load(open(os.path.join(d, n, "repro.json")))
        r.pop("command", None)  # names the output folder
        out[n] = r
    return out
s1, sk = summary("1"), summary(k)
r1, rk = s1["graphs_per_second"], sk["graphs_per_second"]
print("batch 1: %d graphs in %.1f s, %.1f graphs/s; verdicts %s" %
      (s1["graphs"], s1["seconds"], r1, s1["verdicts"]))
print("batch %s: %d graphs in %.1f s, %.1f graphs/s; verdicts %s" %
      (k, sk["graphs"], sk["seconds"], rk, sk["verdicts"]))
print("ratio: %.2fx" % (rk / r1 if r1 > 0 else float("nan")))
print("batches:", json.dumps(sk.get("batches", {})))
f1, fk = findings("1"), findings(k)
same = f1 == fk
print("findings: %d with batch 1, %d with batch %s; folders and repro.json %s" %
      (len(f1), len(fk), k, "identical" if same else "DIFFER"))
if not same:
    for n in sorted(set(f1) | set(fk)):
        if f1.get(n) != fk.get(n):
            print("  differs:", n)
    sys.exit(1)
EOF
