// Graph edits shared by the reduction passes: dead code removal, validity, tensor slicing and
// the refit of constants after shapes shrank.
#include <algorithm>
#include <set>

#include "ir/error.h"
#include "reduce/reduce.h"

namespace fusefuzz {

void RemoveDeadCode(ReduceCase& c) {
  Graph& g = c.graph;
  std::set<std::string> used(g.outputs.begin(), g.outputs.end());
  // Backwards: a node is live when its output is used by a later live node or is an output.
  std::vector<bool> live(g.nodes.size(), false);
  for (size_t i = g.nodes.size(); i-- > 0;) {
    const Node& n = g.nodes[i];
    if (!used.count(n.output)) continue;
    live[i] = true;
    used.insert(n.inputs.begin(), n.inputs.end());
  }
  std::vector<Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (live[i]) kept.push_back(std::move(g.nodes[i]));
  }
  g.nodes = std::move(kept);
  std::vector<ValueInfo> inputs;
  for (auto& in : g.inputs) {
    if (used.count(in.name)) {
      inputs.push_back(std::move(in));
    } else {
      c.inputs.erase(in.name);
    }
  }
  g.inputs = std::move(inputs);
}

bool IsValidCase(const ReduceCase& c) {
  try {
    VerifyGraph(c.graph);
  } catch (const InputError&) {
    return false;
  }
  if (c.inputs.size() != c.graph.inputs.size()) return false;
  for (const auto& in : c.graph.inputs) {
    auto it = c.inputs.find(in.name);
    if (it == c.inputs.end() || it->second.shape != in.shape ||
        it->second.size() != NumElements(in.shape)) {
      return false;
    }
  }
  return true;
}

Tensor SliceDim(const Tensor& t, size_t dim, int64_t begin, int64_t count) {
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < dim; ++d) outer *= t.shape[d];
  for (size_t d = dim + 1; d < t.shape.size(); ++d) inner *= t.shape[d];
  const int64_t len = t.shape[dim];
  Shape s = t.shape;
  s[dim] = count;
  Tensor out(s);
  size_t k = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = begin; i < begin + count; ++i) {
      const float* src = t.data.data() + (o * len + i) * inner;
      std::copy(src, src + inner, out.data.begin() + static_cast<std::ptrdiff_t>(k));
      k += static_cast<size_t>(inner);
    }
  }
  return out;
}

namespace {

// Crops `t` so that no dim exceeds `limit`'s (aligned from the right, numpy style).
void CropTo(Tensor& t, const Shape& limit) {
  const auto shift = static_cast<int64_t>(limit.size()) - static_cast<int64_t>(t.shape.size());
  for (size_t d = 0; d < t.shape.size(); ++d) {
    const int64_t ld = static_cast<int64_t>(d) + shift;
    if (ld < 0) continue;
    const int64_t want = limit[static_cast<size_t>(ld)];
    if (t.shape[d] > 1 && want < t.shape[d]) t = SliceDim(t, d, 0, want);
  }
}

}  // namespace

bool RefitConstants(Graph& g) {
  ShapeMap shapes;
  for (const auto& in : g.inputs) shapes[in.name] = in.shape;
  for (Node& n : g.nodes) {
    std::vector<Shape> in;
    for (const auto& v : n.inputs) {
      auto it = shapes.find(v);
      if (it == shapes.end()) return false;
      in.push_back(it->second);
    }
    if (in.empty()) return false;
    if (IsBinary(n.op) && in.size() == 1) {
      for (const char* side : {"A", "B"}) {
        auto p = n.params.find(side);
        if (p != n.params.end()) CropTo(p->second, in[0]);
      }
    }
    if (n.op == Op::PRelu) {  // a slope along H or W ([W], [H, W]) follows its input's crop
      auto p = n.params.find("slope");
      if (p != n.params.end()) CropTo(p->second, in[0]);
    }
    if (n.op == Op::LayerNorm) {
      int64_t rank = static_cast<int64_t>(in[0].size());
      int64_t axis = AttrInt(n, "axis");
      if (axis < 0) axis += rank;
      if (axis >= 0 && axis < rank) {
        Shape tail(in[0].begin() + axis, in[0].end());
        for (const char* name : {"scale", "bias"}) {
          auto p = n.params.find(name);
          if (p != n.params.end()) CropTo(p->second, tail);
        }
      }
    }
    try {
      shapes[n.output] = InferNodeShape(n, in);
    } catch (const InputError&) {
      return false;
    }
  }
  return true;
}

void ReplaceUses(Graph& g, const std::string& from, const std::string& to) {
  for (Node& n : g.nodes) {
    std::replace(n.inputs.begin(), n.inputs.end(), from, to);
  }
  std::replace(g.outputs.begin(), g.outputs.end(), from, to);
}

ShapeSummary SummarizeShapes(const Graph& g) {
  ShapeSummary s;
  ShapeMap shapes;
  try {
    shapes = VerifyGraph(g);
  } catch (const InputError&) {
    return s;
  }
  for (const auto& [name, shape] : shapes) {
    if (shape.size() != 4) continue;
    s.channels = std::max(s.channels, shape[1]);
    s.height = std::max(s.height, shape[2]);
    s.width = std::max(s.width, shape[3]);
  }
  return s;
}

}  // namespace fusefuzz
