// The int8 patterns' QDQ graphs (bench/quant_patterns.h): each verifies (BuildQuantCase calls
// the verifier), runs on the reference with an informative integer output, is matched by the
// embedded optimizer's quantized fusions, and passes the grid oracle unfused and fused on the
// fast kernels. Small layers of every pattern's kind, so the test takes milliseconds.
#include "bench/quant_patterns.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "kernels/fast/executor.h"
#include "optimizer/optimizer.h"
#include "oracles/oracle.h"

namespace fusefuzz {
namespace {

// One small layer per pattern kind: 3x3 dense, 1x1 widening, 3x3 depthwise.
std::vector<Int8BenchCase> SmallCases() {
  const QLayer k3{"test_k3", 8, 6, 12, 3, 1}, k1{"test_k1", 6, 5, 10, 1, 1},
      dw{"test_dw", 8, 6, 8, 3, 8};
  return {{QPattern::kConvRequant, k3},        {QPattern::kConvRequant, k1},
          {QPattern::kConvBnReluRequant, k3},  {QPattern::kConvAddReluRequant, k3},
          {QPattern::kConvAddReluRequant, k1}, {QPattern::kDwRelu6Requant, dw}};
}

constexpr QuantType kTypes[] = {QuantType::kUint8, QuantType::kInt8};

std::multiset<std::string> Rules(const OptimizeResult& r) {
  std::multiset<std::string> s;
  for (const Rewrite& w : r.rewrites) s.insert(w.rule);
  return s;
}

TEST(QuantPatterns, EveryBenchCaseHasAUniqueKernelRowName) {
  std::set<std::string> names;
  for (const Int8BenchCase& c : Int8BenchCases()) {
    const std::string name = QuantCaseName(c);
    EXPECT_EQ(name.rfind("BM_FusionInt8/", 0), 0u) << name;
    EXPECT_TRUE(names.insert(name).second) << "duplicate " << name;
  }
  EXPECT_EQ(names.size(), 20u);
  EXPECT_TRUE(names.count("BM_FusionInt8/dw_relu6_requant/mobilenetv2_dw/N1_C144_H56_K3_G144"));
  EXPECT_TRUE(names.count("BM_FusionInt8/conv_add_relu_requant/resnet18_conv3_x/N1_C128_H28_K3"));
}

TEST(QuantPatterns, Deterministic) {
  for (const Int8BenchCase& c : SmallCases()) {
    const BuiltCase a = BuildQuantCase(c), b = BuildQuantCase(c);
    EXPECT_EQ(a.graph, b.graph) << QuantCaseName(c);
    EXPECT_EQ(a.inputs, b.inputs) << QuantCaseName(c);
    EXPECT_NE(BuildQuantCase(c, QuantType::kInt8).inputs, a.inputs) << QuantCaseName(c);
  }
  EXPECT_EQ(QuantCaseName(SmallCases()[0], QuantType::kInt8),
            "BM_FusionInt8/conv_requant/test_k3/N1_C8_H6_K3_M12_I8");
}

TEST(QuantPatterns, ReferenceGivesInformativeIntegers) {
  for (QuantType type : kTypes) {
    for (const Int8BenchCase& c : SmallCases()) {
      SCOPED_TRACE(QuantCaseName(c, type));
      const BuiltCase bc = BuildQuantCase(c, type);
      ASSERT_EQ(bc.graph.outputs, std::vector<std::string>{"q_y"});
      const RefTensorMap ref = RunReference(bc.graph, bc.inputs);
      const RefTensor& y = ref.at("q_y");
      ASSERT_FALSE(y.grid_t.empty()) << "the output is not judged on the grid";
      std::set<double> distinct;
      for (double v : y.value) {
        ASSERT_EQ(v, std::nearbyint(v));
        ASSERT_GE(v, double(QMin(type)));
        ASSERT_LE(v, double(QMax(type)));
        distinct.insert(v);
      }
      // Calibrated on these very inputs: the output spreads over the byte range.
      EXPECT_GT(distinct.size(), 20u);
      // After Relu/Relu6 the calibrated zero point is qmin (what the engines' fusions need).
      const Node& q = bc.graph.nodes.back();
      EXPECT_EQ(q.quant.at("y").type, type);
      if (c.pattern != QPattern::kConvRequant) {
        EXPECT_EQ(q.quant.at("y").zero_point[0], QMin(type));
      }
    }
  }
}

TEST(QuantPatterns, TheQuantizedFusionsMatchEachPattern) {
  for (QuantType type : kTypes) {
    for (const Int8BenchCase& c : SmallCases()) {
      SCOPED_TRACE(QuantCaseName(c, type));
      const BuiltCase bc = BuildQuantCase(c, type);
      const OptimizeResult r = Optimize(bc.graph);
      const std::multiset<std::string> rules = Rules(r);
      EXPECT_EQ(rules.count("qdq-conv-fuse"), 1u);
      const bool residual = c.pattern == QPattern::kConvAddReluRequant;
      EXPECT_EQ(rules.count("qdq-add-fuse"), residual ? 1u : 0u);
      // Nothing float is left: one QLinearConv (and one QLinearAdd with its Relu).
      std::multiset<Op> ops;
      for (const Node& n : r.graph.nodes) ops.insert(n.op);
      EXPECT_EQ(ops.count(Op::QLinearConv), 1u);
      EXPECT_EQ(ops.count(Op::QLinearAdd), residual ? 1u : 0u);
      EXPECT_EQ(r.graph.nodes.size(), residual ? 2u : 1u);
    }
  }
}

TEST(QuantPatterns, UnfusedAndFusedPassTheGridOracle) {
  for (QuantType type : kTypes) {
    for (const Int8BenchCase& c : SmallCases()) {
      SCOPED_TRACE(QuantCaseName(c, type));
      const BuiltCase bc = BuildQuantCase(c, type);
      const RefTensorMap ref = RunReference(bc.graph, bc.inputs);
      const Graph fused = Optimize(bc.graph).graph;
      for (const Graph* g : {&bc.graph, &fused}) {
        const OracleResult o = Compare(bc.graph, ref, RunFast(*g, bc.inputs));
        EXPECT_EQ(o.verdict, Verdict::kPass) << o.detail;
        EXPECT_GT(o.grid.compared, 0);
        EXPECT_GT(o.grid.informative, 0);
      }
    }
  }
}

}  // namespace
}  // namespace fusefuzz
