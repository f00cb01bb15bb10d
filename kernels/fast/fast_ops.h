// Internal interface of the fast kernels: one function per op family, shared only inside
// kernels/fast. No Eigen here: Eigen stays inside the .cc files that need it, so including this
// header is cheap.
//
// The compute kernels are compiled once per ISA level (docs/kernels.md, "ISA dispatch"): their
// declarations live in namespace fusefuzz::fast::FUSEFUZZ_ISA (sse2, avx2 or avx512, set by the
// build per copy), so no two copies ever define the same C++ name. ParallelFor, Pad and Concat
// are ISA-independent and compiled once.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

#ifndef FUSEFUZZ_ISA
#define FUSEFUZZ_ISA sse2  // the baseline copy (the plain library build)
#endif

namespace fusefuzz {
enum class FastIsa;  // executor.h
}  // namespace fusefuzz

namespace fusefuzz::int8 {
struct QConvProblem;  // kernels/fast/int8/qconv.h
struct QAddProblem;
}  // namespace fusefuzz::int8

namespace fusefuzz::fast {

// Runs fn(i) for i in [0, count) on up to `threads` threads (the caller's thread included).
// Tasks must write disjoint outputs; each task's result must not depend on which thread runs
// it, which is what keeps results bit-identical for any thread count.
void ParallelFor(int threads, int64_t count, const std::function<void(int64_t)>& fn);

// Every op writes its result into `y`, which the caller has shaped and sized (y.shape is the
// node's output shape, y.data has its element count) but whose values are unspecified (a reused
// buffer, docs/kernels.md "Tensor pool"): each op writes every output element.
void PadOp(const Node& n, const Tensor& x, Tensor& y);
void ConcatOp(const Node& n, const std::vector<const Tensor*>& inputs, Tensor& y);
// math.cc: Pow, Sqrt, Reciprocal, Exp, Log, Erf; ReduceMean, ReduceSum, ReduceMax, Softmax;
// Transpose.
void MathOp(const Node& n, const Tensor& x, Tensor& y);
void ReduceOp(const Node& n, const Tensor& x, Tensor& y);
void TransposeOp(const Node& n, const Tensor& x, Tensor& y);

// The table of one ISA copy's entry points: what the executor dispatches through.
struct KernelTable {
  const char* isa;
  // Conv and FusedConv, epilogue included.
  void (*conv)(const Node& n, const std::vector<const Tensor*>& inputs, int threads, Tensor& y);
  void (*norm)(const Node& n, const Tensor& x, int threads, Tensor& y);
  void (*activation)(const Node& n, const Tensor& x, int threads, Tensor& y);
  void (*binary)(const Node& n, const std::vector<const Tensor*>& inputs, int threads, Tensor& y);
  void (*pool)(const Node& n, const Tensor& x, int threads, Tensor& y);
  // Gemm (with its activation/clamp epilogue) and MatMul.
  void (*gemm)(const Node& n, const Tensor& x, int threads, Tensor& y);
  // The int8 kernels (kernels/fast/int8/qconv_fast.h says how to call them): the weights packed
  // for this copy (an owned opaque object, freed by conv_int8_free), the conv with them (null:
  // packed for this call), the quantized Add. Bit-exact with QConvLoops / QAddLoops.
  void* (*conv_int8_pack)(const int8::QConvProblem& p);
  void (*conv_int8_free)(void* packed);
  void (*conv_int8)(const int8::QConvProblem& p, const void* packed, int threads);
  void (*add_int8)(const int8::QAddProblem& p, int threads);
  void (*requantize_int32)(const int8::QConvProblem& p, const int32_t* acc, int threads);
};

// The table of the copy `isa` runs (isa.cc); kAuto: DefaultFastIsa(). InputError when the copy
// is not compiled in or this CPU cannot run it.
const KernelTable& KernelsFor(FastIsa isa);

}  // namespace fusefuzz::fast

// Each copy's only external symbol (kernel_table.cc); the avx2/avx512 ones exist only in builds
// with ISA dispatch (FUSEFUZZ_ISA_DISPATCH).
extern "C" const fusefuzz::fast::KernelTable* fusefuzz_fast_kernels_sse2();
extern "C" const fusefuzz::fast::KernelTable* fusefuzz_fast_kernels_avx2();
extern "C" const fusefuzz::fast::KernelTable* fusefuzz_fast_kernels_avx512();

namespace fusefuzz::fast::FUSEFUZZ_ISA {

// An activation with its parameters decoded to float once (shared by activation nodes and
// FusedConv epilogue steps).
struct Activation {
  Op op = Op::Relu;
  float alpha = 0, beta = 0;  // LeakyRelu/Elu alpha; HardSigmoid alpha, beta
  float lo = 0, hi = 0;       // Clip bounds
  bool gelu_tanh = false;     // Gelu approximate == "tanh"
  std::vector<float> slope;   // PRelu: [C] or [1]
};
Activation MakeActivation(Op op, const AttrMap& attrs, const ParamMap& params,
                          const std::string& where);
// Applies `a` in place to y[0, count), all of channel `channel` (used by PRelu only).
void ApplyActivation(const Activation& a, float* y, int64_t count, int64_t channel);

// One FusedConv epilogue step with its parameters decoded (pointers into the node's params and
// inputs, which must outlive it). The math of each kind is written in ir/graph.h (EpilogueKind).
struct PostOp {
  EpilogueKind kind = EpilogueKind::kActivation;
  const float* scale = nullptr;  // kScaleShift: [M]
  const float* shift = nullptr;  // kScaleShift: [M]
  Activation act;                // kActivation
  float lo = 0, hi = 0;          // kClamp
  // kAdd: the operand and its element strides against the output [N, M, OH, OW] (0 where the
  // operand broadcasts); `add_dense` when it has exactly the output shape.
  const float* add = nullptr;
  int64_t stride[4] = {0, 0, 0, 0};
  bool add_dense = false;
};

// The ordered FusedConv epilogue (oneDNN post-ops style): each step is applied, in order, to a
// finished block of the conv output while it is still in cache. A block is one row segment of
// one output plane: image n, output channel m, flattened spatial positions [p0, p1).
class Epilogue {
 public:
  Epilogue() = default;
  // `inputs` are the node's input tensors (kAdd steps refer to them by index); `out` is the
  // conv output shape [N, M, OH, OW].
  Epilogue(const Node& n, const std::vector<const Tensor*>& inputs, const Shape& out);
  bool empty() const { return ops_.empty(); }
  const std::vector<PostOp>& ops() const { return ops_; }
  void Apply(int64_t n, int64_t m, int64_t p0, int64_t p1, float* block) const;

 private:
  std::vector<PostOp> ops_;
  int64_t out_[4] = {0, 0, 0, 0};
};

// Conv / FusedConv (conv.cc: im2col + GEMM per group, 1x1 as plain GEMM; conv_depthwise.cc:
// group == C by a direct loop). `epilogue` may be empty (plain Conv). Ops write into `y` as above.
void Conv(const Node& n, const Tensor& x, const Epilogue& epilogue, int threads, Tensor& y);
// Depthwise helper used by Conv when group == C.
void ConvDepthwise(const Node& n, const Tensor& x, const Shape& out_shape, const Epilogue& epilogue,
                   int threads, float* out);

void ActivationOp(const Node& n, const Tensor& x, int threads, Tensor& y);
void NormOp(const Node& n, const Tensor& x, int threads, Tensor& y);
void BinaryOp(const Node& n, const std::vector<const Tensor*>& inputs, int threads, Tensor& y);
void PoolOp(const Node& n, const Tensor& x, int threads, Tensor& y);
// Gemm (with its activation/clamp epilogue) and MatMul (gemm.cc, Eigen GEMM).
void GemmOp(const Node& n, const Tensor& x, int threads, Tensor& y);

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA
