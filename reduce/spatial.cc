// Pass "spatial": graph inputs' H or W halved (then minus one), keeping the top-left corner;
// constants with spatial dims are cropped to match. Candidates whose convs/pools no longer fit,
// or whose branches stop agreeing in shape, fail verification and cost no query.
#include "reduce/reduce.h"

namespace fusefuzz {
namespace {

struct SpatialMode {
  const char* name;
  size_t dim;  // 2 = H, 3 = W
  bool halve;  // else minus one
};
constexpr SpatialMode kModes[] = {
    {"halve-h", 2, true}, {"halve-w", 3, true}, {"dec-h", 2, false}, {"dec-w", 3, false}};

class SpatialPass final : public ReducePass {
 public:
  std::string_view name() const override { return "spatial"; }
  int modes() const override { return 4; }
  std::string mode_name(int mode) const override { return kModes[mode].name; }
  int64_t Targets(ReduceContext& ctx, int mode) const override {
    return static_cast<int64_t>(Eligible(ctx.current().graph, kModes[mode].dim).size());
  }
  std::optional<ReduceCase> Apply(ReduceContext& ctx, int mode, int64_t begin,
                                  int64_t end) const override {
    const SpatialMode& m = kModes[mode];
    const std::vector<size_t> eligible = Eligible(ctx.current().graph, m.dim);
    ReduceCase c = ctx.current();
    for (int64_t t = begin; t < end; ++t) {
      ValueInfo& in = c.graph.inputs[eligible[static_cast<size_t>(t)]];
      const int64_t d = in.shape[m.dim];
      in.shape[m.dim] = m.halve ? d / 2 : d - 1;
      Tensor& tensor = c.inputs.at(in.name);
      tensor = SliceDim(tensor, m.dim, 0, in.shape[m.dim]);
    }
    if (!RefitConstants(c.graph)) return std::nullopt;
    return c;
  }

 private:
  static std::vector<size_t> Eligible(const Graph& g, size_t dim) {
    std::vector<size_t> out;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      const Shape& s = g.inputs[i].shape;
      if (s.size() == 4 && s[dim] > 1) out.push_back(i);
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakeSpatialPass() { return std::make_unique<SpatialPass>(); }

}  // namespace fusefuzz
