// Pass "pads": conv, pool and Pad node pads to 0, then each side minus one; a Pad node's fill
// value to 0 and its mode to "constant".
#include "harness/reduce/geometry_util.h"
#include "harness/reduce/reduce.h"

namespace fusefuzz {
namespace {

bool HasPads(const Node& n) {
  for (int64_t p : PadsOf(n)) {
    if (p > 0) return true;
  }
  return false;
}

bool PadIsPlain(const Node& n) {
  return AttrString(n, "mode") == "constant" && AttrFloat(n, "value") == 0;
}

class PadsPass final : public ReducePass {
 public:
  std::string_view name() const override { return "pads"; }
  int modes() const override { return 3; }
  std::string mode_name(int mode) const override {
    return mode == 0 ? "zero" : mode == 1 ? "minus-1" : "plain-pad";
  }
  int64_t Targets(ReduceContext& ctx, int mode) const override {
    return static_cast<int64_t>(Eligible(ctx.current().graph, mode).size());
  }
  std::optional<ReduceCase> Apply(ReduceContext& ctx, int mode, int64_t begin,
                                  int64_t end) const override {
    const std::vector<size_t> eligible = Eligible(ctx.current().graph, mode);
    ReduceCase c = ctx.current();
    for (int64_t t = begin; t < end; ++t) {
      Node& n = c.graph.nodes[eligible[static_cast<size_t>(t)]];
      if (mode == 2) {
        n.attrs.erase("mode");
        n.attrs.erase("value");
        continue;
      }
      std::vector<int64_t> pads = PadsOf(n);
      for (int64_t& p : pads) p = mode == 0 ? 0 : ClampPad(p - 1);
      SetInts(n, "pads", pads);
    }
    return c;
  }

 private:
  static std::vector<size_t> Eligible(const Graph& g, int mode) {
    std::vector<size_t> out;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      bool ok = false;
      if (mode == 2) {
        ok = n.op == Op::Pad && !PadIsPlain(n);
      } else {
        ok = (IsConv(n) || IsWindowPool(n) || n.op == Op::Pad) && HasPads(n);
      }
      if (ok) out.push_back(i);
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakePadsPass() { return std::make_unique<PadsPass>(); }

}  // namespace fusefuzz
