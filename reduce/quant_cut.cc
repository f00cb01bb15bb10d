// Pass "quant-cut": replaces a quantized compute node (QLinearConv, QLinearAdd: a node whose
// output is a per-tensor quantized tensor, QuantizeLinear aside) by a QuantizeLinear with the
// node's output parameters, reading a NEW float graph input that holds the node's reference
// value before its rounding, (t - z) * s (t the unrounded grid position). Q of that rounds to
// the node's integers again (ties aside), so they reach the consumers while the compute and
// everything upstream that only fed it go: what `cut` does for float values, which cannot feed the
// integers a DequantizeLinear reads. A bug about what happens after the quantized value (ONNX
// Runtime's DoubleQDQPairsRemover on Q -> DQ -> Q -> DQ, whichever op made the first integers)
// then minimizes to one form. Mode "dequantize" does the same at the graph's end (below). OpCost
// ranks a QLinear op above QuantizeLinear, so the step is a size decrease even where no weights go.
// Modes "integer-input" and "integer-output" remove the conversions at the graph's boundary: a
// QuantizeLinear of a graph input becomes a graph input of its integers, and a DequantizeLinear
// that ends the graph goes, so its integers are the output. A quantized graph's input or output
// in float or in integers is the same to a rewrite between them: ONNX Runtime's bias-scale bug
// came as DQ -> Conv -> Q with and without a Q before and a DQ after, 4 folders for one cause.
#include <algorithm>
#include <set>

#include "reduce/reduce.h"

namespace fusefuzz {
namespace {

// The quantized compute ops (their epilogue and residual go with them).
bool Eligible(const Node& n) {
  if (n.op != Op::QLinearConv && n.op != Op::QLinearAdd) return false;
  auto y = n.quant.find("y");
  return y != n.quant.end() && !y->second.PerAxis();
}

enum Mode { kQuantize = 0, kDequantize = 1, kIntegerInput = 2, kIntegerOutput = 3 };

// Mode "dequantize": a quantized compute op that ends the graph (its output a graph output and
// read by no node) becomes the DequantizeLinear of its first input: a bug in the integers it
// reads then shows as they are, whatever op read them.
bool EndsTheGraph(const Graph& g, const Node& n) {
  return g.IsGraphOutput(n.output) && g.Consumers(n.output).empty();
}

class QuantCutPass final : public ReducePass {
 public:
  std::string_view name() const override { return "quant-cut"; }
  int modes() const override { return 4; }
  std::string mode_name(int mode) const override {
    switch (mode) {
      case kQuantize:
        return "quantize";
      case kDequantize:
        return "dequantize";
      case kIntegerInput:
        return "integer-input";
      default:
        return "integer-output";
    }
  }
  int64_t Targets(ReduceContext& ctx, int mode) const override {
    return static_cast<int64_t>(Sites(ctx.current().graph, mode).size());
  }
  std::optional<ReduceCase> Apply(ReduceContext& ctx, int mode, int64_t begin,
                                  int64_t end) const override {
    const std::vector<size_t> sites = Sites(ctx.current().graph, mode);
    if (mode == kIntegerInput || mode == kIntegerOutput) {
      ReduceCase c = ctx.current();
      std::set<size_t> gone;
      for (int64_t t = begin; t < end; ++t) {
        const size_t i = sites[static_cast<size_t>(t)];
        const Node& n = c.graph.nodes[i];
        if (mode == kIntegerInput) {
          // The Q's integers, as the reference computed them, are the new input's values.
          c.graph.inputs.push_back({n.output, ctx.shapes().at(n.output)});
          c.inputs[n.output] = ToFloatTensor(ctx.all_values().at(n.output));
        } else {
          std::vector<std::string>& outs = c.graph.outputs;
          const bool already = std::find(outs.begin(), outs.end(), n.inputs.at(0)) != outs.end();
          if (already) {
            outs.erase(std::find(outs.begin(), outs.end(), n.output));
          } else {
            std::replace(outs.begin(), outs.end(), n.output, n.inputs.at(0));
          }
        }
        gone.insert(i);
      }
      std::vector<Node> kept;
      for (size_t i = 0; i < c.graph.nodes.size(); ++i) {
        if (!gone.count(i)) kept.push_back(std::move(c.graph.nodes[i]));
      }
      c.graph.nodes = std::move(kept);
      RemoveDeadCode(c);
      return c;
    }
    if (mode == kDequantize) {
      ReduceCase c = ctx.current();
      for (int64_t t = begin; t < end; ++t) {
        Node& n = c.graph.nodes[sites[static_cast<size_t>(t)]];
        const std::string role = n.op == Op::QLinearAdd ? "a" : "x";
        Node dq;
        dq.name = n.name;
        dq.op = Op::DequantizeLinear;
        dq.inputs = {n.inputs.at(0)};
        dq.output = n.output;
        dq.quant["x"] = n.quant.at(role);
        n = std::move(dq);
      }
      return c;
    }
    const RefTensorMap& values = ctx.all_values();
    const ShapeMap& shapes = ctx.shapes();
    ReduceCase c = ctx.current();
    std::set<std::string> names;
    for (const ValueInfo& in : c.graph.inputs) names.insert(in.name);
    for (const Node& n : c.graph.nodes) names.insert(n.output);
    for (int64_t t = begin; t < end; ++t) {
      Node& n = c.graph.nodes[sites[static_cast<size_t>(t)]];
      const QuantParams y = n.quant.at("y");
      std::string in = n.output + "_float";
      while (names.count(in)) in += "_";
      names.insert(in);
      // The value before the rounding, (t - z) * s with t the unrounded grid position: its Q
      // rounds as the node's own did, so a bug that needs the rounding (a merged pair that
      // loses it) keeps it. Without t, the integers themselves.
      const RefTensor& ref = values.at(n.output);
      Tensor v = ToFloatTensor(ref);
      const bool have_t = ref.grid_t.size() == v.data.size();
      for (size_t i = 0; i < v.data.size(); ++i) {
        const double pos = have_t ? ref.grid_t[i] : static_cast<double>(v.data[i]);
        v.data[i] = static_cast<float>((pos - static_cast<double>(y.zero_point[0])) * y.scale[0]);
      }
      c.graph.inputs.push_back({in, shapes.at(n.output)});
      c.inputs[in] = std::move(v);
      Node q;
      q.name = n.name;
      q.op = Op::QuantizeLinear;
      q.inputs = {in};
      q.output = n.output;
      q.quant["y"] = y;
      n = std::move(q);
    }
    return c;
  }

 private:
  static std::vector<size_t> Sites(const Graph& g, int mode) {
    std::vector<size_t> out;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      if (mode == kIntegerInput) {
        // Q of a graph input; its integers must not be a graph output themselves (an input
        // that is an output says nothing).
        if (n.op == Op::QuantizeLinear && n.inputs.size() == 1 && g.IsGraphInput(n.inputs[0]) &&
            !g.IsGraphOutput(n.output))
          out.push_back(i);
        continue;
      }
      if (mode == kIntegerOutput) {
        // A DQ that ends the graph, of integers some node makes (not a graph input's).
        if (n.op == Op::DequantizeLinear && n.inputs.size() == 1 && EndsTheGraph(g, n) &&
            g.ProducerIndex(n.inputs[0]) >= 0)
          out.push_back(i);
        continue;
      }
      if (!Eligible(n)) continue;
      if (mode == kDequantize && (!EndsTheGraph(g, n) || n.inputs.empty())) continue;
      out.push_back(i);
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakeQuantCutPass() { return std::make_unique<QuantCutPass>(); }

}  // namespace fusefuzz
