// The fusion benchmark's cases: one small graph per fusion rule's pattern on a real layer shape
// (ResNet-18, MobileNetV2), plus a runner that executes a graph node by node with RunFastNode,
// exactly as the fast executor would run it, so the unoptimized graph gives the unfused kernel
// sequence and the graph after Optimize gives the fused one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"
#include "kernels/fast/executor.h"

namespace fusefuzz {

// A conv layer: input [n, c, h, h], m output channels, k x k kernel, "same" padding k/2.
struct Layer {
  const char* model;  // e.g. "resnet18_conv3_x"
  int64_t n, c, h, m, k, stride, group;
};

enum class PatternKind {
  kConvBn,          // Conv -> BatchNorm
  kConvBnAct,       // Conv -> BatchNorm -> act (Relu, Relu6)
  kConvAddRelu,     // Conv -> Add(residual input) -> Relu
  kConvScaleShift,  // Conv -> Mul(const [1,M,1,1]) -> Add(const [1,M,1,1])
  kBnBn,            // BatchNorm -> BatchNorm on the layer's input shape
  kPadConv,         // Pad(zero, k/2) -> Conv without pads
  kConvAct,         // Conv -> act
};

struct PatternCase {
  std::string pattern;  // row name part: "conv_bn_relu", "conv_act_gelu_tanh", ...
  PatternKind kind;
  Op act = Op::Relu;       // kConvBnAct, kConvAct
  bool gelu_tanh = false;  // Gelu: the tanh form
  Layer layer;
};

// "BM_Fusion/<pattern>/<model>/N1_C128_H28_K3[_M..][_S..][_G..]" (the variant is appended).
std::string CaseName(const PatternCase& pc);

// Every benchmarked case, in table order.
std::vector<PatternCase> AllCases();

struct BuiltCase {
  Graph graph;
  TensorMap inputs;
};
BuiltCase BuildCase(const PatternCase& pc);

// Flops of the pattern's useful work (conv MACs x2 plus one per element per elementwise step,
// two for a BN), the same for both variants so that GFLOP/s ratios are speedups.
double CaseFlops(const Graph& g);

// Deterministic values in [-scale, scale) (an LCG: the bench needs no statistical quality).
Tensor Filled(Shape shape, uint32_t seed, float scale = 1.0f);

// Runs a verified graph node by node (one RunFastNode per node, intermediates materialized).
class NodeSequence {
 public:
  NodeSequence(const Graph& g, const TensorMap& inputs, const FastOptions& opts);
  // Runs every node; returns the last node's output.
  Tensor Run() const;
  // Bytes every node reads (inputs, params) and writes (output), summed over the nodes.
  double bytes_moved() const { return bytes_; }
  int num_nodes() const { return static_cast<int>(g_.nodes.size()); }

 private:
  struct Source {
    const Tensor* input = nullptr;  // a graph input, or
    int node = -1;                  // the output of this node
  };
  Graph g_;
  TensorMap inputs_;
  FastOptions opts_;
  std::vector<std::vector<Source>> sources_;
  std::vector<Shape> out_shapes_;
  double bytes_ = 0;
};

}  // namespace fusefuzz
