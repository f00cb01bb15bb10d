// Pass "channels": halves the channel count of a "channel class" — a set of values whose
// channels must shrink together: the input and output of every per-channel op (activations,
// norms, pads, pools, binary ops), and the input and output of a grouped conv (then the group
// count halves too and each group keeps its size: the first half of the output channels is
// exactly the first half of the groups). An ungrouped conv separates its input class (slice of
// W's dim 1) from its output class (W's dim 0 and B). Every per-channel param, PRelu slope,
// binary constant with a channel dim, graph input and GroupNorm group count is sliced
// consistently: mode "lower" keeps the first half of the channels, mode "upper" the last half
// (a fault may show only in some channels). A class meeting a Concat, a FusedConv, a Flatten,
// Reshape, Gemm or MatMul,
// a channel broadcast (C = 1 against C > 1), or a grouped conv / GroupNorm that cannot halve is
// left alone.
#include <map>
#include <set>

#include "reduce/reduce.h"

namespace fusefuzz {
namespace {

class ChannelClasses {
 public:
  ChannelClasses(const Graph& g, const ShapeMap& shapes) {
    for (const auto& in : g.inputs) cls_[in.name] = New();
    for (const Node& n : g.nodes) Visit(n, shapes);
    for (const auto& [value, c] : cls_) {
      const Shape& s = shapes.at(value);
      if (s.size() != 4 || s[1] < 2) bad_[Find(c)] = true;
    }
    for (const auto& [value, c] : cls_) {
      int r = Find(c);
      if (!bad_[r]) roots_.insert(r);
    }
  }
  // Shrinkable classes, by first appearance.
  std::vector<int> Targets() const { return {roots_.begin(), roots_.end()}; }
  int Of(const std::string& value) { return Find(cls_.at(value)); }

 private:
  int New() {
    parent_.push_back(static_cast<int>(parent_.size()));
    bad_.push_back(false);
    return parent_.back();
  }
  int Find(int c) {
    while (parent_[size_t(c)] != c) c = parent_[size_t(c)] = parent_[size_t(parent_[size_t(c)])];
    return c;
  }
  void Union(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a == b) return;
    if (b < a) std::swap(a, b);
    parent_[size_t(b)] = a;
    bad_[size_t(a)] = bad_[size_t(a)] || bad_[size_t(b)];
  }
  void Bad(int c) { bad_[size_t(Find(c))] = true; }

  void Visit(const Node& n, const ShapeMap& shapes) {
    const int in = Find(cls_.at(n.inputs[0]));
    const int64_t c_in = shapes.at(n.inputs[0])[1];
    if (n.op == Op::Conv) {
      const int out = New();
      cls_[n.output] = out;
      const int64_t g = GetConvAttrs(n).group;
      if (g > 1) {
        Union(in, out);
        const int64_t m = shapes.at(n.output)[1];
        if (g % 2 != 0 || c_in % 2 != 0 || m % 2 != 0) Bad(in);
      }
      return;
    }
    cls_[n.output] = in;
    for (const auto& v : n.inputs) Union(in, cls_.at(v));
    // Channels of rank-2 values are features: Gemm/MatMul weights would have to shrink too; a
    // Transpose moves dim 1 elsewhere.
    if (n.op == Op::FusedConv || n.op == Op::Concat || FamilyOf(n.op) == OpFamily::kReshape ||
        FamilyOf(n.op) == OpFamily::kGemm || FamilyOf(n.op) == OpFamily::kLayout) {
      Bad(in);
    }
    if (n.op == Op::GroupNorm) {
      const int64_t g = AttrInt(n, "num_groups");
      if ((c_in / 2) % g != 0 && (g % 2 != 0 || c_in % 2 != 0)) Bad(in);
    }
  }

  std::map<std::string, int> cls_;
  std::vector<int> parent_;
  std::vector<bool> bad_;
  std::set<int> roots_;
};

// Halves dim `d` of `t` (keeps the first or the last half) when it is larger than 1.
void HalveDim(Tensor& t, size_t d, bool upper) {
  if (d >= t.shape.size() || t.shape[d] < 2) return;
  const int64_t n = t.shape[d], keep = n / 2;
  t = SliceDim(t, d, upper ? n - keep : 0, keep);
}

void ShrinkNode(Node& n, bool in_s, bool out_s, int64_t c_in, bool upper) {
  auto Halve = [upper](Tensor& t, size_t d) { HalveDim(t, d, upper); };
  switch (n.op) {
    case Op::Conv: {
      Tensor& w = n.params.at("W");
      const int64_t g = GetConvAttrs(n).group;
      if (g > 1) {
        if (!in_s) return;
        Halve(w, 0);
        n.attrs["group"] = g / 2;
      } else {
        if (out_s) Halve(w, 0);
        if (in_s) Halve(w, 1);
      }
      if (out_s && n.params.count("B")) Halve(n.params.at("B"), 0);
      return;
    }
    case Op::PRelu:
      // The slope broadcasts from the right (ONNX): against the rank-4 input its channel dim is
      // rank - 3 ([C, 1, 1], [C, H, W], [1, C, 1, 1]); [W] or [H, W] have none.
      if (in_s) {
        Tensor& t = n.params.at("slope");
        if (t.shape.size() >= 3) Halve(t, t.shape.size() - 3);
      }
      return;
    case Op::BatchNorm:
    case Op::InstanceNorm:
      if (in_s) {
        for (auto& [name, t] : n.params) Halve(t, 0);
      }
      return;
    case Op::GroupNorm:
      if (in_s) {
        for (auto& [name, t] : n.params) Halve(t, 0);
        const int64_t g = AttrInt(n, "num_groups");
        if ((c_in / 2) % g != 0) n.attrs["num_groups"] = g / 2;
      }
      return;
    case Op::LayerNorm: {
      int64_t axis = AttrInt(n, "axis");
      if (axis < 0) axis += 4;
      if (in_s && axis <= 1) {
        for (auto& [name, t] : n.params) Halve(t, static_cast<size_t>(1 - axis));
      }
      return;
    }
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
    case Op::Min:
    case Op::Max:
      if (in_s) {
        for (auto& [name, t] : n.params) {
          // Aligned from the right against rank 4: the channel dim is rank - 3.
          if (t.shape.size() >= 3) Halve(t, t.shape.size() - 3);
        }
      }
      return;
    // Ops without per-channel params (FusedConv and Concat are never in a shrinkable class).
    case Op::FusedConv:
    case Op::Relu:
    case Op::Relu6:
    case Op::Clip:
    case Op::LeakyRelu:
    case Op::Elu:
    case Op::Sigmoid:
    case Op::HardSigmoid:
    case Op::Tanh:
    case Op::Silu:
    case Op::HardSwish:
    case Op::Gelu:
    case Op::Pad:
    case Op::MaxPool:
    case Op::AvgPool:
    case Op::GlobalAvgPool:
    case Op::Concat:
    case Op::Identity:
    case Op::Flatten:
    case Op::Reshape:
    case Op::Gemm:
    case Op::MatMul:
    case Op::QuantizeLinear:
    case Op::DequantizeLinear:
    case Op::QLinearConv:
    case Op::QLinearAdd:
    case Op::ReduceMean:
    case Op::Pow:
    case Op::Sqrt:
    case Op::Reciprocal:
    case Op::Exp:
    case Op::Log:
    case Op::Erf:
    case Op::ReduceSum:
    case Op::ReduceMax:
    case Op::Softmax:
    case Op::Transpose:
      return;  // quantized ops: their per-axis params are the quantized reduce passes' (issue 24)
  }
}

class ChannelsPass final : public ReducePass {
 public:
  std::string_view name() const override { return "channels"; }
  int modes() const override { return 2; }
  std::string mode_name(int mode) const override { return mode == 0 ? "lower" : "upper"; }
  int64_t Targets(ReduceContext& ctx, int) const override {
    return static_cast<int64_t>(ChannelClasses(ctx.current().graph, ctx.shapes()).Targets().size());
  }
  std::optional<ReduceCase> Apply(ReduceContext& ctx, int mode, int64_t begin,
                                  int64_t end) const override {
    const bool upper = mode == 1;
    const ShapeMap& shapes = ctx.shapes();
    ChannelClasses classes(ctx.current().graph, shapes);
    const std::vector<int> targets = classes.Targets();
    const std::set<int> chosen(targets.begin() + begin, targets.begin() + end);
    ReduceCase c = ctx.current();
    for (auto& in : c.graph.inputs) {
      if (!chosen.count(classes.Of(in.name))) continue;
      in.shape[1] /= 2;
      HalveDim(c.inputs.at(in.name), 1, upper);
    }
    for (Node& n : c.graph.nodes) {
      const bool in_s = chosen.count(classes.Of(n.inputs[0])) > 0;
      const bool out_s = chosen.count(classes.Of(n.output)) > 0;
      ShrinkNode(n, in_s, out_s, shapes.at(n.inputs[0])[1], upper);
    }
    return c;
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakeChannelsPass() { return std::make_unique<ChannelsPass>(); }

}  // namespace fusefuzz
