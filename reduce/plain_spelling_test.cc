// Pass plain-spelling (issue 51): a spelling the failure needs stays, the others go.
#include <gtest/gtest.h>

#include "ir/json_io.h"
#include "reduce/reduce.h"

namespace fusefuzz {
namespace {

TEST(PlainSpelling, KeepsTheSpellingTheFailureNeedsAndDropsTheOthers) {
  std::string w;
  for (int i = 0; i < 18; ++i) w += (i ? ",0.5" : "0.5");
  ReduceCase c;
  c.graph = ParseGraph(R"({"format":"fusefuzz-graph","version":2,
    "inputs":[{"name":"x","shape":[1,2,3,3]}],
    "nodes":[{"name":"c","op":"Conv","inputs":["x"],"outputs":["y"],"spelling":"torch.F.conv2d",
              "params":{"W":{"shape":[1,2,3,3],"data":[)" +
                       w + R"(]}}},
             {"name":"r","op":"Relu","inputs":["y"],"outputs":["z"],"spelling":"torch.F.relu"}],
    "outputs":["z"]})");
  c.inputs["x"] = Tensor({1, 2, 3, 3}, 1.0f);
  std::vector<std::unique_ptr<ReducePass>> passes;
  passes.push_back(MakePlainSpellingPass());
  auto needs_f_relu = [](const ReduceCase& k) {
    for (const Node& n : k.graph.nodes) {
      if (n.spelling == "torch.F.relu") return true;
    }
    return false;
  };
  ReduceStats st;
  const ReduceCase r = Reduce(c, passes, needs_f_relu, {}, &st);
  EXPECT_EQ(r.graph.nodes.at(0).spelling, "");
  EXPECT_EQ(r.graph.nodes.at(1).spelling, "torch.F.relu");
  EXPECT_LT(SizeOf(r), SizeOf(c));
}

}  // namespace
}  // namespace fusefuzz
