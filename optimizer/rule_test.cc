// The typed match data of rule.h: a rule's Match and Apply agree on one data type, checked by
// the compiler, and a match is applied only by the rule that made it.
#include "optimizer/rule.h"

#include <gtest/gtest.h>

#include <memory>
#include <type_traits>

#include "ir/graph.h"
#include "optimizer/rewriter.h"
#include "optimizer/test_util.h"

namespace fusefuzz::testing {
namespace {

struct Scale {
  double factor = 1;
};

// Returning another type's data from Match does not compile: Matched<T> converts only to
// MatchResultOf<T>, and a rule's Result is MatchResultOf<its Data>.
static_assert(std::is_convertible_v<Matched<Scale>, MatchResultOf<Scale>>);
static_assert(!std::is_convertible_v<Matched<int>, MatchResultOf<Scale>>);
static_assert(!std::is_convertible_v<Matched<NoData>, MatchResultOf<Scale>>);
static_assert(!std::is_convertible_v<Matched<Scale>, MatchResultOf<NoData>>);
static_assert(std::is_convertible_v<NoMatchReason, MatchResultOf<Scale>>);
static_assert(std::is_convertible_v<NoMatchReason, MatchResult>);
// Every rule is a TypedRule: Rule's constructor is private to it.
static_assert(!std::is_constructible_v<Rule>);

// Sets LeakyRelu alpha to the factor its Match computed.
class SetAlpha final : public TypedRule<Scale> {
 public:
  explicit SetAlpha(double factor) : factor_(factor) {}
  std::string_view name() const override { return "set-alpha"; }
  std::string_view summary() const override { return "test"; }
  RootOps roots() const override { return RootOps::Of({Op::LeakyRelu}); }
  Result Match(const MatchContext& ctx, int anchor) const override {
    if (AttrFloat(ctx.graph().nodes[size_t(anchor)], "alpha") == factor_) {
      return NoMatch("alpha already set");
    }
    return MakeMatch({anchor}, Scale{factor_});
  }
  void Apply(Found m, Rewriter& rw) const override {
    rw.SetAttr(m.nodes[0], "alpha", m.data.factor);
  }

 private:
  double factor_;
};

// On the heap: g++ 12 -O3 warns (maybe-uninitialized) about the destructor of a stack
// MatchContext's never-filled shape cache.
MatchResult MatchAt(const Rule& rule, const Graph& g, int anchor) {
  auto ctx = std::make_unique<MatchContext>(g);
  return rule.MatchErased(*ctx, anchor);
}

Graph LeakyGraph() {
  return MakeGraph({In("x", {1, 1, 2, 2})}, {MakeNode(Op::LeakyRelu, "r", {"x"}, "y")}, {"y"});
}

TEST(TypedRule, DataReachesApplyThroughTheErasedMatch) {
  Graph g = LeakyGraph();
  SetAlpha rule(0.25);
  MatchResult m = MatchAt(rule, g, 0);
  ASSERT_TRUE(m.ok()) << m.reason();
  EXPECT_EQ(m.match().nodes, std::vector<int>{0});
  Rewriter rw(g, "set-alpha", nullptr);
  rule.ApplyErased(m.take(), rw);
  EXPECT_EQ(rw.Commit(), "");
  EXPECT_EQ(AttrFloat(g.nodes[0], "alpha"), 0.25);
}

TEST(TypedRule, NoMatchKeepsTheReason) {
  Graph g = LeakyGraph();
  SetAlpha rule(0.01);
  g.nodes[0].attrs["alpha"] = 0.01;
  MatchResult m = MatchAt(rule, g, 0);
  EXPECT_FALSE(m.ok());
  EXPECT_EQ(m.reason(), "alpha already set");
}

TEST(TypedRuleDeathTest, AMatchOfAnotherRuleAborts) {
  Graph g = LeakyGraph();
  SetAlpha maker(0.25), other(0.5);
  MatchResult m = MatchAt(maker, g, 0);
  ASSERT_TRUE(m.ok());
  Rewriter rw(g, "set-alpha", nullptr);
  EXPECT_DEATH(other.ApplyErased(m.take(), rw), "rule 'set-alpha' was asked to apply a match");
}

}  // namespace
}  // namespace fusefuzz::testing
