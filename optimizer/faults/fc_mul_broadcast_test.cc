// fc-mul-broadcast (tensorflow #39572): visible when the Mul constant varies along rows ([M, 1],
// [M, N]); invisible for a scalar or an [N] constant, which really are per output channel.
#include <gtest/gtest.h>

#include "optimizer/faults/fault_testing.h"

namespace fusefuzz::testing {
namespace {

Graph GemmMul(Rng& rng, Shape c) {
  return MakeGraph({In("x", {4, 6})},
                   {MakeNode(Op::Gemm, "fc", {"x"}, "y", {{"transB", int64_t{1}}},
                             {{"B", RandTensor(rng, {3, 6})}, {"C", RandTensor(rng, {3})}}),
                    MakeNode(Op::Mul, "mul", {"y"}, "z", {}, {{"B", RandTensor(rng, c, 0.5, 2)}})},
                   {"z"});
}

TEST(FcMulBroadcast, VisibleForAConstantAlongRows) {
  Rng rng(1);
  for (Shape c : {Shape{4, 1}, Shape{4, 3}}) {
    Graph g = GemmMul(rng, c);
    ExpectFaultVisible(g, RandInputs(rng, g), "fc-mul-broadcast");
  }
}

TEST(FcMulBroadcast, InvisibleForScalarOrPerOutputConstant) {
  Rng rng(2);
  for (Shape c : {Shape{1}, Shape{3}, Shape{1, 3}}) {
    Graph g = GemmMul(rng, c);
    ExpectFaultInvisible(g, RandInputs(rng, g), "fc-mul-broadcast", true);
  }
}

}  // namespace
}  // namespace fusefuzz::testing
