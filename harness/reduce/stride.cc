// Pass "stride": conv and pool strides to 1, then halved. The output grows; candidates whose
// consumers no longer agree in shape fail verification and cost no query.
#include "harness/reduce/geometry_util.h"
#include "harness/reduce/reduce.h"

namespace fusefuzz {
namespace {

class StridePass final : public ReducePass {
 public:
  std::string_view name() const override { return "stride"; }
  int modes() const override { return 2; }
  std::string mode_name(int mode) const override { return mode == 0 ? "to-1" : "halve"; }
  int64_t Targets(ReduceContext& ctx, int) const override {
    return static_cast<int64_t>(Eligible(ctx.current().graph).size());
  }
  std::optional<ReduceCase> Apply(ReduceContext& ctx, int mode, int64_t begin,
                                  int64_t end) const override {
    const std::vector<size_t> eligible = Eligible(ctx.current().graph);
    ReduceCase c = ctx.current();
    for (int64_t t = begin; t < end; ++t) {
      Node& n = c.graph.nodes[eligible[static_cast<size_t>(t)]];
      std::vector<int64_t> s = AttrInts(n, "strides");
      for (int64_t& v : s) v = mode == 0 ? 1 : std::max<int64_t>(1, v / 2);
      SetInts(n, "strides", s);
    }
    return c;
  }

 private:
  static std::vector<size_t> Eligible(const Graph& g) {
    std::vector<size_t> out;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      if (!IsConv(n) && !IsWindowPool(n)) continue;
      std::vector<int64_t> s = AttrInts(n, "strides");
      if (s.size() == 2 && (s[0] > 1 || s[1] > 1)) out.push_back(i);
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakeStridePass() { return std::make_unique<StridePass>(); }

}  // namespace fusefuzz
