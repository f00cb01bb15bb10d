// The decomposed-pattern families (generators/gen_decomposed.cc): each builds valid graphs, with
// its building blocks, that the reference runs to finite values.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "generators/generator.h"
#include "ir/verifier.h"
#include "kernels/reference/reference.h"

namespace fusefuzz {
namespace {

GenConfig Only(Pattern p) {
  GenConfig cfg;
  for (auto& [q, w] : cfg.pattern_weights) w = q == p ? 1.0 : 0.0;
  cfg.limits.min_nodes = 10;
  cfg.limits.max_nodes = 12;
  return cfg;
}

TEST(Decomposed, EachPatternBuildsItsBuildingBlocks) {
  const std::map<Pattern, std::set<Op>> want = {
      {Pattern::kLayerNormDecomposed, {Op::ReduceMean, Op::Sub, Op::Sqrt}},
      {Pattern::kRmsNormDecomposed, {Op::ReduceMean, Op::Sqrt}},
      {Pattern::kGeluErfDecomposed, {Op::Erf}},
      {Pattern::kGeluTanhDecomposed, {Op::Tanh}},
      {Pattern::kQuickGeluDecomposed, {Op::Sigmoid}},
      {Pattern::kSiluDecomposed, {Op::Mul}},
      {Pattern::kHardSwishDecomposed, {Op::Mul}},
      {Pattern::kMishDecomposed, {Op::Exp, Op::Log, Op::Tanh}},
      {Pattern::kSoftmaxDecomposed, {Op::ReduceMax, Op::Sub, Op::Exp, Op::ReduceSum}},
      {Pattern::kMatMulChain, {Op::Transpose, Op::MatMul, Op::Softmax}},
  };
  for (const auto& [p, ops] : want) {
    const GenConfig cfg = Only(p);
    std::set<Op> seen;
    int finite = 0;
    const int kSeeds = 60;
    for (uint64_t seed = 0; seed < kSeeds; ++seed) {
      GeneratedCase c = GenerateFromSeed(seed, cfg);
      ASSERT_NO_THROW(VerifyGraph(c.graph)) << PatternName(p) << " seed " << seed;
      for (const Node& n : c.graph.nodes) seen.insert(n.op);
      bool all = true;
      for (const auto& [name, t] : RunReference(c.graph, c.inputs)) {
        for (double v : t.value) all &= std::isfinite(v);
      }
      finite += all;
    }
    for (Op op : ops)
      EXPECT_TRUE(seen.count(op)) << PatternName(p) << " never built " << OpName(op);
    EXPECT_GT(finite, kSeeds * 9 / 10) << PatternName(p);
  }
}

TEST(Decomposed, LayerNormVariantsAppear) {
  // Pow and Mul squares, Div and Reciprocal normalizations, and a gamma that is a graph input.
  const GenConfig cfg = Only(Pattern::kLayerNormDecomposed);
  std::set<Op> seen;
  int operand_inputs = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    GeneratedCase c = GenerateFromSeed(seed, cfg);
    for (const Node& n : c.graph.nodes) seen.insert(n.op);
    operand_inputs += c.graph.inputs.size() > 1;
  }
  for (Op op : {Op::Pow, Op::Reciprocal, Op::Div}) EXPECT_TRUE(seen.count(op)) << OpName(op);
  EXPECT_GT(operand_inputs, 0);
}

}  // namespace
}  // namespace fusefuzz
