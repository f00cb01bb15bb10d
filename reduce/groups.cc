// Pass "groups": a grouped or depthwise conv becomes an ordinary one with the same numbers: W
// grows from [M, C/g, kH, kW] to [M, C, kH, kW] with zeros outside each output channel's group
// (block diagonal), so the semantics are unchanged and only the grouping feature goes away.
#include "reduce/geometry_util.h"
#include "reduce/reduce.h"

namespace fusefuzz {
namespace {

class GroupsPass final : public NodeEditPass {
 public:
  std::string_view name() const override { return "groups"; }

 private:
  bool Eligible(const Node& n, int) const override {
    return IsConv(n) && GetConvAttrs(n).group > 1;
  }
  void Edit(Node& n, int) const override {
    const int64_t g = GetConvAttrs(n).group;
    const Tensor& w = n.params.at("W");
    const int64_t m = w.shape[0], cpg = w.shape[1], taps = w.shape[2] * w.shape[3];
    const int64_t mpg = m / g;
    Tensor full({m, cpg * g, w.shape[2], w.shape[3]});
    for (int64_t o = 0; o < m; ++o) {
      const int64_t group = o / mpg;
      for (int64_t ci = 0; ci < cpg; ++ci) {
        for (int64_t k = 0; k < taps; ++k) {
          full.data[size_t(((o * cpg * g) + group * cpg + ci) * taps + k)] =
              w.data[size_t((o * cpg + ci) * taps + k)];
        }
      }
    }
    n.params["W"] = std::move(full);
    n.attrs.erase("group");
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakeGroupsPass() { return std::make_unique<GroupsPass>(); }

}  // namespace fusefuzz
