#include "harness/structure.h"

#include <algorithm>
#include <variant>
#include <vector>

#include "ir/ops.h"

namespace fusefuzz {
namespace {

// True when `v` is what the op's schema uses when the attribute is absent.
bool IsDefaultAttr(Op op, const std::string& name, const AttrValue& v) {
  const AttrSpec* spec = FindAttrSpec(op, name);
  if (!spec || spec->required) return false;
  switch (spec->type) {
    case AttrType::kInt:
      return std::holds_alternative<int64_t>(v) && std::get<int64_t>(v) == spec->default_int;
    case AttrType::kFloat:
      return std::holds_alternative<double>(v) && std::get<double>(v) == spec->default_float;
    case AttrType::kInts:
      return std::holds_alternative<std::vector<int64_t>>(v) &&
             std::get<std::vector<int64_t>>(v) == spec->default_ints;
    case AttrType::kString:
      return std::holds_alternative<std::string>(v) &&
             std::get<std::string>(v) == spec->default_string;
  }
  return false;
}

// Which axes of the [N, C, H, W] output a constant operand varies over, aligned from the right
// as numpy broadcasts: "1" (a scalar), "C", "HW", "NCHW", ... What separates a constant folded
// per channel from one folded as a scalar, whatever its values.
std::string BroadcastClass(const Shape& s) {
  static constexpr char kAxes[] = "NCHW";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] <= 1) continue;
    const size_t from_right = s.size() - 1 - i;
    out += from_right < 4 ? kAxes[3 - from_right] : '?';
  }
  return out.empty() ? "1" : out;
}

// Geometry: a minimized case keeps whatever of it the minimizer could not remove, which
// differs between cases of one bug (a 1x1 or a 3x3 kernel, pads 0 or 1).
bool IsGeometry(const std::string& attr) {
  return attr == "pads" || attr == "strides" || attr == "dilations" || attr == "kernel_shape" ||
         attr == "shape";
}

// Backtracking embedding of pattern nodes [k, end) into `g` (see ContainsPattern): may g's
// node j stand for pattern node k? `fits(j, k)`.
template <typename Fits>
bool Embed(const Graph& g, const Graph& p, const Fits& fits, size_t k, std::vector<int>& map,
           std::vector<bool>& used) {
  if (k == p.nodes.size()) return true;
  const Node& pn = p.nodes[k];
  // Each edge from pattern node q must be an edge from map[q]; pattern graph inputs match
  // anything. Add and Mul are commutative: their two inputs may come in either order.
  auto producer_ok = [&](const std::string& p_in, const std::string& g_in) {
    const int q = p.ProducerIndex(p_in);
    return q < 0 || g.ProducerIndex(g_in) == map[static_cast<size_t>(q)];
  };
  for (size_t j = 0; j < g.nodes.size(); ++j) {
    const Node& gn = g.nodes[j];
    if (used[j] || !fits(j, k) || gn.inputs.size() != pn.inputs.size()) continue;
    bool ok = true;
    for (size_t i = 0; i < pn.inputs.size() && ok; ++i)
      ok = producer_ok(pn.inputs[i], gn.inputs[i]);
    if (!ok && (pn.op == Op::Add || pn.op == Op::Mul) && pn.inputs.size() == 2) {
      ok = producer_ok(pn.inputs[0], gn.inputs[1]) && producer_ok(pn.inputs[1], gn.inputs[0]);
    }
    if (!ok) continue;
    used[j] = true;
    map[k] = static_cast<int>(j);
    if (Embed(g, p, fits, k + 1, map, used)) return true;
    used[j] = false;
  }
  return false;
}

}  // namespace

Graph EpiloguesAsNodes(const Graph& g, std::vector<NodeSite>* origin) {
  Graph out = g;
  out.nodes.clear();
  if (origin) origin->clear();
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.op != Op::FusedConv || n.epilogue.empty() || !n.quant.empty()) {
      out.nodes.push_back(n);
      if (origin) origin->push_back({i, -1});
      continue;
    }
    Node conv = n;
    conv.op = Op::Conv;
    conv.epilogue.clear();
    conv.inputs.resize(1);  // the data input; an add step's operand goes to its Add
    const int64_t m = n.params.count("W") ? n.params.at("W").shape.at(0) : 1;
    std::string prev = n.output + "#conv";
    conv.output = prev;
    out.nodes.push_back(conv);
    if (origin) origin->push_back({i, -1});
    for (size_t k = 0; k < n.epilogue.size(); ++k) {
      const EpilogueStep& s = n.epilogue[k];
      const bool last = k + 1 == n.epilogue.size();
      const std::string name = n.name + "#" + std::to_string(k);
      const std::string value = last ? n.output : n.output + "#" + std::to_string(k);
      Node step;
      step.name = name;
      step.inputs = {prev};
      step.output = value;
      switch (s.kind) {
        case EpilogueKind::kActivation:
          step.op = s.act;
          step.attrs = s.attrs;
          step.params = s.params;
          break;
        case EpilogueKind::kClamp:
          step.op = Op::Clip;
          step.attrs = s.attrs;
          break;
        case EpilogueKind::kAdd:
          step.op = Op::Add;
          if (s.input >= 0 && static_cast<size_t>(s.input) < n.inputs.size())
            step.inputs.push_back(n.inputs[static_cast<size_t>(s.input)]);
          break;
        case EpilogueKind::kScaleShift: {
          // Per-channel constants, shaped [M, 1, 1] so that their broadcast class is "C".
          Node mul = step;
          mul.name = name + "#scale";
          mul.op = Op::Mul;
          mul.output = value + "#scale";
          mul.params["B"] = Tensor(Shape{m, 1, 1});
          out.nodes.push_back(mul);
          if (origin) origin->push_back({i, static_cast<int>(k)});
          step.op = Op::Add;
          step.inputs = {mul.output};
          step.params["B"] = Tensor(Shape{m, 1, 1});
          break;
        }
      }
      out.nodes.push_back(step);
      if (origin) origin->push_back({i, static_cast<int>(k)});
      prev = value;
    }
  }
  return out;
}

Graph WithoutQuantizedBoundary(const Graph& g) {
  Graph out = g;
  std::vector<Node> kept;
  for (const Node& n : g.nodes) {
    const bool q_of_input = n.op == Op::QuantizeLinear && n.inputs.size() == 1 &&
                            g.IsGraphInput(n.inputs[0]) && !g.IsGraphOutput(n.output);
    const bool dq_at_end = n.op == Op::DequantizeLinear && n.inputs.size() == 1 &&
                           g.IsGraphOutput(n.output) && g.Consumers(n.output).empty() &&
                           g.ProducerIndex(n.inputs[0]) >= 0;
    if (q_of_input) {
      out.inputs.push_back({n.output, {}});
    } else if (dq_at_end) {
      std::vector<std::string>& outs = out.outputs;
      if (std::find(outs.begin(), outs.end(), n.inputs[0]) == outs.end()) {
        std::replace(outs.begin(), outs.end(), n.output, n.inputs[0]);
      } else {
        outs.erase(std::find(outs.begin(), outs.end(), n.output));
      }
    } else {
      kept.push_back(n);
    }
  }
  if (kept.empty()) return g;
  out.nodes = std::move(kept);
  return out;
}

Graph QLinearAsQdq(const Graph& g) {
  Graph out = g;
  out.nodes.clear();
  for (const Node& n : g.nodes) {
    if (n.op != Op::QLinearConv && n.op != Op::QLinearAdd) {
      out.nodes.push_back(n);
      continue;
    }
    auto dequantize = [&](const std::string& in, const std::string& role) {
      Node dq;
      dq.name = n.name + "#dq-" + role;
      dq.op = Op::DequantizeLinear;
      dq.inputs = {in};
      dq.output = n.output + "#dq-" + role;
      if (auto it = n.quant.find(role); it != n.quant.end()) dq.quant["x"] = it->second;
      out.nodes.push_back(dq);
      return dq.output;
    };
    Node mid = n;
    mid.name = n.name + "#float";
    mid.output = n.output + "#float";
    mid.quant.clear();
    if (n.op == Op::QLinearAdd) {
      mid.op = Op::Add;
      mid.attrs.clear();
      mid.inputs = {dequantize(n.inputs.at(0), "a"), dequantize(n.inputs.at(1), "b")};
    } else {
      mid.op = n.epilogue.empty() ? Op::Conv : Op::FusedConv;
      mid.inputs.at(0) = dequantize(n.inputs.at(0), "x");
      // An epilogue add's operand is the integer residual, dequantized with its own parameters.
      for (size_t i = 1; i < mid.inputs.size(); ++i) mid.inputs[i] = dequantize(n.inputs[i], "r");
    }
    out.nodes.push_back(mid);
    std::string last = mid.output;
    if (n.op == Op::QLinearAdd && AttrString(n, "activation") == "relu") {
      Node relu;
      relu.name = n.name + "#relu";
      relu.op = Op::Relu;
      relu.inputs = {last};
      relu.output = n.output + "#relu";
      out.nodes.push_back(relu);
      last = relu.output;
    }
    Node q;
    q.name = n.name;
    q.op = Op::QuantizeLinear;
    q.inputs = {last};
    q.output = n.output;
    if (auto it = n.quant.find("y"); it != n.quant.end()) q.quant["y"] = it->second;
    out.nodes.push_back(q);
  }
  return out;
}

std::string NodeClass(const Node& n) {
  const bool plain_conv = n.op == Op::FusedConv && n.epilogue.empty();
  std::string out = std::string(OpName(plain_conv ? Op::Conv : n.op)) + "(";
  for (const auto& [name, v] : n.attrs) {
    // Float attributes are values (epsilon, alpha), not structure.
    if (!std::holds_alternative<double>(v) && !IsGeometry(name) && !IsDefaultAttr(n.op, name, v))
      out += name + ",";
  }
  out += ")";
  const bool operand_constants =
      n.op == Op::Add || n.op == Op::Sub || n.op == Op::Mul || n.op == Op::Div || n.op == Op::PRelu;
  if (operand_constants) {
    for (const auto& [pname, t] : n.params)
      out += "[" + pname + ":" + BroadcastClass(t.shape) + "]";
  }
  if (!n.epilogue.empty()) out += "|epilogue";
  return out;
}

std::string CanonicalStructure(const Graph& graph) {
  const Graph g = EpiloguesAsNodes(graph);
  std::string out;
  for (const Node& n : g.nodes) {
    out += NodeClass(n);
    std::vector<std::string> from;
    for (const std::string& in : n.inputs) {
      const int producer = g.ProducerIndex(in);
      from.push_back(producer >= 0 ? "n" + std::to_string(producer) : "x");
    }
    if (n.op == Op::Add || n.op == Op::Mul) std::sort(from.begin(), from.end());
    out += "<-";
    for (const auto& f : from) out += f + ",";
    out += ";";
  }
  // Outputs as a set: their order is whichever the generator or the minimizer left.
  std::vector<int> outs;
  for (const std::string& o : g.outputs) outs.push_back(g.ProducerIndex(o));
  std::sort(outs.begin(), outs.end());
  out += "out:";
  for (int o : outs) out += std::to_string(o) + ",";
  return out;
}

namespace {

// Where pattern `p` embeds in `g` (both already EpiloguesAsNodes) with its last node upstream
// of `worst_output`; `forms`: activations up to the minimizer's forms (InPatternForms).
std::optional<std::vector<int>> Match(const Graph& g, const Graph& p,
                                      const std::string& worst_output, bool forms) {
  if (p.nodes.empty() || p.nodes.size() > g.nodes.size()) return std::nullopt;
  std::vector<std::string> g_class, p_class;
  for (const Node& n : g.nodes) g_class.push_back(NodeClass(n));
  for (const Node& n : p.nodes) p_class.push_back(NodeClass(n));
  auto fits = [&](size_t j, size_t k) {
    if (g_class[j] == p_class[k]) return true;
    if (!forms) return false;
    const Node& gn = g.nodes[j];
    const Node& pn = p.nodes[k];
    if (!IsActivation(gn.op) || !gn.quant.empty() || !pn.quant.empty()) return false;
    return pn.op == Op::Relu || (pn.op == Op::Clip && gn.op != Op::Relu);
  };
  std::vector<int> map(p.nodes.size(), -1);
  std::vector<bool> used(g.nodes.size(), false);
  if (!Embed(g, p, fits, 0, map, used)) return std::nullopt;
  // The worst output downstream of the pattern's last node: a case whose failure cannot come
  // from the pattern is not its duplicate. Nodes are in topological order.
  std::vector<bool> reach(g.nodes.size(), false);
  reach[static_cast<size_t>(map.back())] = true;
  for (size_t j = 0; j < g.nodes.size(); ++j) {
    for (const std::string& in : g.nodes[j].inputs) {
      const int q = g.ProducerIndex(in);
      if (q >= 0 && reach[static_cast<size_t>(q)]) reach[j] = true;
    }
    if (reach[j] && g.nodes[j].output == worst_output) return map;
  }
  return std::nullopt;
}

}  // namespace

bool ContainsPattern(const Graph& graph, const Graph& pattern, const std::string& worst_output) {
  return Match(EpiloguesAsNodes(QLinearAsQdq(graph)), EpiloguesAsNodes(QLinearAsQdq(pattern)),
               worst_output, false)
      .has_value();
}

std::optional<Graph> InPatternForms(const Graph& graph, const Graph& pattern_graph,
                                    const std::string& worst_output) {
  std::vector<NodeSite> origin;
  const Graph g = EpiloguesAsNodes(graph, &origin);
  const Graph p = EpiloguesAsNodes(pattern_graph);
  if (Match(g, p, worst_output, false)) return std::nullopt;
  const std::optional<std::vector<int>> map = Match(g, p, worst_output, true);
  if (!map) return std::nullopt;
  Graph out = graph;
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    const Node& pn = p.nodes[k];
    const size_t j = static_cast<size_t>((*map)[k]);
    if (g.nodes[j].op == pn.op || !IsActivation(pn.op)) continue;
    const NodeSite site = origin[j];
    Node& n = out.nodes[site.node];
    if (site.step < 0) {
      n.op = pn.op;
      n.attrs = pn.attrs;
      n.params.clear();
      continue;
    }
    EpilogueStep& step = n.epilogue[static_cast<size_t>(site.step)];
    step = EpilogueStep{};
    if (pn.op == Op::Clip) {
      step.kind = EpilogueKind::kClamp;
      step.attrs = pn.attrs;
    } else {
      step.act = pn.op;  // Relu
    }
  }
  return out;
}

}  // namespace fusefuzz
