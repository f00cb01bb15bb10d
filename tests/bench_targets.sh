#!/bin/sh
# `fusefuzz bench --target` end to end (docs/benchmarks.md), timings never asserted (the machine
# is noisy): two engines on tiny shapes write valid Google Benchmark JSON, a markdown table with
# one line per case and engine with its verdict, and an SVG; a target that lies about its
# timings stops the run with exit 2, keeping the rows measured before.
# Usage: bench_targets.sh FUSEFUZZ EXAMPLE_TARGET OUT_DIR
set -eu
fusefuzz=$1 example=$2 out=$3
py=/usr/bin/python3
rm -rf "$out"
mkdir -p "$out"

"$fusefuzz" bench --target embedded --target "exec:$example" --filter 'conv_bn_relu6/.*/N1_' \
  --tiny --repetitions 2 --runs 2 --warmup 1 --out "$out/ok"
"$py" - "$out/ok" <<'PY'
import json, sys, xml.etree.ElementTree as ET
d = sys.argv[1]
doc = json.load(open(d + "/benchmarks.json"))
names = [e["label"] for e in doc["context"]["fusefuzz_engines"]]
assert names == ["embedded", "fusefuzz-example-target"], names
iters = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
# 4 dw rows at batch 1 x 2 engines x 2 variants x 2 repetitions
assert len(iters) == 32, len(iters)
for b in iters:
    assert b["time_unit"] == "ns" and b["real_time"] > 0 and b["iterations"] == 2, b
    assert 0 < b["min_ns"] <= b["real_time"], b
    assert b["label"] == "PASS", b
aggs = {b["aggregate_name"] for b in doc["benchmarks"] if b["run_type"] == "aggregate"}
assert aggs == {"mean", "median", "stddev", "cv"}, aggs
md = open(d + "/benchmarks.md").read()
# One line per case and engine (the engine column), not a column group per engine.
rows = [l for l in md.splitlines() if l.startswith("| conv_bn_relu6 |")]
assert len(rows) == 8, md
for r in rows:
    assert r.count("| PASS |") == 1, r
assert sum("| embedded |" in r for r in rows) == 4, md
assert sum("| fusefuzz-example-target |" in r for r in rows) == 4, md
assert "| engine | unfused µs | fused µs | speedup |" in md, md
svg = ET.parse(d + "/speedup.svg").getroot()
assert svg.tag.endswith("svg") and len(svg.findall("{http://www.w3.org/2000/svg}rect")) > 4
PY

# A lying target: the first pattern (conv_bn: no Relu6) is measured, then the Relu6 rows lie.
rc=0
"$fusefuzz" bench --target "exec:$example --bad-timings runs --bad-timings-on Relu6" \
  --filter 'conv_bn(_relu6)?/mobilenetv2_(expand|dw)/N1_C(2|9)_H14_' --tiny --repetitions 1 --runs 2 \
  --warmup 0 --out "$out/lie" 2>"$out/lie.err" || rc=$?
cat "$out/lie.err"
test "$rc" = 2
grep -q '/timings/runs: must be 2, the number of runs asked for, got 3' "$out/lie.err"
"$py" - "$out/lie" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1] + "/benchmarks.json"))
runs = {b["run_name"] for b in doc["benchmarks"]}
assert runs and all("/conv_bn/" in r for r in runs), runs
assert "| conv_bn |" in open(sys.argv[1] + "/benchmarks.md").read()
PY

# A target that crashes on the second pattern: exit 2 too, the first pattern kept.
rc=0
"$fusefuzz" bench --target "exec:$example --crash-on Relu6" \
  --filter 'conv_bn(_relu6)?/mobilenetv2_(expand|dw)/N1_C(2|9)_H14_' --tiny --repetitions 1 --runs 2 \
  --warmup 0 --out "$out/crash" 2>"$out/crash.err" || rc=$?
test "$rc" = 2
grep -q 'crashing on Relu6' "$out/crash.err"
grep -q '| conv_bn |' "$out/crash/benchmarks.md"

# A target without the capability, and a filter matching nothing: exit 2 with a message.
rc=0
"$fusefuzz" bench --target "exec:$example --no-capabilities" --tiny --out "$out/nocap" \
  2>"$out/nocap.err" || rc=$?
test "$rc" = 2 && grep -q 'does not declare the capability bench' "$out/nocap.err"
rc=0
"$fusefuzz" bench --target embedded --filter nothing-like-this --out "$out/none" \
  2>"$out/none.err" || rc=$?
test "$rc" = 2 && grep -q 'matches no case' "$out/none.err"
echo "bench --target: ok"
