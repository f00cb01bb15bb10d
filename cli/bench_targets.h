// `fusefuzz bench --target T...`: the fusion benchmark through any engine that speaks the
// protocol capability `bench` (docs/benchmarks.md#any-engine-fusefuzz-bench---target).
#pragma once

#include <string>
#include <vector>

#include "ir/quant.h"

namespace fusefuzz {

struct TargetBenchArgs {
  std::vector<std::string> targets;  // embedded, exec:CMD or onednn (the in-process peer)
  std::string filter;                // regex searched in BM_Fusion[Int8]/<pattern>/<layer>/<shape>
  // The int8 rows instead of the float ones (as `fuzz --quant` generates quantized graphs): the
  // int8 patterns as QDQ graphs (bench/quant_patterns.h), BM_FusionInt8/... names, GOPS.
  bool quant = false;
  // --quant-activations: uint8 (ONNX Runtime's and PyTorch's default) or int8 (TensorFlow Lite's,
  // XNNPACK's per-channel qc8 convolution); rows of int8 get "_I8" on their shape.
  QuantType quant_activations = QuantType::kUint8;
  std::string out = "out/bench";
  int repetitions = 5, runs = 10, warmup = 2, threads = 1;
  bool tiny = false;     // layers 16x narrower, 4x smaller: smoke tests
  double timeout = 120;  // seconds per request (a timing request runs warmup + runs times)
  std::string command_line;
};

// Returns the exit status: 0, or 2 when a target broke the protocol or died (the rows measured
// before are written). Throws InputError for bad options and targets that cannot start.
int BenchTargets(const TargetBenchArgs& a);

}  // namespace fusefuzz
