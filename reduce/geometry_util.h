// Reading and writing the window geometry of conv and pool nodes, for the kernel, dilation,
// stride and pads passes, and the node-by-node target loop of kernel, dilation, stride and groups.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "reduce/reduce.h"

namespace fusefuzz {

inline bool IsConv(const Node& n) { return n.op == Op::Conv || n.op == Op::FusedConv; }
inline bool IsWindowPool(const Node& n) { return n.op == Op::MaxPool || n.op == Op::AvgPool; }

inline void SetInts(Node& n, const char* name, std::vector<int64_t> v) {
  n.attrs[name] = std::move(v);
}

// Pads [t, l, b, r] of a conv, pool or Pad node.
inline std::vector<int64_t> PadsOf(const Node& n) { return AttrInts(n, "pads"); }

inline int64_t ClampPad(int64_t p) { return std::max<int64_t>(p, 0); }

// A pass whose targets are single nodes edited independently, in graph order (kernel, dilation,
// stride, groups, pads). Targets and Apply number the nodes with the same scan, so a chunk
// [begin, end) names the same nodes in both; eligibility may depend on the mode.
class NodeEditPass : public ReducePass {
 public:
  int64_t Targets(ReduceContext& ctx, int mode) const final {
    return static_cast<int64_t>(EligibleNodes(ctx.current().graph, mode).size());
  }
  std::optional<ReduceCase> Apply(ReduceContext& ctx, int mode, int64_t begin,
                                  int64_t end) const final {
    const std::vector<size_t> eligible = EligibleNodes(ctx.current().graph, mode);
    ReduceCase c = ctx.current();
    for (int64_t t = begin; t < end; ++t) {
      Edit(c.graph.nodes[eligible[static_cast<size_t>(t)]], mode);
    }
    return c;
  }

 private:
  virtual bool Eligible(const Node& n, int mode) const = 0;
  virtual void Edit(Node& n, int mode) const = 0;

  std::vector<size_t> EligibleNodes(const Graph& g, int mode) const {
    std::vector<size_t> out;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (Eligible(g.nodes[i], mode)) out.push_back(i);
    }
    return out;
  }
};

}  // namespace fusefuzz
