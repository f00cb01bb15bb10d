// Pools: MaxPool pads are -inf (never 0), AvgPool count_include_pad both ways, ceil mode, and
// the reference on odd shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernels/fast/fast_test_util.h"

namespace fusefuzz {
namespace {

using fast_test::CheckAgainstReference;
using fast_test::OneNode;
using fast_test::Random;
using fast_test::Values;

Node PoolNode(Op op, std::vector<int64_t> kernel, std::vector<int64_t> strides,
              std::vector<int64_t> pads, bool ceil = false, bool include_pad = false) {
  Node n;
  n.name = "pool";
  n.op = op;
  if (op != Op::GlobalAvgPool) {
    n.attrs["kernel_shape"] = std::move(kernel);
    n.attrs["strides"] = std::move(strides);
    n.attrs["pads"] = std::move(pads);
    n.attrs["ceil_mode"] = int64_t{ceil};
  }
  if (op == Op::AvgPool) n.attrs["count_include_pad"] = int64_t{include_pad};
  return n;
}

Tensor RunOne(const Node& n, const Tensor& x) {
  return RunFast(OneNode(n, {x.shape}), {{"x", x}}).at("out");
}

TEST(FastPool, MaxPoolPadsAreMinusInfinity) {
  Tensor out = RunOne(PoolNode(Op::MaxPool, {2, 2}, {1, 1}, {1, 1, 1, 1}),
                      Values({1, 1, 2, 2}, {-1, -2, -3, -4}));
  EXPECT_EQ(out.shape, (Shape{1, 1, 3, 3}));
  EXPECT_EQ(out.data, (std::vector<float>{-1, -1, -2, -1, -1, -2, -3, -3, -4}));
}

TEST(FastPool, MaxPoolPropagatesNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor out = RunOne(PoolNode(Op::MaxPool, {1, 2}, {1, 2}, {0, 0, 0, 0}),
                      Values({1, 1, 1, 4}, {nan, 1, 2, nan}));
  EXPECT_TRUE(std::isnan(out.data[0]));
  EXPECT_TRUE(std::isnan(out.data[1]));
}

TEST(FastPool, AvgPoolCountIncludePad) {
  const Tensor x = Values({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor incl = RunOne(PoolNode(Op::AvgPool, {2, 2}, {1, 1}, {1, 1, 1, 1}, false, true), x);
  EXPECT_EQ(incl.data, (std::vector<float>{0.25, 0.75, 0.5, 1, 2.5, 1.5, 0.75, 1.75, 1}));
  Tensor excl = RunOne(PoolNode(Op::AvgPool, {2, 2}, {1, 1}, {1, 1, 1, 1}, false, false), x);
  EXPECT_EQ(excl.data, (std::vector<float>{1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4}));
}

TEST(FastPool, CeilModeWindowOverhangingTheEnd) {
  const Tensor x = Values({1, 1, 1, 3}, {1, 2, 3});
  // Last window [2, 4) overhangs the input with no padding: never counted, so 3 / 1.
  Tensor a = RunOne(PoolNode(Op::AvgPool, {1, 2}, {1, 2}, {0, 0, 0, 0}, true, true), x);
  EXPECT_EQ(a.data, (std::vector<float>{1.5, 3}));
  // With one end pad the last window [2, 4) covers x[2] and the pad: included, 3 / 2.
  Tensor b = RunOne(PoolNode(Op::AvgPool, {1, 2}, {1, 2}, {0, 0, 0, 1}, true, true), x);
  EXPECT_EQ(b.data, (std::vector<float>{1.5, 1.5}));
  Tensor c = RunOne(PoolNode(Op::MaxPool, {1, 2}, {1, 2}, {0, 0, 0, 0}, true), x);
  EXPECT_EQ(c.data, (std::vector<float>{2, 3}));
}

TEST(FastPool, GlobalAvgPool) {
  Tensor out =
      RunOne(PoolNode(Op::GlobalAvgPool, {}, {}, {}), Values({1, 2, 1, 3}, {1, 2, 3, -6, 0, 3}));
  EXPECT_EQ(out.shape, (Shape{1, 2, 1, 1}));
  EXPECT_EQ(out.data, (std::vector<float>{2, -1}));
}

TEST(FastPool, MatchesReference) {
  uint64_t seed = 200;
  const Shape x = {2, 3, 11, 10};
  for (Op op : {Op::MaxPool, Op::AvgPool}) {
    for (bool ceil : {false, true}) {
      for (bool incl : {false, true}) {
        const std::vector<Node> nodes = {
            PoolNode(op, {3, 3}, {2, 2}, {1, 1, 1, 1}, ceil, incl),
            PoolNode(op, {2, 3}, {3, 2}, {0, 2, 1, 0}, ceil, incl),
            PoolNode(op, {5, 5}, {1, 1}, {2, 2, 2, 2}, ceil, incl),
            PoolNode(op, {4, 2}, {4, 3}, {3, 1, 2, 1}, ceil, incl),
        };
        for (const Node& n : nodes) {
          Graph g = OneNode(n, {x});
          const std::string what = std::string(OpName(op)) + (ceil ? " ceil" : "") +
                                   (incl ? " incl" : "") + " k" +
                                   ShapeToString(AttrInts(n, "kernel_shape"));
          CheckAgainstReference(g, {{"x", Random(x, seed++)}}, what, 2);
        }
      }
    }
  }
  Graph g = OneNode(PoolNode(Op::GlobalAvgPool, {}, {}, {}), {{2, 3, 13, 17}});
  CheckAgainstReference(g, {{"x", Random({2, 3, 13, 17}, seed, 5, 7)}}, "global");
}

}  // namespace
}  // namespace fusefuzz
