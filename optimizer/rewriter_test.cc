#include "optimizer/rewriter.h"

#include <gtest/gtest.h>

#include "optimizer/test_util.h"

namespace fusefuzz::testing {
namespace {

struct Recorder : RewriteListener {
  std::vector<Mutation> seen;
  void OnMutation(const Mutation& m) override { seen.push_back(m); }
};

Graph Chain() {
  return MakeGraph({In("x", {1, 1, 2, 2})},
                   {MakeNode(Op::Relu, "a", {"x"}, "va"), MakeNode(Op::Tanh, "b", {"va"}, "vb"),
                    MakeNode(Op::Sigmoid, "c", {"vb"}, "y")},
                   {"y"});
}

TEST(Rewriter, IndicesStayValidUntilCommit) {
  Graph g = Chain();
  Recorder rec;
  Rewriter rw(g, "test", &rec);
  rw.ReplaceAllUsesWith("vb", "va");
  rw.EraseNode(1);
  rw.InsertNodeBefore(0, MakeNode(Op::Identity, "i", {"x"}, "vi"));
  rw.SetInput(2, 0, "va");  // index 2 is still "c"
  EXPECT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(rw.Commit(), "");
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0].name, "i");
  EXPECT_EQ(g.nodes[1].name, "a");
  EXPECT_EQ(g.nodes[2].name, "c");
  EXPECT_EQ(rw.mutations(), 4);
  ASSERT_EQ(rec.seen.size(), 4u);
  EXPECT_EQ(rec.seen[0].kind, MutationKind::kReplaceAllUses);
  EXPECT_EQ(rec.seen[1].kind, MutationKind::kEraseNode);
  EXPECT_EQ(rec.seen[1].node, "b");
}

TEST(Rewriter, CommitRefusesErasingAUsedValue) {
  Graph g = Chain();
  Rewriter rw(g, "test");
  rw.EraseNode(1);
  EXPECT_NE(rw.Commit().find("still used by node 'c'"), std::string::npos);
}

TEST(Rewriter, CommitRefusesErasingAGraphOutput) {
  Graph g = Chain();
  Rewriter rw(g, "test");
  rw.EraseNode(2);
  EXPECT_NE(rw.Commit().find("graph output 'y'"), std::string::npos);
}

TEST(Rewriter, ErasedOutputMayLiveOnElsewhere) {
  Graph g = Chain();
  Rewriter rw(g, "test");
  rw.SetOutput(1, "y");
  rw.EraseNode(2);
  EXPECT_EQ(rw.Commit(), "");
  EXPECT_EQ(g.nodes.back().output, "y");
}

TEST(Rewriter, FreshNamesAreUnique) {
  Graph g = Chain();
  Rewriter rw(g, "test");
  EXPECT_EQ(rw.FreshValueName("va"), "va_1");
  EXPECT_EQ(rw.FreshValueName("va"), "va_2");
  EXPECT_EQ(rw.FreshNodeName("new"), "new");
  EXPECT_EQ(rw.FreshNodeName("new"), "new_1");
  EXPECT_EQ(rw.FreshNodeName("x"), "x_1");  // graph input names are taken too
}

}  // namespace
}  // namespace fusefuzz::testing
