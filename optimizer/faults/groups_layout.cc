// groups-layout: conv-bn-fold that scales the weights of output channel m by s[m % (M/group)],
// the channel's index INSIDE its group, instead of s[m].
//
// Reproduces the grouped/depthwise weight-layout bug of BN folds that walk the weights group by
// group (or treat [M, C/group, kH, kW] as if the scale axis were per group): right for ordinary
// convs (group 1, where the in-group index is m), wrong for grouped and depthwise convs; for a
// depthwise conv with multiplier 1 every channel is scaled by s[0]. The bias is folded with the
// right s[m]. Visible only with group > 1 and a BN scale that differs between channels with the
// same in-group index.
#include <memory>

#include "optimizer/faults/fault_util.h"
#include "optimizer/faults/faults.h"

namespace fusefuzz {
namespace {

class GroupsLayout final : public ConvBnFoldFault {
 public:
  std::string_view name() const override { return "groups-layout"; }
  std::string_view summary() const override {
    return "Conv -> BatchNorm => Conv whose weights of channel m are scaled by s[m % (M/group)]; "
           "wrong for group > 1 with non-uniform BN scale (depthwise: all use s[0])";
  }

 protected:
  FoldKnobs knobs() const override {
    FoldKnobs k;
    k.in_group_index = true;
    return k;
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultGroupsLayout() { return std::make_unique<GroupsLayout>(); }

}  // namespace fusefuzz
