// Graph format migrations (ir/graph_migrate.h).
#include "ir/graph_migrate.h"

#include "ir/broadcast.h"
#include "ir/error.h"
#include "ir/verifier.h"

namespace fusefuzz {
namespace {

// A version-1 slope of `x`'s channel count C > 1 as the version-2 per-channel shape.
void ToPerChannel(Tensor& slope, const Shape& x) {
  if (slope.shape.size() != 1 || slope.shape[0] == 1) return;
  if (x.size() >= 2 && slope.shape[0] == x[1]) slope.shape = PerChannelSlopeShape(x);
}

}  // namespace

void MigrateV1PReluSlopes(Graph& g) {
  ShapeMap shapes;
  for (const auto& in : g.inputs) shapes[in.name] = in.shape;
  for (Node& n : g.nodes) {
    std::vector<Shape> in;
    for (const auto& v : n.inputs) {
      auto it = shapes.find(v);
      if (it == shapes.end()) return;
      in.push_back(it->second);
    }
    if (in.empty()) return;
    if (n.op == Op::PRelu) {
      if (auto it = n.params.find("slope"); it != n.params.end()) ToPerChannel(it->second, in[0]);
    }
    if (n.op == Op::FusedConv) {
      for (EpilogueStep& s : n.epilogue) {
        if (s.kind != EpilogueKind::kActivation || s.act != Op::PRelu) continue;
        auto it = s.params.find("slope");
        if (it == s.params.end() || it->second.shape.size() != 1 || it->second.shape[0] == 1) {
          continue;
        }
        it->second.shape = {it->second.shape[0], 1, 1};  // conv output is NCHW
      }
    }
    try {
      shapes[n.output] = InferNodeShape(n, in);
    } catch (const InputError&) {
      return;
    }
  }
}

}  // namespace fusefuzz
