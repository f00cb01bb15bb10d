// Every activation of the vocabulary with non-default attrs/params, for the activation tests.
#pragma once

#include <vector>

#include "optimizer/test_util.h"

namespace fusefuzz::testing {

// `rank`: of the activation's input; the PRelu slope is per channel ([C, 1, 1] for rank 4, [C]
// for rank 2).
inline std::vector<Node> AllActivations(Rng& rng, const std::string& in, const std::string& out,
                                        int64_t channels, size_t rank = 4) {
  std::vector<Node> v;
  auto add = [&](Op op, AttrMap a = {}, ParamMap p = {}) {
    v.push_back(MakeNode(op, "act", {in}, out, std::move(a), std::move(p)));
  };
  add(Op::Relu);
  add(Op::Relu6);
  add(Op::Clip, {{"min", -0.5}, {"max", 0.75}});
  add(Op::LeakyRelu, {{"alpha", 0.2}});
  Shape per_channel(rank - 1, 1);
  per_channel[0] = channels;
  add(Op::PRelu, {}, {{"slope", RandTensor(rng, per_channel, -1, 1)}});
  add(Op::PRelu, {}, {{"slope", Tensor({1}, 0.3f)}});
  add(Op::Elu, {{"alpha", 0.7}});
  add(Op::Sigmoid);
  add(Op::HardSigmoid, {{"alpha", 0.3}, {"beta", 0.4}});
  add(Op::Tanh);
  add(Op::Silu);
  add(Op::HardSwish);
  add(Op::Gelu);
  add(Op::Gelu, {{"approximate", std::string("tanh")}});
  return v;
}

}  // namespace fusefuzz::testing
