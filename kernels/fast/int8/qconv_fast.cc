// The int8 entry points: the kernel table of the requested ISA copy, nothing else.
#include "kernels/fast/int8/qconv_fast.h"

#include "kernels/fast/fast_ops.h"

namespace fusefuzz::int8 {

void QConv(const QConvProblem& p, int threads, FastIsa isa) {
  fast::KernelsFor(isa).conv_int8(p, nullptr, threads);
}

void QAdd(const QAddProblem& p, int threads, FastIsa isa) {
  fast::KernelsFor(isa).add_int8(p, threads);
}

void QRequantize(const QConvProblem& p, const int32_t* acc, int threads, FastIsa isa) {
  fast::KernelsFor(isa).requantize_int32(p, acc, threads);
}

QConvPlan::QConvPlan(const QConvProblem& p, FastIsa isa)
    : kernels_(&fast::KernelsFor(isa)), packed_(kernels_->conv_int8_pack(p)) {}

QConvPlan::~QConvPlan() { kernels_->conv_int8_free(packed_); }

void QConvPlan::Run(const QConvProblem& p, int threads) const {
  kernels_->conv_int8(p, packed_, threads);
}

}  // namespace fusefuzz::int8
