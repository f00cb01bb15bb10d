// Pass "outputs": drops graph outputs (at least one stays); the nodes only they needed die with
// them in the engine's dead-code cleanup.
#include "reduce/reduce.h"

namespace fusefuzz {
namespace {

class OutputsPass final : public ReducePass {
 public:
  std::string_view name() const override { return "outputs"; }
  int64_t Targets(ReduceContext& ctx, int) const override {
    const auto n = static_cast<int64_t>(ctx.current().graph.outputs.size());
    return n > 1 ? n : 0;
  }
  std::optional<ReduceCase> Apply(ReduceContext& ctx, int, int64_t begin,
                                  int64_t end) const override {
    ReduceCase c = ctx.current();
    auto& outs = c.graph.outputs;
    if (end - begin >= static_cast<int64_t>(outs.size())) return std::nullopt;
    outs.erase(outs.begin() + begin, outs.begin() + end);
    return c;
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakeOutputsPass() { return std::make_unique<OutputsPass>(); }

}  // namespace fusefuzz
