#include <gtest/gtest.h>

#include "ir/quant.h"
#include "ir/verifier.h"
#include "optimizer/test_util.h"
#include "reduce/reduce.h"

namespace fusefuzz::testing {
namespace {

// x -> Q(per axis, u8) -> DQ(same) = "y".
ReduceCase QdqCase() {
  QuantParams p;
  p.type = QuantType::kUint8;
  p.scale = {0.3f, 0.05f};
  p.zero_point = {7, 128};
  p.axis = 1;
  Node q = MakeNode(Op::QuantizeLinear, "q", {"x"}, "xq");
  q.quant["y"] = p;
  Node dq = MakeNode(Op::DequantizeLinear, "dq", {"xq"}, "y");
  dq.quant["x"] = p;
  Graph g = MakeGraph({In("x", {1, 2, 2, 2})}, {q, dq}, {"y"});
  Rng rng(3);
  return ReduceCase{g, RandInputs(rng, g)};
}

std::optional<ReduceCase> RunPass(const ReducePass& p, const ReduceCase& c, int mode) {
  ReduceContext ctx(c);
  const int64_t n = p.Targets(ctx, mode);
  if (n == 0) return std::nullopt;
  return p.Apply(ctx, mode, 0, n);
}

TEST(QuantParamsPass, EachModeSimplifiesAndShrinksTheCase) {
  auto pass = MakeQuantParamsPass();
  ASSERT_EQ(pass->modes(), 4);
  const ReduceCase c = QdqCase();
  VerifyGraph(c.graph);
  for (int mode = 0; mode < 4; ++mode) {
    std::optional<ReduceCase> r = RunPass(*pass, c, mode);
    ASSERT_TRUE(r) << pass->mode_name(mode);
    VerifyGraph(r->graph);
    EXPECT_LT(SizeOf(*r), SizeOf(c)) << pass->mode_name(mode);
    const QuantParams& y = r->graph.nodes[0].quant.at("y");
    switch (mode) {
      case 0:
        EXPECT_FALSE(y.PerAxis());
        EXPECT_EQ(y.scale, std::vector<double>{double(0.3f)});
        break;
      case 1:
      case 2:  // uint8: qmin is 0
        EXPECT_EQ(y.zero_point, (std::vector<int64_t>{0, 0}));
        break;
      case 3:
        EXPECT_EQ(y.scale, (std::vector<double>{0.25, 0.0625}));
        break;
    }
  }
}

TEST(QuantParamsPass, NothingToDoOnTheSimplestParameters) {
  ReduceCase c = QdqCase();
  for (Node& n : c.graph.nodes) {
    for (auto& [role, q] : n.quant) q = PerTensor(QuantType::kUint8, 0.5, 0);
  }
  auto pass = MakeQuantParamsPass();
  for (int mode = 0; mode < 4; ++mode) {
    ReduceContext ctx(c);
    EXPECT_EQ(pass->Targets(ctx, mode), 0) << pass->mode_name(mode);
  }
}

}  // namespace
}  // namespace fusefuzz::testing
