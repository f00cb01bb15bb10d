// Pass "batch": every graph input's batch (dim 0) to 1, keeping the first sample; constants with
// a batch dim are cropped to match (RefitConstants).
#include "reduce/reduce.h"

namespace fusefuzz {
namespace {

class BatchPass final : public ReducePass {
 public:
  std::string_view name() const override { return "batch"; }
  int64_t Targets(ReduceContext& ctx, int) const override {
    for (const auto& in : ctx.current().graph.inputs) {
      if (in.shape.size() == 4 && in.shape[0] > 1) return 1;
    }
    return 0;
  }
  std::optional<ReduceCase> Apply(ReduceContext& ctx, int, int64_t, int64_t) const override {
    ReduceCase c = ctx.current();
    for (auto& in : c.graph.inputs) {
      if (in.shape.size() != 4 || in.shape[0] == 1) continue;
      in.shape[0] = 1;
      Tensor& t = c.inputs.at(in.name);
      t = SliceDim(t, 0, 0, 1);
    }
    if (!RefitConstants(c.graph)) return std::nullopt;
    return c;
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakeBatchPass() { return std::make_unique<BatchPass>(); }

}  // namespace fusefuzz
