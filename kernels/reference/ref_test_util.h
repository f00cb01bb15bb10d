// Test helpers for the reference interpreter: graphs built as C++ structs (one node or a chain).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kernels/reference/reference.h"

namespace fusefuzz::reftest {

inline Tensor T(Shape shape, std::vector<float> data) {
  return Tensor(std::move(shape), std::move(data));
}

inline Node MakeNode(Op op, AttrMap attrs = {}, ParamMap params = {}) {
  Node n;
  n.name = std::string(OpName(op)) + "_node";
  n.op = op;
  n.attrs = std::move(attrs);
  n.params = std::move(params);
  return n;
}

// Runs the single node `n` on graph inputs in0, in1, ... (given in order) and returns its output.
inline RefTensor RunOp(Node n, const std::vector<Tensor>& inputs) {
  Graph g;
  TensorMap feed;
  n.inputs.clear();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string name = "in" + std::to_string(i);
    g.inputs.push_back({name, inputs[i].shape});
    feed[name] = inputs[i];
    n.inputs.push_back(name);
  }
  n.output = "out";
  g.nodes.push_back(std::move(n));
  g.outputs = {"out"};
  RefTensorMap out = RunReference(g, feed);
  return out.at("out");
}

// Values must match to `tol` (exactly by default); NaN expected matches NaN.
inline void ExpectValues(const RefTensor& t, const Shape& shape, const std::vector<double>& want,
                         double tol = 0) {
  ASSERT_EQ(t.shape, shape);
  ASSERT_EQ(t.value.size(), want.size());
  ASSERT_EQ(t.mag.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(t.value[i])) << "element " << i;
    } else {
      EXPECT_NEAR(t.value[i], want[i], tol) << "element " << i;
    }
  }
}

inline void ExpectMags(const RefTensor& t, const std::vector<double>& want, double tol = 0) {
  ASSERT_EQ(t.mag.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(t.mag[i], want[i], tol) << "element " << i;
}

}  // namespace fusefuzz::reftest
