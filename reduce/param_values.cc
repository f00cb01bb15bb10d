// Pass "param-values": simplifies node params (conv W and B, BN statistics, binary constants,
// PRelu slopes, epilogue params) along the value ladder of value_pass.h.
#include "reduce/value_pass.h"

namespace fusefuzz {
namespace {

class ParamValuesPass final : public ValuePass {
 public:
  std::string_view name() const override { return "param-values"; }

 protected:
  std::vector<Tensor*> Tensors(ReduceCase& c) const override {
    std::vector<Tensor*> out;
    for (Node& n : c.graph.nodes) {
      for (auto& [name, t] : n.params) out.push_back(&t);
      for (auto& step : n.epilogue) {
        for (auto& [name, t] : step.params) out.push_back(&t);
      }
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakeParamValuesPass() { return std::make_unique<ParamValuesPass>(); }

}  // namespace fusefuzz
