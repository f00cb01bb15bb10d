// The kernel table of this ISA copy (compiled once per ISA level like the kernels it lists):
// the executor picks one table at start-up and calls only through it.
#include <memory>

#include "kernels/fast/fast_ops.h"
#include "kernels/fast/int8/qkernels.h"

#define FUSEFUZZ_ISA_CAT2(a, b) a##b
#define FUSEFUZZ_ISA_CAT(a, b) FUSEFUZZ_ISA_CAT2(a, b)
#define FUSEFUZZ_ISA_STR2(a) #a
#define FUSEFUZZ_ISA_STR(a) FUSEFUZZ_ISA_STR2(a)

namespace fusefuzz::fast::FUSEFUZZ_ISA {
namespace {

void ConvEntry(const Node& n, const std::vector<const Tensor*>& inputs, int threads, Tensor& y) {
  Conv(n, *inputs[0], Epilogue(n, inputs, y.shape), threads, y);
}

void* QConvPackEntry(const int8::QConvProblem& p) { return q8::Pack(p); }
void QConvFreeEntry(void* packed) { delete static_cast<q8::QPacked*>(packed); }
void QConvEntry(const int8::QConvProblem& p, const void* packed, int threads) {
  if (packed) return q8::Run(*static_cast<const q8::QPacked*>(packed), p, threads);
  const std::unique_ptr<q8::QPacked> own(q8::Pack(p));
  q8::Run(*own, p, threads);
}

constexpr KernelTable kTable{FUSEFUZZ_ISA_STR(FUSEFUZZ_ISA),
                             &ConvEntry,
                             &NormOp,
                             &ActivationOp,
                             &BinaryOp,
                             &PoolOp,
                             &GemmOp,
                             &QConvPackEntry,
                             &QConvFreeEntry,
                             &QConvEntry,
                             &q8::QAddKernel,
                             &q8::QRequantizeKernel};

}  // namespace
}  // namespace fusefuzz::fast::FUSEFUZZ_ISA

extern "C" const fusefuzz::fast::KernelTable* FUSEFUZZ_ISA_CAT(fusefuzz_fast_kernels_,
                                                               FUSEFUZZ_ISA)() {
  return &fusefuzz::fast::FUSEFUZZ_ISA::kTable;
}
