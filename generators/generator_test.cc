#include "generators/generator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "ir/error.h"
#include "ir/json_io.h"
#include "ir/verifier.h"
#include "kernels/reference/reference.h"

namespace fusefuzz {
namespace {

// Verifies the case and its input map; returns a failure message or "".
std::string CheckCase(const GeneratedCase& c, const GenConfig& cfg) {
  try {
    VerifyGraph(c.graph);
  } catch (const InputError& e) {
    return std::string("invalid graph: ") + e.what() + "\n" + WriteGraph(c.graph, {true, 1});
  }
  int64_t n = static_cast<int64_t>(c.graph.nodes.size());
  if (n < cfg.limits.min_nodes || n > cfg.limits.max_nodes) {
    return "node count " + std::to_string(n) + " out of range";
  }
  if (c.graph.outputs.empty() || int64_t(c.graph.outputs.size()) > cfg.limits.max_outputs) {
    return "bad output count";
  }
  if (c.inputs.size() != c.graph.inputs.size()) return "inputs map does not match graph inputs";
  for (const auto& in : c.graph.inputs) {
    auto it = c.inputs.find(in.name);
    if (it == c.inputs.end() || it->second.shape != in.shape ||
        it->second.size() != NumElements(in.shape)) {
      return "input '" + in.name + "' missing or mis-shaped";
    }
  }
  for (const auto& node : c.graph.nodes) {
    if (!cfg.allowed_ops.count(node.op)) return "op not allowed: " + std::string(OpName(node.op));
  }
  return "";
}

TEST(Generator, FiveThousandSeedsAllVerify) {
  GenConfig cfg;
  for (uint64_t seed = 0; seed < 5000; ++seed) {
    GeneratedCase c = GenerateFromSeed(seed, cfg);
    std::string err = CheckCase(c, cfg);
    ASSERT_EQ(err, "") << "seed " << seed;
    for (const auto& [name, t] : c.inputs) {
      for (float v : t.data) ASSERT_TRUE(std::isfinite(v)) << "seed " << seed;
    }
  }
}

TEST(Generator, SameSeedSameCase) {
  GenConfig cfg;
  for (uint64_t seed : {1u, 17u, 123456u}) {
    GeneratedCase a = GenerateFromSeed(seed, cfg), b = GenerateFromSeed(seed, cfg);
    EXPECT_EQ(WriteGraph(a.graph), WriteGraph(b.graph));
    EXPECT_EQ(WriteTensors(a.inputs), WriteTensors(b.inputs));
  }
  EXPECT_NE(WriteGraph(GenerateFromSeed(1, cfg).graph), WriteGraph(GenerateFromSeed(2, cfg).graph));
}

TEST(Generator, NamesAreDeterministicAndSequential) {
  GeneratedCase c = GenerateFromSeed(5, GenConfig{});
  for (size_t i = 0; i < c.graph.nodes.size(); ++i) {
    // (prefix and number compared apart: "n" + std::to_string(i) trips g++ 12 -Wrestrict)
    const std::string num = std::to_string(i);
    EXPECT_EQ(c.graph.nodes[i].name.substr(0, 1), "n");
    EXPECT_EQ(c.graph.nodes[i].name.substr(1), num);
    EXPECT_EQ(c.graph.nodes[i].output.substr(0, 1), "v");
    EXPECT_EQ(c.graph.nodes[i].output.substr(1), num);
  }
  EXPECT_EQ(c.graph.inputs[0].name, "x0");
}

TEST(Generator, ReplayOfRecordedTraceReproducesTheCase) {
  GenConfig cfg;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    SeededSource s(seed);
    GeneratedCase a = Generate(s, cfg);
    ReplaySource r(s.trace());
    GeneratedCase b = Generate(r, cfg);
    ASSERT_EQ(WriteGraph(a.graph), WriteGraph(b.graph)) << seed;
    ASSERT_EQ(WriteTensors(a.inputs), WriteTensors(b.inputs)) << seed;
    EXPECT_EQ(r.trace(), s.trace());
  }
}

TEST(Generator, BytesSourceNeverFailsAndGivesValidGraphs) {
  GenConfig cfg;
  std::vector<std::vector<uint8_t>> inputs = {{}, {0}, {0xff}, {1, 2, 3}};
  SeededSource rnd(2024);
  for (int i = 0; i < 400; ++i) {
    std::vector<uint8_t> v(static_cast<size_t>(rnd.Int(0, 300)));
    for (auto& b : v) b = static_cast<uint8_t>(rnd.Int(0, 255));
    inputs.push_back(std::move(v));
  }
  inputs.push_back(std::vector<uint8_t>(64, 0xff));
  for (const auto& bytes : inputs) {
    BytesSource src(bytes.data(), bytes.size());
    GeneratedCase c = Generate(src, cfg);
    ASSERT_EQ(CheckCase(c, cfg), "") << "bytes of size " << bytes.size();
  }
  // Empty bytes: every choice is its minimum, still a valid graph of min_nodes nodes.
  BytesSource empty(nullptr, 0);
  GeneratedCase c = Generate(empty, cfg);
  EXPECT_EQ(int64_t(c.graph.nodes.size()), cfg.limits.min_nodes);
}

TEST(Generator, AllowedOpsRestrictionIsRespected) {
  const std::vector<std::vector<Op>> subsets = {{Op::Conv},
                                                {Op::Relu},
                                                {Op::Add},
                                                {Op::Div},
                                                {Op::Sub},
                                                {Op::Concat},
                                                {Op::Pad},
                                                {Op::MaxPool},
                                                {Op::AvgPool},
                                                {Op::GlobalAvgPool},
                                                {Op::LayerNorm},
                                                {Op::FusedConv},
                                                {Op::Conv, Op::BatchNorm, Op::Relu},
                                                {Op::Conv, Op::BatchNorm, Op::Relu, Op::Add},
                                                {Op::Div, Op::Mul},
                                                {Op::Pad, Op::Conv},
                                                {Op::FusedConv, Op::Sigmoid}};
  for (const auto& subset : subsets) {
    GenConfig cfg;
    cfg.allowed_ops = std::set<Op>(subset.begin(), subset.end());
    for (uint64_t seed = 0; seed < 200; ++seed) {
      GeneratedCase c = GenerateFromSeed(seed, cfg);
      ASSERT_EQ(CheckCase(c, cfg), "")
          << "subset starting " << OpName(subset[0]) << " seed " << seed;
    }
  }
}

TEST(Generator, EveryOpAppearsOverTwoThousandSeeds) {
  GenConfig cfg;
  std::map<Op, int> counts;
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    for (const auto& n : GenerateFromSeed(seed, cfg).graph.nodes) ++counts[n.op];
  }
  for (Op op : AllOps()) {
    // The quantized ops come from the quantized generator (`--quant`), not this one:
    // QuantGenerator.GraphsVerifyWithinLimitsAndUseTheQuantizedOps asserts them.
    if (FamilyOf(op) == OpFamily::kQuant || op == Op::QLinearConv) continue;
    EXPECT_GT(counts[op], 0) << OpName(op);
  }
}

bool ProducedBy(const Graph& g, const std::string& v, bool (*pred)(Op)) {
  const Node* p = g.Producer(v);
  return p && pred(p->op);
}

TEST(Generator, BugPronePatternsAppearOften) {
  GenConfig cfg;
  const int kSeeds = 2000;
  int conv_bn = 0, bn_bn = 0, act_after_add = 0, multi_consumer = 0, bn_conv = 0,
      fused_epilogue_add = 0, depthwise = 0, intermediate_out = 0;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    const Graph g = GenerateFromSeed(seed, cfg).graph;
    bool f[8] = {};
    for (const auto& n : g.nodes) {
      const std::string& in = n.inputs.empty() ? std::string() : n.inputs[0];
      if (n.op == Op::BatchNorm && ProducedBy(g, in, [](Op o) { return o == Op::Conv; })) f[0] = 1;
      if (n.op == Op::BatchNorm && ProducedBy(g, in, [](Op o) { return o == Op::BatchNorm; })) {
        f[1] = 1;
      }
      if (IsActivation(n.op) && ProducedBy(g, in, [](Op o) { return o == Op::Add; })) f[2] = 1;
      size_t uses = g.Consumers(n.output).size() + (g.IsGraphOutput(n.output) ? 1 : 0);
      if (uses >= 2) f[3] = 1;
      if (n.op == Op::Conv && ProducedBy(g, in, [](Op o) { return o == Op::BatchNorm; })) f[4] = 1;
      if (n.op == Op::FusedConv && n.inputs.size() == 2) f[5] = 1;
      if (n.op == Op::Conv) {
        if (GetConvAttrs(n).group > 1) f[6] = 1;
      }
      if (!g.Consumers(n.output).empty() && g.IsGraphOutput(n.output)) f[7] = 1;
    }
    conv_bn += f[0];
    bn_bn += f[1];
    act_after_add += f[2];
    multi_consumer += f[3];
    bn_conv += f[4];
    fused_epilogue_add += f[5];
    depthwise += f[6];
    intermediate_out += f[7];
  }
  EXPECT_GT(conv_bn, kSeeds * 30 / 100) << "Conv->BN";
  EXPECT_GT(bn_bn, kSeeds * 5 / 100) << "BN->BN";
  EXPECT_GT(act_after_add, kSeeds * 5 / 100) << "activation after Add";
  EXPECT_GT(multi_consumer, kSeeds * 25 / 100) << "second consumer";
  EXPECT_GT(bn_conv, kSeeds * 5 / 100) << "BN->Conv";
  EXPECT_GT(fused_epilogue_add, 3) << "FusedConv with an add operand";
  EXPECT_GT(depthwise, kSeeds * 10 / 100) << "grouped conv";
  EXPECT_GT(intermediate_out, kSeeds * 5 / 100) << "intermediate also a graph output";
}

TEST(Generator, RepeatedIdenticalSubgraphsAppear) {
  GenConfig cfg;
  int repeated = 0;
  for (uint64_t seed = 0; seed < 1000; ++seed) {
    const Graph g = GenerateFromSeed(seed, cfg).graph;
    bool found = false;
    // Two nodes with identical (random) params: a copy made by the "repeat" pattern.
    for (size_t i = 0; i < g.nodes.size() && !found; ++i) {
      for (size_t j = i + 1; j < g.nodes.size() && !found; ++j) {
        found = g.nodes[i].op == g.nodes[j].op && !g.nodes[i].params.empty() &&
                g.nodes[i].params == g.nodes[j].params && g.nodes[i].attrs == g.nodes[j].attrs;
      }
    }
    repeated += found;
  }
  EXPECT_GT(repeated, 30) << repeated;
}

TEST(Generator, ConvParameterVarietyAppears) {
  GenConfig cfg;
  bool depthwise_mult = false, dilated = false, strided = false, asym = false, ceil = false,
       count_pad = false, reflect = false, bcast_w = false, const_a = false;
  for (uint64_t seed = 0; seed < 1500; ++seed) {
    GeneratedCase c = GenerateFromSeed(seed, cfg);
    ShapeMap shapes = VerifyGraph(c.graph);
    for (const auto& n : c.graph.nodes) {
      if (n.op == Op::Conv) {
        ConvAttrs a = GetConvAttrs(n);
        int64_t cin = shapes[n.inputs[0]][1], m = n.params.at("W").shape[0];
        depthwise_mult |= a.group == cin && cin > 1 && m > cin;
        dilated |= a.dilation_h > 1;
        strided |= a.stride_h > 1;
        asym |= a.pad_top != a.pad_bottom || a.pad_left != a.pad_right;
      }
      if (n.op == Op::AvgPool || n.op == Op::MaxPool) {
        PoolAttrs p = GetPoolAttrs(n);
        ceil |= p.ceil_mode;
        count_pad |= p.count_include_pad && p.pad_top > 0;
      }
      if (n.op == Op::Pad) reflect |= AttrString(n, "mode") == "reflect";
      if (IsBinary(n.op)) {
        const_a |= n.params.count("A") > 0;
        for (const auto& [k, t] : n.params) bcast_w |= t.shape.size() == 1 && t.shape[0] > 1;
      }
    }
  }
  EXPECT_TRUE(depthwise_mult);
  EXPECT_TRUE(dilated);
  EXPECT_TRUE(strided);
  EXPECT_TRUE(asym);
  EXPECT_TRUE(ceil);
  EXPECT_TRUE(count_pad);
  EXPECT_TRUE(reflect);
  EXPECT_TRUE(bcast_w);
  EXPECT_TRUE(const_a);
}

TEST(Generator, NanInfOnlyWhenAllowed) {
  GenConfig cfg;
  cfg.allow_nan_inf = true;
  cfg.values.nan_inf = 0.05;
  int nonfinite = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    for (const auto& [name, t] : GenerateFromSeed(seed, cfg).inputs) {
      for (float v : t.data) nonfinite += !std::isfinite(v);
    }
  }
  EXPECT_GT(nonfinite, 0);
}

TEST(Generator, ReferenceRunsEveryGeneratedGraph) {
  GenConfig cfg;
  int all_finite = 0;
  const int kSeeds = 300;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    GeneratedCase c = GenerateFromSeed(seed, cfg);
    RefTensorMap out;
    ASSERT_NO_THROW(out = RunReference(c.graph, c.inputs)) << "seed " << seed;
    ASSERT_EQ(out.size(), c.graph.outputs.size());
    bool finite = true;
    for (const auto& [name, t] : out) {
      for (double v : t.value) finite &= std::isfinite(v) && std::fabs(v) < 3e38;
    }
    all_finite += finite;
  }
  // Default configs stay in float range almost always (overflow makes cases uninformative).
  EXPECT_GT(all_finite, kSeeds * 95 / 100);
}

TEST(Generator, InvalidConfigIsAnInputError) {
  GenConfig cfg;
  cfg.allowed_ops.clear();
  EXPECT_THROW(GenerateFromSeed(1, cfg), InputError);
  GenConfig zero;
  for (auto& [op, w] : zero.op_weights) w = 0;
  EXPECT_THROW(GenerateFromSeed(1, zero), InputError);
}

TEST(Generator, ProvenanceRecordsSeedAndFullConfig) {
  GenConfig cfg;
  cfg.limits.max_nodes = 5;
  nlohmann::json p = GenerationProvenance(77, cfg);
  EXPECT_EQ(p["seed"], 77);
  EXPECT_EQ(p["generator"], "fusefuzz-gen");
  EXPECT_EQ(ConfigFromJson(p["config"]), cfg);
}

}  // namespace
}  // namespace fusefuzz
