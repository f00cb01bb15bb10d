// The kernel table of this ISA copy (compiled once per ISA level like the kernels it lists):
// the executor picks one table at start-up and calls only through it.
#include "kernels/fast/fast_ops.h"

#define FUSEFUZZ_ISA_CAT2(a, b) a##b
#define FUSEFUZZ_ISA_CAT(a, b) FUSEFUZZ_ISA_CAT2(a, b)
#define FUSEFUZZ_ISA_STR2(a) #a
#define FUSEFUZZ_ISA_STR(a) FUSEFUZZ_ISA_STR2(a)

namespace fusefuzz::fast::FUSEFUZZ_ISA {
namespace {

void ConvEntry(const Node& n, const std::vector<const Tensor*>& inputs, int threads, Tensor& y) {
  Conv(n, *inputs[0], Epilogue(n, inputs, y.shape), threads, y);
}

constexpr KernelTable kTable{FUSEFUZZ_ISA_STR(FUSEFUZZ_ISA),
                             &ConvEntry,
                             &NormOp,
                             &ActivationOp,
                             &BinaryOp,
                             &PoolOp,
                             &GemmOp};

}  // namespace
}  // namespace fusefuzz::fast::FUSEFUZZ_ISA

extern "C" const fusefuzz::fast::KernelTable* FUSEFUZZ_ISA_CAT(fusefuzz_fast_kernels_,
                                                               FUSEFUZZ_ISA)() {
  return &fusefuzz::fast::FUSEFUZZ_ISA::kTable;
}
