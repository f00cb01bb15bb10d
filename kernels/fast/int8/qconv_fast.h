// The fast int8 kernels' entry points: the convolution and Add of qconv.h at the process's ISA
// level (DefaultFastIsa: FUSEFUZZ_ISA or the best the CPU runs; docs/kernels.md "Int8"), bit for
// bit what QConvLoops / QAddLoops compute, for any problem the loops accept (any geometry, both
// storage types, residual or not) and any thread count.
//
//   int8::QConv(p, threads);            // packs p's weights, runs, frees the packing
//   int8::QConvPlan plan(p);            // packs once (a graph's constant weights) ...
//   plan.Run(p, threads);               // ... and runs many times: x, residual, y may change;
//                                       // weights, bias, geometry, x_type, x_zero_point may not
//   int8::QAdd(p, threads);
//   p.y_int32 = acc; int8::QConv(p); int8::QRequantize(p, acc);   // unfused: the same bytes
//
// Which instructions run: AVX-512 VNNI (vpdpbusd) where the CPU has it, else pmaddwd on
// int16 pairs (AVX-512BW, AVX2, SSE2); depthwise (c / group == 1) by its own row kernel.
#pragma once

#include "kernels/fast/executor.h"
#include "kernels/fast/int8/qconv.h"

namespace fusefuzz::fast {
struct KernelTable;
}  // namespace fusefuzz::fast

namespace fusefuzz::int8 {

// kAuto: DefaultFastIsa(); another level must be available (InputError otherwise), as tests
// and benchmarks pick one.
void QConv(const QConvProblem& p, int threads = 1, FastIsa isa = FastIsa::kAuto);
void QAdd(const QAddProblem& p, int threads = 1, FastIsa isa = FastIsa::kAuto);
// QRequantizeLoops, fast: the requantization as its own pass (an unfused pipeline).
void QRequantize(const QConvProblem& p, const int32_t* acc, int threads = 1,
                 FastIsa isa = FastIsa::kAuto);

class QConvPlan {
 public:
  explicit QConvPlan(const QConvProblem& p, FastIsa isa = FastIsa::kAuto);
  ~QConvPlan();
  QConvPlan(const QConvPlan&) = delete;
  QConvPlan& operator=(const QConvPlan&) = delete;
  // InputError if p's geometry, x_type or x_zero_point differ from the packed problem's.
  void Run(const QConvProblem& p, int threads = 1) const;

 private:
  const fast::KernelTable* kernels_;
  void* packed_;
};

}  // namespace fusefuzz::int8
