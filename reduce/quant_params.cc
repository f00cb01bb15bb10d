// Pass "quant-params": quantization parameters toward the simplest that keep the finding:
// per axis -> per tensor (channel 0's scale and zero point), zero point -> 0, zero point ->
// qmin, scale -> the nearest power of two. A change that leaves a declared grid false (a conv's
// W no longer on it) fails verification and costs no query. CaseSize counts these parameters
// (case_size.cc), so each step is a strict decrease.
#include <string>
#include <vector>

#include "ir/quant.h"
#include "reduce/reduce.h"

namespace fusefuzz {
namespace {

struct QuantTarget {
  size_t node;
  std::string role;
};

enum Mode { kPerTensor, kZeroPointZero, kZeroPointQmin, kScalePowerOfTwo, kModes };

// q simplified by `mode`; false when that changes nothing.
bool SimplifyParams(QuantParams& q, int mode) {
  switch (mode) {
    case kPerTensor:
      if (!q.PerAxis()) return false;
      q.scale.resize(1);
      q.zero_point.resize(1);
      q.axis = -1;
      return true;
    case kZeroPointZero:
    case kZeroPointQmin: {
      if (mode == kZeroPointQmin && q.type == QuantType::kInt32) return false;
      const int64_t want = mode == kZeroPointZero ? 0 : q.qmin();
      bool changed = false;
      for (int64_t& z : q.zero_point) {
        changed = changed || z != want;
        z = want;
      }
      return changed;
    }
    case kScalePowerOfTwo: {
      bool changed = false;
      for (double& s : q.scale) {
        const float p = Simplify(static_cast<float>(s), ValueStep::kPowerOfTwo);
        if (p != 0 && ValueCost(p) < ValueCost(static_cast<float>(s))) {
          s = p;
          changed = true;
        }
      }
      return changed;
    }
  }
  return false;
}

std::vector<QuantTarget> Eligible(const Graph& g, int mode) {
  std::vector<QuantTarget> out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const auto& [role, q] : g.nodes[i].quant) {
      QuantParams copy = q;
      if (SimplifyParams(copy, mode)) out.push_back({i, role});
    }
  }
  return out;
}

class QuantParamsPass final : public ReducePass {
 public:
  std::string_view name() const override { return "quant-params"; }
  int modes() const override { return kModes; }
  std::string mode_name(int mode) const override {
    switch (mode) {
      case kPerTensor:
        return "per-tensor";
      case kZeroPointZero:
        return "zero-point-0";
      case kZeroPointQmin:
        return "zero-point-qmin";
      default:
        return "scale-power-of-two";
    }
  }
  int64_t Targets(ReduceContext& ctx, int mode) const override {
    return static_cast<int64_t>(Eligible(ctx.current().graph, mode).size());
  }
  std::optional<ReduceCase> Apply(ReduceContext& ctx, int mode, int64_t begin,
                                  int64_t end) const override {
    const std::vector<QuantTarget> eligible = Eligible(ctx.current().graph, mode);
    ReduceCase c = ctx.current();
    for (int64_t t = begin; t < end; ++t) {
      const QuantTarget& q = eligible[static_cast<size_t>(t)];
      SimplifyParams(c.graph.nodes[q.node].quant.at(q.role), mode);
    }
    return c;
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakeQuantParamsPass() { return std::make_unique<QuantParamsPass>(); }

}  // namespace fusefuzz
