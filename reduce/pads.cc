// Pass "pads": conv, pool and Pad node pads to 0, then each side minus one; a Pad node's fill
// value to 0 and its mode to "constant".
#include "reduce/geometry_util.h"
#include "reduce/reduce.h"

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

class PadsPass final : public NodeEditPass {
 public:
  std::string_view name() const override { return "pads"; }
  int modes() const override { return 3; }
  std::string mode_name(int mode) const override {
    return mode == 0 ? "zero" : mode == 1 ? "minus-1" : "plain-pad";
  }

 private:
  bool Eligible(const Node& n, int mode) const override {
    if (mode == 2) return n.op == Op::Pad && !PadIsPlain(n);
    return (IsConv(n) || IsWindowPool(n) || n.op == Op::Pad) && HasPads(n);
  }
  void Edit(Node& n, int mode) const override {
    if (mode == 2) {
      n.attrs.erase("mode");
      n.attrs.erase("value");
      return;
    }
    std::vector<int64_t> pads = PadsOf(n);
    for (int64_t& p : pads) p = mode == 0 ? 0 : ClampPad(p - 1);
    SetInts(n, "pads", pads);
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakePadsPass() { return std::make_unique<PadsPass>(); }

}  // namespace fusefuzz
