// Pass "input-values": simplifies graph input tensors (including those made by the cut pass
// from reference values) along the value ladder of value_pass.h.
#include "reduce/value_pass.h"

namespace fusefuzz {
namespace {

class InputValuesPass final : public ValuePass {
 public:
  std::string_view name() const override { return "input-values"; }

 protected:
  std::vector<Tensor*> Tensors(ReduceCase& c) const override {
    std::vector<Tensor*> out;
    for (auto& [name, t] : c.inputs) out.push_back(&t);
    return out;
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakeInputValuesPass() { return std::make_unique<InputValuesPass>(); }

}  // namespace fusefuzz
