#!/bin/sh
# `fusefuzz bench --target ... --quant` end to end (docs/benchmarks.md, "Int8 rows"), timings
# never asserted: the int8 patterns' QDQ graphs on --tiny shapes through the embedded engine, a
# target that declines graphs over 4 nodes (the residual rows: UNSUPPORTED with its reason), one
# whose hello lacks QuantizeLinear (every row UNSUPPORTED, nothing sent) and, when built,
# xnnpack:int8 (also with int8 activations); rows, GOPS, verdicts and the fused runs' rewrites in
# the markdown and the JSON.
# Usage: bench_targets_quant.sh FUSEFUZZ EXAMPLE_TARGET OUT_DIR [EXTRA_TARGET]
set -eu
fusefuzz=$1 example=$2 out=$3 extra=${4:-}
py=/usr/bin/python3
rm -rf "$out"
mkdir -p "$out"

set -- --target embedded --target "exec:$example --name decliner --decline-over 4" \
  --target "exec:$example --name float-only --unsupported QuantizeLinear"
if [ -n "$extra" ]; then set -- "$@" --target "$extra"; fi
"$fusefuzz" bench --quant "$@" --tiny --repetitions 1 --runs 2 --warmup 0 --out "$out/ok"
"$py" - "$out/ok" "$extra" <<'PY'
import json, sys
d, extra = sys.argv[1], sys.argv[2]
doc = json.load(open(d + "/benchmarks.json"))
labels = [e["label"] for e in doc["context"]["fusefuzz_engines"]]
assert labels[:3] == ["embedded", "decliner", "float-only"], labels
verdicts = doc["context"]["fusefuzz_verdicts"]
rows = sorted({k.rsplit("/", 1)[0] for k in verdicts})
assert len(rows) == 20 and all(r.startswith("BM_FusionInt8/") for r in rows), rows
for r in rows:
    assert verdicts[r + "/embedded"] == "PASS", (r, verdicts[r + "/embedded"])
    declined = "/conv_add_relu_requant/" in r  # 8 nodes; the others have 3 or 4
    assert verdicts[r + "/decliner"] == ("UNSUPPORTED" if declined else "PASS"), r
    assert verdicts[r + "/float-only"] == "UNSUPPORTED", r
    if extra:
        v = verdicts[r + "/" + labels[3]]
        assert v in ("PASS", "UNSUPPORTED"), (r, v)
if extra:
    assert any(verdicts[r + "/" + labels[3]] == "PASS" for r in rows), verdicts
iters = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
assert iters and all(b["OP"] > 0 and b["real_time"] > 0 for b in iters), iters[:2]
assert not any("/float-only/" in b["name"] for b in iters)
md = open(d + "/benchmarks.md").read()
assert md.startswith("# fusefuzz bench --quant"), md[:80]
assert "| engine | unfused µs | fused µs | unfused GOPS | fused GOPS | speedup |" in md, md
lines = [l for l in md.splitlines() if l.startswith("| conv_") or l.startswith("| dw_")]
assert len(lines) == 20 * len(labels), (len(lines), md)  # one line per case and engine
assert "more than 4 (--decline-over)" in md, md
assert "the target does not declare QuantizeLinear (node 'q_y')" in md, md
PY

# int8 activations (--quant-activations int8): names end in _I8; xnnpack:int8 fuses the QDQ
# chain into its per-channel qc8 convolution (with uint8 it has none and stays on float).
if [ -n "$extra" ]; then
  "$fusefuzz" bench --quant --quant-activations int8 --target embedded --target "$extra" \
    --filter 'conv_requant/resnet18' --tiny --repetitions 1 --runs 2 --warmup 0 --out "$out/i8"
  "$py" - "$out/i8" "$extra" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1] + "/benchmarks.json"))
verdicts, rewrites = doc["context"]["fusefuzz_verdicts"], doc["context"]["fusefuzz_rewrites"]
assert len(verdicts) == 8 and all(k.split("/")[3].endswith("_I8") for k in verdicts), verdicts
assert all(v == "PASS" for v in verdicts.values()), verdicts
emb = [v for k, v in rewrites.items() if k.endswith("/embedded")]
assert len(emb) == 4 and all(v == "qdq-conv-fuse" for v in emb), rewrites
if sys.argv[2] == "xnnpack:int8":
    xnn = [v for k, v in rewrites.items() if not k.endswith("/embedded")]
    assert len(xnn) == 4 and all("quantized-convolution-from-qdq" in v for v in xnn), rewrites
PY
fi

# --quant-activations needs --quant; --quant needs --target; a --quant filter matching nothing names the int8 rows.
rc=0
"$fusefuzz" bench --quant-activations int8 --target embedded --out "$out/none0" \
  2>"$out/none0.err" || rc=$?
test "$rc" = 2 && grep -q 'applies to the int8 rows only' "$out/none0.err"
rc=0
"$fusefuzz" bench --quant --out "$out/none1" 2>"$out/none1.err" || rc=$?
test "$rc" != 0
rc=0
"$fusefuzz" bench --quant --target embedded --filter 'BM_Fusion/conv_bn/' --out "$out/none2" \
  2>"$out/none2.err" || rc=$?
test "$rc" = 2 && grep -q 'matches no case of --quant' "$out/none2.err"
echo "bench --target --quant: ok"
