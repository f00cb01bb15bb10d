// Fast kernel benchmarks: conv on real layer shapes (ResNet-18 3x3 stages, MobileNetV2 1x1 and
// depthwise). Fused vs unfused patterns are bench/fusion_bench.cc. Every row's name carries its
// shape, e.g. BM_Conv/resnet18_conv3_x/N1_C128_H28_K3/t1 (t = FastOptions.threads); rerun one with
// --benchmark_filter=<name>. GFLOP/s counts the conv's 2*N*M*OH*OW*(C/group)*kH*kW flops.
// Single-threaded rows are timed on CPU time; rows with t > 1 on wall time (CPU time of the
// main thread alone would overstate them).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/verifier.h"
#include "kernels/fast/executor.h"

namespace fusefuzz {
namespace {

struct Layer {
  const char* model;  // e.g. "resnet18_conv3_x"
  int64_t n, c, h, m, k, stride, group;
};

std::string Name(const char* prefix, const Layer& l, int threads) {
  std::string s = std::string(prefix) + "/" + l.model + "/N" + std::to_string(l.n) + "_C" +
                  std::to_string(l.c) + "_H" + std::to_string(l.h);
  if (l.m != l.c) s += "_M" + std::to_string(l.m);
  s += "_K" + std::to_string(l.k);
  if (l.stride != 1) s += "_S" + std::to_string(l.stride);
  if (l.group != 1) s += "_G" + std::to_string(l.group);
  return s + "/t" + std::to_string(threads);
}

// Deterministic values in [-1, 1) (a small LCG: the bench needs no statistical quality).
Tensor Filled(Shape shape, uint32_t seed) {
  Tensor t(std::move(shape));
  for (float& v : t.data) {
    seed = seed * 1664525u + 1013904223u;
    v = static_cast<float>(seed >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return t;
}

Node ConvNode(const Layer& l, Op op) {
  Node n;
  n.name = "conv";
  n.op = op;
  const int64_t pad = l.k / 2;
  n.attrs["strides"] = std::vector<int64_t>{l.stride, l.stride};
  n.attrs["pads"] = std::vector<int64_t>{pad, pad, pad, pad};
  n.attrs["group"] = l.group;
  n.params["W"] = Filled({l.m, l.c / l.group, l.k, l.k}, 1);
  n.params["B"] = Filled({l.m}, 2);
  return n;
}

double ConvFlops(const Layer& l, const Shape& out) {
  return 2.0 * static_cast<double>(l.n * l.m * out[2] * out[3] * (l.c / l.group) * l.k * l.k);
}

void SetRate(benchmark::State& state, double flops) {
  // A rate: printed as "FLOP=122.9G/s" (Google Benchmark appends the "/s" and the prefix).
  state.counters["FLOP"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Conv(benchmark::State& state, Layer l, int threads) {
  const Node conv = ConvNode(l, Op::Conv);
  const Tensor x = Filled({l.n, l.c, l.h, l.h}, 3);
  const Shape out = InferNodeShape(conv, {x.shape});
  for (auto _ : state) {
    Tensor y = RunFastNode(conv, {&x}, out, FastOptions{threads});
    benchmark::DoNotOptimize(y.data.data());
  }
  SetRate(state, ConvFlops(l, out));
}

const Layer kResNet18[] = {
    {"resnet18_conv2_x", 1, 64, 56, 64, 3, 1, 1},
    {"resnet18_conv3_x", 1, 128, 28, 128, 3, 1, 1},
    {"resnet18_conv4_x", 1, 256, 14, 256, 3, 1, 1},
    {"resnet18_conv5_x", 1, 512, 7, 512, 3, 1, 1},
};
const Layer kOthers[] = {
    {"resnet18_downsample_1x1", 1, 128, 28, 256, 1, 1, 1},  // stride 1 here: the plain-GEMM path
    {"mobilenetv2_expand_1x1", 1, 24, 56, 144, 1, 1, 1},
    {"mobilenetv2_dw", 1, 144, 56, 144, 3, 1, 144},
    {"mobilenetv2_dw", 1, 960, 7, 960, 3, 1, 960},
};

using BenchFn = void (*)(benchmark::State&, Layer, int);
void Add(const char* prefix, BenchFn fn, const Layer& l, int threads) {
  auto* b = benchmark::RegisterBenchmark(Name(prefix, l, threads).c_str(), fn, l, threads);
  b->Unit(benchmark::kMillisecond);
  if (threads > 1) b->UseRealTime();
}

void Register() {
  for (int threads : {1, 2}) {
    for (const Layer& l : kResNet18) Add("BM_Conv", BM_Conv, l, threads);
    for (const Layer& l : kOthers) Add("BM_Conv", BM_Conv, l, threads);
  }
}

}  // namespace
}  // namespace fusefuzz

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  fusefuzz::Register();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
