// The fast kernels at every ISA level side by side, against oneDNN, in ONE run (so that the
// ratios are measured under the same machine load). Rows, single-threaded, CPU time:
//   BM_Isa/<layer>/<shape>/<isa>    FusedConv (conv + bias + ReLU) at that level (its kernel
//                                   table's conv entry, into a preallocated output)
//   BM_Isa/<layer>/<shape>/onednn   oneDNN convolution, bias, ReLU post-op, its preferred layouts
// and a table at the end: GFLOP/s per level and each level's ratio to oneDNN. Layers: the four
// ResNet-18 3x3 stages and the MobileNetV2 depthwise 3x3 shapes. Flops: 2*N*M*OH*OW*(C/g)*kH*kW.
// The int8 rows (docs/kernels.md, "Int8"), the same layers plus MobileNetV2's 1x1 convs:
//   BM_IsaInt8/<layer>/<shape>/<isa>     u8 x s8 conv + bias + ReLU + requantize to u8, fused,
//                                        int8::QConvPlan of that level (weights packed before)
//   BM_IsaInt8/<layer>/<shape>/onednn    oneDNN's u8s8 convolution, per-channel output scales,
//                                        ReLU post-op, u8 dst, its preferred layouts
//   BM_IsaInt8/<layer>/<shape>/f32       our float32 FusedConv (conv + bias + ReLU) at the
//                                        process's level, for int8 / float32
// and their table: GOPS (2 ops per multiply-add) and time per level, ratios to oneDNN int8.
//   build/release/bench/isa_bench [--benchmark_filter=resnet18] [--benchmark_min_time=0.5]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bench/int8_cases.h"
#include "bench/onednn_peer.h"
#include "ir/graph.h"
#include "ir/verifier.h"
#include "kernels/fast/executor.h"
#include "kernels/fast/fast_ops.h"

#ifdef FUSEFUZZ_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif
#ifdef FUSEFUZZ_HAVE_OMP
#include <omp.h>
#endif

namespace fusefuzz {
namespace {

struct Layer {
  const char* model;
  int64_t c, h, m, group;  // N = 1, 3x3, stride 1, pad 1
};

const Layer kLayers[] = {
    {"resnet18_conv2_x", 64, 56, 64, 1},   {"resnet18_conv3_x", 128, 28, 128, 1},
    {"resnet18_conv4_x", 256, 14, 256, 1}, {"resnet18_conv5_x", 512, 7, 512, 1},
    {"mobilenetv2_dw", 144, 56, 144, 144}, {"mobilenetv2_dw", 960, 7, 960, 960},
};

std::string RowName(const Layer& l) {
  std::string s =
      std::string(l.model) + "/N1_C" + std::to_string(l.c) + "_H" + std::to_string(l.h) + "_K3";
  if (l.group != 1) s += "_G" + std::to_string(l.group);
  return s;
}

double Flops(const Layer& l) { return 2.0 * l.m * l.h * l.h * (l.c / l.group) * 9; }

// Deterministic values in [-1, 1) (an LCG: the bench needs no statistical quality).
std::vector<float> Filled(int64_t n, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return v;
}

void SetRate(benchmark::State& state, double flops) {
  state.counters["FLOP"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Fast(benchmark::State& state, Layer l, FastIsa isa) {
  Node n;
  n.name = "conv";
  n.op = Op::FusedConv;
  n.attrs["pads"] = std::vector<int64_t>{1, 1, 1, 1};
  n.attrs["group"] = l.group;
  n.params["W"] = Tensor({l.m, l.c / l.group, 3, 3}, Filled(l.m * l.c / l.group * 9, 1));
  n.params["B"] = Tensor({l.m}, Filled(l.m, 2));
  EpilogueStep relu;
  relu.kind = EpilogueKind::kActivation;
  relu.act = Op::Relu;
  n.epilogue = {relu};
  const Tensor x({1, l.c, l.h, l.h}, Filled(l.c * l.h * l.h, 3));
  const Shape out = InferNodeShape(n, {x.shape});
  // The kernel of that level straight from its table, into one output tensor allocated up
  // front (as oneDNN's dst below, and as the executor's tensor pool does in a graph run): the
  // rows time the kernel, not an allocation and zero fill per call.
  const fast::KernelTable& kernels = fast::KernelsFor(isa);
  const std::vector<const Tensor*> inputs{&x};
  Tensor y(out);
  for (auto _ : state) {
    kernels.conv(n, inputs, 1, y);
    benchmark::DoNotOptimize(y.data.data());
    benchmark::ClobberMemory();
  }
  SetRate(state, Flops(l));
}

#ifdef FUSEFUZZ_HAVE_DNNL
void BM_Dnnl(benchmark::State& state, Layer l) {
  using dnnl::memory;
  using dt = memory::data_type;
  using tag = memory::format_tag;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  const memory::dims src{1, l.c, l.h, l.h}, dst{1, l.m, l.h, l.h}, bias{l.m};
  const memory::dims wts = l.group > 1 ? memory::dims{l.group, l.m / l.group, l.c / l.group, 3, 3}
                                       : memory::dims{l.m, l.c, 3, 3};
  const dnnl::convolution_forward::desc d(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
      memory::desc(src, dt::f32, tag::any), memory::desc(wts, dt::f32, tag::any),
      memory::desc(bias, dt::f32, tag::x), memory::desc(dst, dt::f32, tag::any), {1, 1}, {1, 1},
      {1, 1});
  dnnl::post_ops po;
  po.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  const dnnl::convolution_forward::primitive_desc pd(d, attr, eng);
  auto fill = [&](const memory::desc& md, uint32_t seed) {
    memory m(md, eng);
    const std::vector<float> v = Filled(static_cast<int64_t>(md.get_size() / sizeof(float)), seed);
    std::copy(v.begin(), v.end(), static_cast<float*>(m.get_data_handle()));
    return m;
  };
  const std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, fill(pd.src_desc(), 3)},
      {DNNL_ARG_WEIGHTS, fill(pd.weights_desc(), 1)},
      {DNNL_ARG_BIAS, fill(memory::desc(bias, dt::f32, tag::x), 2)},
      {DNNL_ARG_DST, memory(pd.dst_desc(), eng)}};
  const dnnl::convolution_forward conv(pd);
  for (auto _ : state) {
    conv.execute(strm, args);
    strm.wait();
  }
  SetRate(state, Flops(l));
}
#endif

const QLayer kInt8Layers[] = {
    {"resnet18_conv2_x", 64, 56, 64, 3, 1},    {"resnet18_conv3_x", 128, 28, 128, 3, 1},
    {"resnet18_conv4_x", 256, 14, 256, 3, 1},  {"resnet18_conv5_x", 512, 7, 512, 3, 1},
    {"mobilenetv2_dw", 144, 56, 144, 3, 144},  {"mobilenetv2_dw", 960, 7, 960, 3, 960},
    {"mobilenetv2_expand", 24, 56, 144, 1, 1}, {"mobilenetv2_project", 192, 28, 32, 1, 1},
};

void SetOps(benchmark::State& state, double ops) {
  state.counters["OP"] = benchmark::Counter(ops, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Int8(benchmark::State& state, QLayer l, FastIsa isa) {
  QCase c(l, QPattern::kConvBnReluRequant);
  c.Prepare(isa);
  for (auto _ : state) {
    c.RunFused(1);
    benchmark::ClobberMemory();
  }
  SetOps(state, c.Ops());
}

void BM_Int8Float(benchmark::State& state, QLayer l) {
  QCase c(l, QPattern::kConvBnReluRequant);
  for (auto _ : state) {
    c.RunFloat(1);
    benchmark::ClobberMemory();
  }
  SetOps(state, c.Ops());
}

void BM_Int8Dnnl(benchmark::State& state, QLayer l) {
  std::unique_ptr<DnnlPlan> plan;
  try {
    plan = MakeDnnlInt8Plan(l, QPattern::kConvBnReluRequant);
  } catch (const std::exception& e) {
    state.SkipWithError((std::string("oneDNN: ") + e.what()).c_str());
    return;
  }
  if (!plan) {
    state.SkipWithError("oneDNN not built in");
    return;
  }
  for (auto _ : state) plan->Run();
  SetOps(state, QCase(l, QPattern::kConvBnReluRequant).Ops());
}

// Prints the usual console rows, remembers each row's FLOP/s, and ends with the side-by-side
// table (GFLOP/s, ratio to oneDNN).
class TableReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      const std::string name = r.run_name.str();  // without an aggregate's "_median"
      const size_t slash = name.rfind('/');
      const bool int8 = name.rfind("BM_IsaInt8/", 0) == 0;
      auto it = r.counters.find(int8 ? "OP" : "FLOP");
      if (slash == std::string::npos || it == r.counters.end() || r.error_occurred) continue;
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name != "median") continue;
      const size_t skip = int8 ? 11 : 7;  // "BM_IsaInt8/", "BM_Isa/"
      const std::string row = name.substr(skip, slash - skip);
      auto& order = int8 ? int8_order_ : order_;
      auto& rates = int8 ? int8_rates_ : rates_;
      if (!rates.count(row)) order.push_back(row);
      // Repetitions: the median when there is one (aggregates come after the runs), else the
      // last run.
      rates[row][name.substr(slash + 1)] = it->second.value / 1e9;
      if (int8) int8_us_[row][name.substr(slash + 1)] = r.GetAdjustedCPUTime();
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::vector<std::string> cols;
    for (FastIsa isa : AvailableFastIsas()) cols.push_back(FastIsaName(isa));
    if (!int8_order_.empty()) PrintInt8(cols);
    if (order_.empty()) return;
    std::printf("\nGFLOP/s (single thread) and ratio to oneDNN, one run:\n%-42s", "layer");
    for (const auto& c : cols) std::printf(" %8s %6s", c.c_str(), "/dnnl");
    std::printf(" %8s\n", "onednn");
    for (const auto& row : order_) {
      const auto& r = rates_[row];
      const double dnnl = r.count("onednn") ? r.at("onednn") : 0;
      std::printf("%-42s", row.c_str());
      for (const auto& c : cols) {
        const double v = r.count(c) ? r.at(c) : 0;
        std::printf(" %8.1f %6.2f", v, dnnl > 0 ? v / dnnl : 0.0);
      }
      std::printf(" %8.1f\n", dnnl);
    }
  }

  // GOPS and µs per level, each level's ratio to oneDNN int8, and the best level's ratio to
  // our float32 fused conv.
  void PrintInt8(const std::vector<std::string>& cols) {
    std::printf("\nint8 conv + bias + ReLU + requantize (single thread), GOPS / us, one run:\n");
    std::printf("%-42s", "layer");
    for (const auto& c : cols) std::printf(" %15s %6s", c.c_str(), "/dnnl");
    std::printf(" %15s %15s %7s\n", "onednn", "f32", "int8/f32");
    for (const auto& row : int8_order_) {
      auto& r = int8_rates_[row];
      auto& us = int8_us_[row];
      const double dnnl = r.count("onednn") ? r["onednn"] : 0, f32 = r.count("f32") ? r["f32"] : 0;
      std::printf("%-42s", row.c_str());
      for (const auto& c : cols) {
        std::printf(" %7.1f/%7.1f %6.2f", r[c], us[c], dnnl > 0 ? r[c] / dnnl : 0.0);
      }
      const double best = cols.empty() ? 0 : r[cols.back()];
      std::printf(" %7.1f/%7.1f %7.1f/%7.1f %7.2f\n", dnnl, us["onednn"], f32, us["f32"],
                  f32 > 0 ? best / f32 : 0.0);
    }
  }

 private:
  std::vector<std::string> order_, int8_order_;
  std::map<std::string, std::map<std::string, double>> rates_, int8_rates_, int8_us_;
};

void Register() {
  for (const Layer& l : kLayers) {
    for (FastIsa isa : AvailableFastIsas()) {
      benchmark::RegisterBenchmark(("BM_Isa/" + RowName(l) + "/" + FastIsaName(isa)).c_str(),
                                   BM_Fast, l, isa)
          ->Unit(benchmark::kMillisecond);
    }
#ifdef FUSEFUZZ_HAVE_DNNL
    benchmark::RegisterBenchmark(("BM_Isa/" + RowName(l) + "/onednn").c_str(), BM_Dnnl, l)
        ->Unit(benchmark::kMillisecond);
#endif
  }
  for (const QLayer& l : kInt8Layers) {
    const std::string row = "BM_IsaInt8/" + std::string(l.model) + "/" + QShapeName(l) + "/";
    for (FastIsa isa : AvailableFastIsas()) {
      benchmark::RegisterBenchmark((row + FastIsaName(isa)).c_str(), BM_Int8, l, isa)
          ->Unit(benchmark::kMicrosecond);
    }
    benchmark::RegisterBenchmark((row + "onednn").c_str(), BM_Int8Dnnl, l)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((row + "f32").c_str(), BM_Int8Float, l)
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace
}  // namespace fusefuzz

int main(int argc, char** argv) {
#ifdef FUSEFUZZ_HAVE_OMP
  omp_set_num_threads(1);  // oneDNN single-threaded, like our rows
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  fusefuzz::Register();
  fusefuzz::TableReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
