// Transcendental activations on a MobileNetV2 expand output (N1 C144 H56 W56, 451,584 floats),
// one thread: the fast kernels at every ISA level this CPU runs, and the scalar libm loops the
// kernels used before they were vectorized (kept here only, as the baseline). Rows name the op,
// shape and path, e.g. BM_Activation/tanh/mobilenetv2_expand/N1_C144_H56_W56/avx2 and
// .../scalar_libm; "ns_per_elem" is CPU time per element. docs/kernels.md "Transcendental
// activations" has the numbers.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kernels/fast/executor.h"
#include "kernels/fast/fast_ops.h"

namespace fusefuzz {
namespace {

const Shape kShape = {1, 144, 56, 56};
const char* const kShapeName = "mobilenetv2_expand/N1_C144_H56_W56";

struct Act {
  const char* name;
  Op op;
  AttrMap attrs;
  float (*scalar)(float);  // the pre-vectorization kernel's per-element formula
};

float ScalarSigmoid(float x) {
  if (x >= 0) return 1.0f / (1.0f + std::exp(-x));
  float e = std::exp(x);
  return e / (1.0f + e);
}

const std::vector<Act>& Acts() {
  static const std::vector<Act> acts = {
      {"sigmoid", Op::Sigmoid, {}, ScalarSigmoid},
      {"tanh", Op::Tanh, {}, [](float x) { return std::tanh(x); }},
      {"silu", Op::Silu, {}, [](float x) { return x * ScalarSigmoid(x); }},
      {"elu",
       Op::Elu,
       {{"alpha", 1.0}},
       [](float x) { return x >= 0.0f ? x : 1.0f * std::expm1(x); }},
      {"gelu_tanh",
       Op::Gelu,
       {{"approximate", std::string("tanh")}},
       [](float x) {
         float z = 0.7978845608028654f * (x + 0.044715f * x * x * x);
         return x * ScalarSigmoid(2.0f * z);
       }},
      {"gelu_erf",
       Op::Gelu,
       {{"approximate", std::string("none")}},
       [](float x) { return 0.5f * x * std::erfc(-x * 0.7071067811865476f); }},
  };
  return acts;
}

// Conv outputs of a trained net: mostly within a few units of 0 (deterministic, no RNG needed).
Tensor Input() {
  Tensor t(kShape);
  for (size_t i = 0; i < t.data.size(); ++i) {
    t.data[i] = 4.0f * std::sin(0.37f * static_cast<float>(i));
  }
  return t;
}

void SetPerElement(benchmark::State& state, int64_t n) {
  state.counters["ns_per_elem"] = benchmark::Counter(
      static_cast<double>(n) * 1e-9,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_Kernel(benchmark::State& state, const Act& a, FastIsa isa) {
  Node n;
  n.name = a.name;
  n.op = a.op;
  n.attrs = a.attrs;
  const Tensor x = Input();
  Tensor y = x;
  const fast::KernelTable& k = fast::KernelsFor(isa);
  for (auto _ : state) {
    k.activation(n, x, 1, y);
    benchmark::DoNotOptimize(y.data.data());
  }
  SetPerElement(state, x.size());
}

void BM_Scalar(benchmark::State& state, const Act& a) {
  const Tensor x = Input();
  Tensor y = x;
  for (auto _ : state) {
    for (size_t i = 0; i < x.data.size(); ++i) y.data[i] = a.scalar(x.data[i]);
    benchmark::DoNotOptimize(y.data.data());
  }
  SetPerElement(state, x.size());
}

void Register() {
  for (const Act& a : Acts()) {
    const std::string prefix = std::string("BM_Activation/") + a.name + "/" + kShapeName + "/";
    benchmark::RegisterBenchmark((prefix + "scalar_libm").c_str(), BM_Scalar, a)
        ->Unit(benchmark::kMillisecond);
    for (FastIsa isa : AvailableFastIsas()) {
      benchmark::RegisterBenchmark((prefix + FastIsaName(isa)).c_str(), BM_Kernel, a, isa)
          ->Unit(benchmark::kMillisecond);
    }
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
