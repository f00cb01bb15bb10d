// Pass "stride": conv and pool strides to 1, then halved. The output grows; candidates whose
// consumers no longer agree in shape fail verification and cost no query.
#include "reduce/geometry_util.h"
#include "reduce/reduce.h"

namespace fusefuzz {
namespace {

class StridePass final : public NodeEditPass {
 public:
  std::string_view name() const override { return "stride"; }
  int modes() const override { return 2; }
  std::string mode_name(int mode) const override { return mode == 0 ? "to-1" : "halve"; }

 private:
  bool Eligible(const Node& n, int) const override {
    if (!IsConv(n) && !IsWindowPool(n)) return false;
    const std::vector<int64_t> s = AttrInts(n, "strides");
    return s.size() == 2 && (s[0] > 1 || s[1] > 1);
  }
  void Edit(Node& n, int mode) const override {
    std::vector<int64_t> s = AttrInts(n, "strides");
    for (int64_t& v : s) v = mode == 0 ? 1 : std::max<int64_t>(1, v / 2);
    SetInts(n, "strides", s);
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakeStridePass() { return std::make_unique<StridePass>(); }

}  // namespace fusefuzz
