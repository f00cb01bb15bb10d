// The value ladder shared by the param and input value passes (Hypothesis-style shrinking of
// numbers): whole tensors to a constant first (0, then 1, then the power of two nearest their
// mean magnitude), then single elements to 0, to +-1, to the nearest power of two, to two
// significant bits. A target is a tensor or element whose total ValueCost strictly drops.
#pragma once

#include <vector>

#include "reduce/reduce.h"

namespace fusefuzz {

class ValuePass : public ReducePass {
 public:
  int modes() const override { return 7; }
  std::string mode_name(int mode) const override;
  int64_t Targets(ReduceContext& ctx, int mode) const override;
  std::optional<ReduceCase> Apply(ReduceContext& ctx, int mode, int64_t begin,
                                  int64_t end) const override;

 protected:
  // The tensors this pass edits, in a deterministic order.
  virtual std::vector<Tensor*> Tensors(ReduceCase& c) const = 0;
};

}  // namespace fusefuzz
