#include "reduce/value_pass.h"

#include <cmath>

namespace fusefuzz {
namespace {

constexpr int kTensorModes = 3;

float TensorConstant(const Tensor& t, int mode) {
  if (mode == 0) return 0.0f;
  if (mode == 1) return 1.0f;
  double sum = 0, mag = 0;
  int64_t finite = 0;
  for (float v : t.data) {
    if (!std::isfinite(v)) continue;
    sum += v;
    mag += std::fabs(v);
    ++finite;
  }
  if (finite == 0 || mag == 0) return 0.0f;
  const float m = static_cast<float>(mag / static_cast<double>(finite));
  return Simplify(sum < 0 ? -m : m, ValueStep::kPowerOfTwo);
}

bool TensorTarget(const Tensor& t, int mode) {
  if (t.data.empty()) return false;
  const float c = TensorConstant(t, mode);
  int64_t before = 0;
  bool differs = false;
  for (float v : t.data) {
    before += ValueCost(v);
    differs = differs || !(v == c && std::signbit(v) == std::signbit(c));
  }
  return differs && ValueCost(c) * t.size() < before;
}

bool ElementTarget(float v, ValueStep step) { return ValueCost(Simplify(v, step)) < ValueCost(v); }

// Calls f(tensor, element index or -1) for every target of `mode`, in order.
template <class F>
void ForEachTarget(const std::vector<Tensor*>& tensors, int mode, F f) {
  for (Tensor* t : tensors) {
    if (mode < kTensorModes) {
      if (TensorTarget(*t, mode)) f(*t, -1);
      continue;
    }
    const ValueStep step = kValueSteps[mode - kTensorModes];
    for (size_t i = 0; i < t->data.size(); ++i) {
      if (ElementTarget(t->data[i], step)) f(*t, static_cast<int64_t>(i));
    }
  }
}

}  // namespace

std::string ValuePass::mode_name(int mode) const {
  static const char* kTensor[] = {"tensor-zero", "tensor-one", "tensor-pow2"};
  if (mode < kTensorModes) return kTensor[mode];
  return "element-" + std::string(ValueStepName(kValueSteps[mode - kTensorModes]));
}

int64_t ValuePass::Targets(ReduceContext& ctx, int mode) const {
  // Read only: Tensors() takes a mutable case so that Apply can share it.
  auto& c = const_cast<ReduceCase&>(ctx.current());
  int64_t n = 0;
  ForEachTarget(Tensors(c), mode, [&n](Tensor&, int64_t) { ++n; });
  return n;
}

std::optional<ReduceCase> ValuePass::Apply(ReduceContext& ctx, int mode, int64_t begin,
                                           int64_t end) const {
  ReduceCase c = ctx.current();
  // Decide every target on the unmodified values first, then edit.
  std::vector<std::pair<Tensor*, int64_t>> chosen;
  int64_t k = 0;
  ForEachTarget(Tensors(c), mode, [&](Tensor& t, int64_t i) {
    if (k >= begin && k < end) chosen.emplace_back(&t, i);
    ++k;
  });
  if (chosen.empty()) return std::nullopt;
  for (auto& [t, i] : chosen) {
    if (i < 0) {
      const float v = TensorConstant(*t, mode);
      for (float& x : t->data) x = v;
    } else {
      float& x = t->data[static_cast<size_t>(i)];
      x = Simplify(x, kValueSteps[mode - kTensorModes]);
    }
  }
  return c;
}

}  // namespace fusefuzz
