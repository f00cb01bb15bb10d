#!/usr/bin/env bash
# Regenerates the seed corpora of the fuzz targets, deterministically (never edit them by hand):
#   corpus/fuzz/graph_json_fuzzer/  the JSON corpus: corpus/seeds/*.json, corpus/faults/*.repro.json
#                                   (if any), tests/data/quant/*.json, small `fusefuzz gen --seed N`
#                                   graphs (b64, plain) and tensors files (`fusefuzz run ... -o`)
#   corpus/fuzz/onnx_import_fuzzer/ ONNX models: corpus/seeds/*.json, tests/data/quant/*.json and
#                                   the small generated graphs exported (`fusefuzz export`, node
#                                   records included)
#   corpus/fuzz/onnx_cut_fuzzer/    the same models and the QDQ models of corpus/onnxruntime/
#   corpus/fuzz/tensor_proto_fuzzer/ TensorProto files (`export --inputs-pb`)
#   corpus/fuzz/fusion_fuzzer/      fixed-seed random byte strings (splitmix64, fuzz/fuzz_inputs.cc)
#                                   written by `fusion_fuzzer_replay --dump`, named by SHA-1
#   corpus/fuzz/<engine>_<mode>_fuzzer/  campaign graphs as bytes: the first 32 cases of a
#                                   campaign with --seed 1 under the target's generator settings
#                                   (`<target>_replay --seed-corpus`, fuzz/seed_bytes.h); only for
#                                   the engine targets built in BUILD_DIR
# Usage: fuzz/make_corpus.sh [BUILD_DIR]   (default build/release; needs the targets
#        fusefuzz and fusion_fuzzer_replay built there). Commit the result.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
for b in fusefuzz fuzz/fusion_fuzzer_replay; do
  [ -x "$build/$b" ] || { echo "make_corpus: build $build/$b first" >&2; exit 2; }
done
gj=corpus/fuzz/graph_json_fuzzer
ff=corpus/fuzz/fusion_fuzzer
ox=corpus/fuzz/onnx_import_fuzzer
oc=corpus/fuzz/onnx_cut_fuzzer
tp=corpus/fuzz/tensor_proto_fuzzer
rm -rf "$gj" "$ff" "$ox" "$oc" "$tp"
mkdir -p "$gj" "$ff" "$ox" "$oc" "$tp"

shopt -s nullglob
for f in corpus/seeds/*.json; do cp "$f" "$gj/seed-$(basename "$f")"; done
for f in corpus/faults/*.repro.json; do cp "$f" "$gj/fault-$(basename "$f")"; done
# Quantized graphs (QDQ, QLinearConv, QLinearAdd): the quant objects, their types and the graph
# option the verifier's quantized checks read (tests/data/quant/).
for f in tests/data/quant/*.json; do cp "$f" "$gj/quant-$(basename "$f")"; done
# Small graphs (fuzz/corpus_gen_config.json): the fuzzer runs with -max_len=4096 or so, and
# mutating a short file is much faster than a long one.
cfg=fuzz/corpus_gen_config.json
for n in 1 2 3 4 5 6 7 8; do
  "$build/fusefuzz" gen --seed "$n" --config "$cfg" >"$gj/gen-seed$n.json"
done
for n in 9 10 11 12; do
  "$build/fusefuzz" gen --seed "$n" --config "$cfg" --plain >"$gj/gen-seed$n-plain.json"
done
# Tensors files (the fuzzer reads an object without "format" as one): outputs of a few seeds,
# exact base64 and plain data arrays.
for s in op-conv op-pools op-binary; do
  "$build/fusefuzz" run "corpus/seeds/$s.json" --seed 1 -o "$gj/tensors-$s.json" >/dev/null
  "$build/fusefuzz" run "corpus/seeds/$s.json" --seed 2 --plain \
    -o "$gj/tensors-$s-plain.json" >/dev/null
done

# ONNX models: every seed and the small generated graphs (those that hold FusedConv, GELU, SiLU
# or GroupNorm carry node records in metadata_props). --no-check: the checker is not the point.
for f in corpus/seeds/*.json "$gj"/gen-seed[0-9].json; do
  "$build/fusefuzz" export "$f" --onnx "$ox/$(basename "$f" .json).onnx" --no-check >/dev/null
done
# QDQ models: the quantized graphs exported (QuantizeLinear/DequantizeLinear, weight and bias
# grids; QLinearConv and QLinearAdd through their records).
for f in tests/data/quant/*.json; do
  "$build/fusefuzz" export "$f" --onnx "$ox/quant-$(basename "$f" .json).onnx" --no-check \
    >/dev/null
done

# import --cut: the models above (a mutated op type is a foreign op to cut at) and the
# quantized models ONNX Runtime's bugs were filed with, and the models that crashed libonnx's
# shape inference under --cut (found by this fuzzer; tests/data/hostile/cut-*.onnx).
cp "$ox"/*.onnx corpus/onnxruntime/*.onnx tests/data/hostile/cut-*.onnx "$oc"/
# TensorProto files (the .pb reader of compare --inputs-pb/--outputs): the backend-test data of
# two seeds, input and reference output.
pb=$(mktemp -d)
for s in op-conv op-binary; do
  "$build/fusefuzz" export "corpus/seeds/$s.json" --onnx "$pb/$s.onnx" --inputs-pb "$pb/$s" \
    --no-check >/dev/null
  cp "$pb/$s/test_data_set_0/input_0.pb" "$tp/tensor-$s-input_0.pb"
  cp "$pb/$s/test_data_set_0/output_0.pb" "$tp/tensor-$s-output_0.pb"
done
rm -rf "$pb"

# Byte strings: the generator reads them from the end (BytesSource), so longer strings decide
# more choices (graph shape first, then parameters and input values); lengths are spread over
# 0..4096 bytes.
"$build/fuzz/fusion_fuzzer_replay" --dump "$ff" --random 48 --seed 20261129 --max-len 4096

# The in-process engine targets (fuzz/engine_fuzzer.h): campaign graphs, decodable bytes.
engines=0
for t in xnnpack_fp32 xnnpack_int8 armnn_fp32 armnn_int8 opencv_fp32 opencv_int8; do
  replay=$build/fuzz/${t}_fuzzer_replay
  [ -x "$replay" ] || continue
  rm -rf "corpus/fuzz/${t}_fuzzer"
  mkdir -p "corpus/fuzz/${t}_fuzzer"
  "$replay" --seed-corpus "corpus/fuzz/${t}_fuzzer" 32 1
  engines=$((engines + 1))
done

echo "make_corpus: $(ls "$gj" | wc -l) JSON seeds, $(ls "$ox" | wc -l) ONNX seeds," \
  "$(ls "$oc" | wc -l) cut seeds, $(ls "$tp" | wc -l) TensorProto seeds," \
  "$(ls "$ff" | wc -l) byte seeds, $engines engine targets' campaign graphs" >&2
