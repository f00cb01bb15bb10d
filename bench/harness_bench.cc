// Harness throughput on one core, in graphs/s: each stage of the per-graph differential check
// over a fixed pool of generated cases (default GenConfig, seeds 1..kPool), and the whole check as
// the campaign runs it (generate + reference + CheckCase on the embedded target). Rows:
//   BM_Harness/generate    GenerateFromSeed
//   BM_Harness/reference   RunReference (double-precision values + magnitudes)
//   BM_Harness/fast        RunFast on the unoptimized graph
//   BM_Harness/optimize    Optimize (default pipeline)
//   BM_Harness/oracle      Compare (bound oracle) of the fast outputs against the reference
//   BM_Harness/check       the whole per-graph check, as campaign/campaign.cc does it
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "generators/generator.h"
#include "harness/check.h"
#include "kernels/fast/executor.h"
#include "kernels/reference/reference.h"
#include "optimizer/optimizer.h"
#include "oracles/oracle.h"
#include "targets/target.h"

namespace fusefuzz {
namespace {

constexpr uint64_t kPool = 64;

struct Prepared {
  GeneratedCase c;
  RefTensorMap ref;
  TensorMap fast;
};

// The pool, built once per benchmark run (outside the timed loop).
std::vector<Prepared> Pool() {
  std::vector<Prepared> pool;
  for (uint64_t seed = 1; seed <= kPool; ++seed) {
    Prepared p;
    p.c = GenerateFromSeed(seed, GenConfig{});
    p.ref = RunReference(p.c.graph, p.c.inputs);
    p.fast = RunFast(p.c.graph, p.c.inputs);
    pool.push_back(std::move(p));
  }
  return pool;
}

void SetGraphsPerSecond(benchmark::State& state) {
  // A rate: printed as "graphs=2.1k/s" (Google Benchmark appends the "/s").
  state.counters["graphs"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_Generate(benchmark::State& state) {
  uint64_t seed = 1;
  for (auto _ : state) {
    GeneratedCase c = GenerateFromSeed(seed++, GenConfig{});
    benchmark::DoNotOptimize(c.graph.nodes.data());
  }
  SetGraphsPerSecond(state);
}

void BM_Reference(benchmark::State& state) {
  const std::vector<Prepared> pool = Pool();
  size_t i = 0;
  for (auto _ : state) {
    const Prepared& p = pool[i++ % pool.size()];
    RefTensorMap r = RunReference(p.c.graph, p.c.inputs);
    benchmark::DoNotOptimize(r.size());
  }
  SetGraphsPerSecond(state);
}

void BM_Fast(benchmark::State& state) {
  const std::vector<Prepared> pool = Pool();
  size_t i = 0;
  for (auto _ : state) {
    const Prepared& p = pool[i++ % pool.size()];
    TensorMap out = RunFast(p.c.graph, p.c.inputs);
    benchmark::DoNotOptimize(out.size());
  }
  SetGraphsPerSecond(state);
}

void BM_Optimize(benchmark::State& state) {
  const std::vector<Prepared> pool = Pool();
  size_t i = 0;
  for (auto _ : state) {
    const Prepared& p = pool[i++ % pool.size()];
    OptimizeResult r = Optimize(p.c.graph);
    benchmark::DoNotOptimize(r.graph.nodes.data());
  }
  SetGraphsPerSecond(state);
}

void BM_Oracle(benchmark::State& state) {
  const std::vector<Prepared> pool = Pool();
  size_t i = 0;
  for (auto _ : state) {
    const Prepared& p = pool[i++ % pool.size()];
    OracleResult r = Compare(p.c.graph, p.ref, p.fast);
    benchmark::DoNotOptimize(r.compared);
  }
  SetGraphsPerSecond(state);
}

void BM_Check(benchmark::State& state) {
  std::unique_ptr<Target> target = MakeEmbeddedTarget();
  const CheckOptions opts;
  uint64_t seed = 1;
  int64_t findings = 0;
  for (auto _ : state) {
    GeneratedCase c = GenerateFromSeed(seed++, GenConfig{});
    RefTensorMap ref = RunReference(c.graph, c.inputs);
    CaseOutcome out = CheckCase(*target, c.graph, c.inputs, ref, opts);
    findings += out.finding() ? 1 : 0;
  }
  SetGraphsPerSecond(state);
  state.counters["findings"] = static_cast<double>(findings);
}

BENCHMARK(BM_Generate)->Name("BM_Harness/generate");
BENCHMARK(BM_Reference)->Name("BM_Harness/reference");
BENCHMARK(BM_Fast)->Name("BM_Harness/fast");
BENCHMARK(BM_Optimize)->Name("BM_Harness/optimize");
BENCHMARK(BM_Oracle)->Name("BM_Harness/oracle");
BENCHMARK(BM_Check)->Name("BM_Harness/check");

}  // namespace
}  // namespace fusefuzz

BENCHMARK_MAIN();
