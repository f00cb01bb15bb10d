#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build: configure fusefuzz with the compilers and flags the builder
# gives ($CC $CXX $CFLAGS $CXXFLAGS carry the sanitizer and coverage flags), link the fuzz
# targets with $LIB_FUZZING_ENGINE, and copy them to $OUT with seed corpora and dictionary.
# Runs locally too: ci/cflite-local sets these variables and runs it.
src=${SRC}/fusefuzz
[ -d "$src" ] || src=$(cd "$(dirname "$0")/.." && pwd)
build=${WORK:-/tmp}/fusefuzz-build

# No compiler cache in the builder (ci/cflite-local passes ccache as FUSEFUZZ_COMPILER_LAUNCHER).
# FUSEFUZZ_FUZZERS and FUSEFUZZ_SANITIZE stay off: the builder's flags already say which
# sanitizer and coverage to use; the engine is passed as link flags of the fuzz targets only.
# fusefuzz is C++ only, so $CC and $CFLAGS have nothing to compile. No build type: its -O3 -DNDEBUG would override the builder's optimization level (and asserts
# are welcome while fuzzing).
cmake -S "$src" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE= \
  -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_CXX_FLAGS="$CXXFLAGS" \
  -DCMAKE_CXX_COMPILER_LAUNCHER="${FUSEFUZZ_COMPILER_LAUNCHER:-}" \
  -DFUSEFUZZ_FUZZERS=OFF -DFUSEFUZZ_SANITIZE=OFF -DFUSEFUZZ_WERROR=OFF \
  -DFUSEFUZZ_TESTS=OFF -DFUSEFUZZ_BENCH=OFF \
  -DFUSEFUZZ_FUZZ_ENGINE="$LIB_FUZZING_ENGINE" \
  -DFUSEFUZZ_FUZZ_INJECT="${FUSEFUZZ_FUZZ_INJECT:-}"
fuzzers="fusion_fuzzer graph_json_fuzzer onnx_import_fuzzer onnx_cut_fuzzer tensor_proto_fuzzer"
# The in-process engine targets (fuzz/engine_fuzzer.h) exist when CMake found the engine's
# packages (cmake/mobile_targets.cmake): XNNPACK, Arm NN and OpenCV DNN, fp32 and int8.
engine_fuzzers=$(ninja -C "$build" -t targets all |
  sed -n 's/^\(\(xnnpack\|armnn\|opencv\)_\(fp32\|int8\)_fuzzer\): .*/\1/p' | sort)
echo "build.sh: engine fuzz targets: ${engine_fuzzers:-none (no engine packages found)}" >&2
fuzzers="$fuzzers $engine_fuzzers"
# shellcheck disable=SC2086
ninja -C "$build" -j "$(nproc)" $fuzzers

for t in $fuzzers; do
  cp "$build/fuzz/$t" "$OUT/"
  rm -f "$OUT/${t}_seed_corpus.zip"
  (cd "$src/corpus/fuzz/$t" && zip -q -r "$OUT/${t}_seed_corpus.zip" .)
done
# The shared libraries of ONNX and protobuf (Ubuntu ships no static libonnx) and of the engines
# (Debian/Ubuntu ship XNNPACK, Arm NN and OpenCV shared only): the runner image does not have them; the
# fuzzers look in $ORIGIN/lib (fuzz/CMakeLists.txt).
mkdir -p "$OUT/lib"
for t in $fuzzers; do
  ldd "$OUT/$t" | awk '/libonnx|libprotobuf|libXNNPACK|libpthreadpool|libcpuinfo|libarmnn|libopencv/ {print $3}'
done | sort -u | xargs -r cp -L -t "$OUT/lib"
# Each engine target's known-signature list (its engine's upstream bugs, passed over), read
# beside the binary; and libFuzzer options: inputs are choice bytes, a few KiB decide a graph.
for t in $engine_fuzzers; do
  cp "$build/fuzz/$t.known" "$OUT/"
  cat >"$OUT/$t.options" <<'OPTIONS'
[libfuzzer]
max_len = 4096
OPTIONS
done
cp "$src/fuzz/graph_json.dict" "$OUT/graph_json_fuzzer.dict"
# Per-target libFuzzer options: the JSON reader must refuse big sizes before allocating.
cat >"$OUT/graph_json_fuzzer.options" <<'OPTIONS'
[libfuzzer]
dict = graph_json_fuzzer.dict
malloc_limit_mb = 512
OPTIONS
# The ONNX importer, --cut and the TensorProto reader must refuse big declared sizes before
# allocating, too.
for t in onnx_import_fuzzer onnx_cut_fuzzer tensor_proto_fuzzer; do
  cat >"$OUT/$t.options" <<'OPTIONS'
[libfuzzer]
malloc_limit_mb = 512
OPTIONS
done
