// Fused vs unfused kernels for every fusion rule's pattern on real layer shapes, with oneDNN as
// the peer. Rows: BM_Fusion/<pattern>/<model>/<shape>/<variant>, variant one of
//   unfused         the unoptimized graph, one RunFastNode per node (intermediates materialized)
//   fused           the graph after Optimize (FusedConv / folded conv), node by node likewise
//   onednn_fused    one oneDNN convolution with post-ops (BN folded into the weights)
//   onednn_unfused  separate oneDNN primitives (convolution, batch_normalization, eltwise, binary)
// The int8 rows (docs/kernels.md, "Int8"): BM_FusionInt8/<pattern>/<model>/<shape>/<variant>,
// pattern conv_requant, conv_bn_relu_requant, conv_add_relu_requant or dw_relu6_requant,
// variant one of
//   unfused         conv to int32, then separate requantize, Add and clamp passes
//   (bench/int8_cases.h) fused           one int8 conv with the requantization, clamp and residual
//   in its epilogue float32         our float32 FusedConv of the same layer and epilogue onednn
//   oneDNN's u8s8 convolution with the pattern's post-ops
// at the process's ISA level (FUSEFUZZ_ISA); counter OP: 2 ops per multiply-add of the conv.
// Rerun one row with --benchmark_filter='^<name>$'. Counters (rates): FLOP/s of the pattern's
// useful work (the same flop count for every variant, so FLOP/s ratios are speedups) and bytes/s
// (the bytes each kernel reads and writes, summed over the variant's kernels). Threads: the
// OMP_NUM_THREADS environment variable (default 1) for our kernels and oneDNN alike; with 1 the
// rows are timed on CPU time, otherwise on wall time. `fusefuzz bench` turns the JSON output into
// a table and a speedup chart.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <Eigen/Core>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>

#include "bench/fusion_patterns.h"
#include "bench/int8_cases.h"
#include "bench/onednn_peer.h"
#include "optimizer/optimizer.h"

namespace fusefuzz {
namespace {

enum class Variant { kUnfused, kFused, kDnnlFused, kDnnlUnfused };

const char* VariantName(Variant v) {
  switch (v) {
    case Variant::kUnfused:
      return "unfused";
    case Variant::kFused:
      return "fused";
    case Variant::kDnnlFused:
      return "onednn_fused";
    case Variant::kDnnlUnfused:
      return "onednn_unfused";
  }
  return "?";
}

void SetCounters(benchmark::State& state, double flops, double bytes) {
  // Rate counters: Google Benchmark appends "/s" and an SI prefix itself ("FLOP=122.9G/s").
  state.counters["FLOP"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes"] =
      benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Fusion(benchmark::State& state, PatternCase pc, Variant v, int threads) {
  const BuiltCase bc = BuildCase(pc);
  const double flops = CaseFlops(bc.graph);
  const FastOptions opts{threads};
  const NodeSequence unfused(bc.graph, bc.inputs, opts);
  const OptimizeResult opt = Optimize(bc.graph);
  const NodeSequence fused(opt.graph, bc.inputs, opts);
  if (fused.num_nodes() >= unfused.num_nodes()) {
    state.SkipWithError("the optimizer did not fuse this pattern");
    return;
  }
  if (v == Variant::kUnfused || v == Variant::kFused) {
    const NodeSequence& seq = v == Variant::kFused ? fused : unfused;
    for (auto _ : state) {
      Tensor y = seq.Run();
      benchmark::DoNotOptimize(y.data.data());
    }
    SetCounters(state, flops, seq.bytes_moved());
    return;
  }
  std::unique_ptr<DnnlPlan> plan;
  try {
    plan = MakeDnnlPlan(pc, v == Variant::kDnnlFused);
  } catch (const std::exception& e) {
    state.SkipWithError((std::string("oneDNN: ") + e.what()).c_str());
    return;
  }
  if (!plan) {
    state.SkipWithError("no oneDNN equivalent");
    return;
  }
  for (auto _ : state) plan->Run();
  SetCounters(state, flops, v == Variant::kDnnlFused ? fused.bytes_moved() : unfused.bytes_moved());
}

enum class QVariant { kUnfused, kFused, kFloat, kDnnl };

const char* QVariantName(QVariant v) {
  switch (v) {
    case QVariant::kUnfused:
      return "unfused";
    case QVariant::kFused:
      return "fused";
    case QVariant::kFloat:
      return "float32";
    case QVariant::kDnnl:
      return "onednn";
  }
  return "?";
}

void BM_FusionInt8(benchmark::State& state, QLayer l, QPattern pattern, QVariant v, int threads) {
  QCase c(l, pattern);
  std::unique_ptr<DnnlPlan> plan;
  if (v == QVariant::kDnnl) {
    try {
      plan = MakeDnnlInt8Plan(l, pattern);
    } catch (const std::exception& e) {
      state.SkipWithError((std::string("oneDNN: ") + e.what()).c_str());
      return;
    }
    if (!plan) {
      state.SkipWithError("no oneDNN");
      return;
    }
  } else {
    c.Prepare(FastIsa::kAuto);
  }
  for (auto _ : state) {
    switch (v) {
      case QVariant::kUnfused:
        c.RunUnfused(threads);
        break;
      case QVariant::kFused:
        c.RunFused(threads);
        break;
      case QVariant::kFloat:
        c.RunFloat(threads);
        break;
      case QVariant::kDnnl:
        plan->Run();
        break;
    }
    benchmark::ClobberMemory();
  }
  state.counters["OP"] = benchmark::Counter(c.Ops(), benchmark::Counter::kIsIterationInvariantRate);
}

void RegisterInt8(int threads) {
  std::vector<QVariant> variants = {QVariant::kUnfused, QVariant::kFused, QVariant::kFloat};
  if (!DnnlVersion().empty()) variants.push_back(QVariant::kDnnl);
  for (const Int8BenchCase& c : Int8BenchCases()) {
    for (QVariant v : variants) {
      const std::string name = std::string("BM_FusionInt8/") + QPatternName(c.pattern) + "/" +
                               c.layer.model + "/" + QShapeName(c.layer) + "/" + QVariantName(v);
      auto* b =
          benchmark::RegisterBenchmark(name.c_str(), BM_FusionInt8, c.layer, c.pattern, v, threads);
      b->Unit(benchmark::kMicrosecond);
      if (threads > 1) b->UseRealTime();
    }
  }
}

int ThreadsFromEnv() {
  const char* s = std::getenv("OMP_NUM_THREADS");
  const int t = s ? std::atoi(s) : 1;
  return t >= 1 ? t : 1;
}

void Register(int threads) {
  std::vector<Variant> variants = {Variant::kUnfused, Variant::kFused};
  if (!DnnlVersion().empty()) {
    variants.push_back(Variant::kDnnlFused);
    variants.push_back(Variant::kDnnlUnfused);
  }
  for (const PatternCase& pc : AllCases()) {
    for (Variant v : variants) {
      const std::string name = CaseName(pc) + "/" + VariantName(v);
      auto* b = benchmark::RegisterBenchmark(name.c_str(), BM_Fusion, pc, v, threads);
      b->Unit(benchmark::kMicrosecond);
      if (threads > 1) b->UseRealTime();
    }
  }
}

}  // namespace
}  // namespace fusefuzz

int main(int argc, char** argv) {
  // Keep freed memory in the process, as a runtime's tensor arena does. By default glibc hands
  // every multi-MB intermediate back to the OS and the next iteration pays its page faults
  // again, a cost that falls almost entirely on the unfused variants (they materialize more
  // tensors): it was 57% of the unfused MobileNetV2 depthwise row.
  const bool arena = mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1 &&
                     mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max()) == 1;
  const int threads = fusefuzz::ThreadsFromEnv();
  fusefuzz::SetDnnlThreads(threads);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("fusefuzz_threads", std::to_string(threads));
  const std::string dnnl = fusefuzz::DnnlVersion();
  benchmark::AddCustomContext("onednn", dnnl.empty() ? "not built" : dnnl);
  // What Eigen's kernels were compiled for (the build's -march): "SSE, SSE2" by default.
  benchmark::AddCustomContext("fusefuzz_isa", Eigen::SimdInstructionSetsInUse());
  benchmark::AddCustomContext("fusefuzz_malloc", arena
                                                     ? "freed memory kept (no trim, mmap >= 32 MiB)"
                                                     : "glibc defaults (mallopt failed)");
  fusefuzz::Register(threads);
  fusefuzz::RegisterInt8(threads);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
