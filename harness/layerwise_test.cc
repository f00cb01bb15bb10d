// Teacher-forced layer-wise judgement (`check --layers`, issue 43): the reference of a layer is
// computed from the forced integers before it, every boundary is judged on its own, exposing
// the boundaries leaves the embedded engine's fusion as it was, and a wrong layer is named.
#include "harness/layerwise.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "generators/seeded_inputs.h"
#include "ir/json_io.h"
#include "kernels/reference/teacher_forced.h"
#include "targets/target.h"

namespace fusefuzz::testing {
namespace {

Graph QuantGraph(const std::string& name) {
  return ReadGraphFile(std::string(FUSEFUZZ_SOURCE_DIR) + "/tests/data/quant/" + name);
}

// Forcing `xq` (Q of the graph input: scale 1/32, zero point 128) to other integers gives the
// reference of the next layer exactly as if the input had dequantized to them: the forced
// integers, not the reference's, feed the layers after them.
TEST(TeacherForced, LaterLayersReadTheForcedIntegers) {
  const Graph g = QuantGraph("qdq-conv-relu.json");
  const TensorMap in = InputsFromSeed(g, 3);
  const RefTensorMap plain = RunReference(g, in, true);
  Tensor forced = ToFloatTensor(plain.at("xq"));
  Tensor moved_input = in.at("x");
  for (size_t i = 0; i < forced.data.size(); i += 3) {
    forced.data[i] = std::min(forced.data[i] + 5.0f, 255.0f);
  }
  for (size_t i = 0; i < forced.data.size(); ++i) {
    moved_input.data[i] = (forced.data[i] - 128.0f) * 0.03125f;  // exact in float32
  }
  const RefTensorMap teacher = RunReferenceTeacherForced(g, in, {{"xq", forced}}, true);
  const RefTensorMap moved = RunReference(g, {{"x", moved_input}}, true);
  // The forced value itself is judged against what the reference computed for it.
  EXPECT_EQ(teacher.at("xq").value, plain.at("xq").value);
  EXPECT_NE(teacher.at("rq").grid_t, plain.at("rq").grid_t);
  EXPECT_EQ(teacher.at("rq").grid_t, moved.at("rq").grid_t);
  EXPECT_EQ(teacher.at("rq").value, moved.at("rq").value);
}

// A forced integer the type cannot hold is not forced (a DequantizeLinear must not be fed it).
TEST(TeacherForced, OutOfRangeIntegersKeepTheReferences) {
  const Graph g = QuantGraph("qdq-conv-relu.json");
  const TensorMap in = InputsFromSeed(g, 3);
  const RefTensorMap plain = RunReference(g, in, true);
  Tensor forced = ToFloatTensor(plain.at("xq"));
  forced.data[0] = 300;
  forced.data[1] = 2.5f;
  const RefTensorMap teacher = RunReferenceTeacherForced(g, in, {{"xq", forced}}, true);
  EXPECT_EQ(teacher.at("rq").grid_t, plain.at("rq").grid_t);
}

TEST(Layerwise, EveryBoundaryJudgedWithTheFusionUnchanged) {
  auto target = MakeEmbeddedTarget();
  for (const char* name : {"qdq-conv-relu.json", "qdq-conv-residual-i8.json",
                           "qdq-maxpool-add.json", "qlinear-conv-add.json"}) {
    SCOPED_TRACE(name);
    const Graph g = QuantGraph(name);
    const TensorMap in = InputsFromSeed(g, 1);
    CheckOptions opts;
    opts.oracle.kind = OracleKind::kSigma;
    RunRequest req;
    req.optimize = true;
    const TargetResult plain = target->Run(g, in, req);
    ASSERT_EQ(plain.status, RunStatus::kOk) << plain.message;
    const LayerwiseResult r = CheckLayers(*target, g, in, opts, plain);
    ASSERT_TRUE(r.ran) << r.message;
    EXPECT_TRUE(r.same_fusion());
    // The QLinear graph has nothing left to fuse; the QDQ ones fuse with the boundaries exposed.
    EXPECT_EQ(r.rewrites_plain.empty(), std::string(name) == "qlinear-conv-add.json");
    EXPECT_EQ(r.first_departing, -1);
    EXPECT_GE(r.layers.size(), QuantBoundaries(g).size());
    for (const LayerCheck& l : r.layers) {
      EXPECT_TRUE(l.exposed) << l.value;
      EXPECT_EQ(l.failed, 0) << l.value;
      EXPECT_GT(l.elements, 0) << l.value;
    }
    EXPECT_GE(r.min_informative_share, 0.95);
  }
}

// A bias off the int32 grid fused anyway (fault bias-scale-unchecked) moves one channel of the
// conv's own boundary by tens of steps: that boundary is the first departing layer, in that
// channel.
TEST(Layerwise, AWrongLayerIsTheFirstDeparting) {
  auto target = MakeEmbeddedTarget();
  const std::string dir = std::string(FUSEFUZZ_SOURCE_DIR) + "/tests/data/check/";
  const Graph g = ReadGraphFile(dir + "layers-bias-scale.json");
  const TensorMap in = ReadTensorsFile(dir + "layers-bias-scale.inputs.json");
  CheckOptions opts;
  opts.oracle.kind = OracleKind::kSigma;
  opts.opt.inject = {"bias-scale-unchecked"};
  RunRequest req;
  req.optimize = true;
  req.opt = opts.opt;
  const TargetResult plain = target->Run(g, in, req);
  ASSERT_EQ(plain.status, RunStatus::kOk) << plain.message;
  const LayerwiseResult r = CheckLayers(*target, g, in, opts, plain);
  ASSERT_TRUE(r.ran) << r.message;
  EXPECT_TRUE(r.same_fusion());
  ASSERT_GE(r.first_departing, 0);
  const LayerCheck& l = r.layers[static_cast<size_t>(r.first_departing)];
  EXPECT_EQ(l.value, "v4");
  EXPECT_GE(l.worst_excess, 10);
  EXPECT_EQ(l.failing_channels, std::vector<int64_t>{13});
}

// A boundary the model answers dequantized (rq, whose DequantizeLinear is the graph output y)
// is not exposed again: one value answered twice is refused by PyTorch's adapter ("two graph
// outputs are one value of the float model": MobileNetV2's logits after quantize --flavor
// pytorch). Its integers are read back from y, and it is still judged on the grid.
TEST(Layerwise, ABoundaryAnsweredDequantizedIsReadBackNotExposed) {
  const Graph g = QuantGraph("qdq-conv-relu.json");
  const Graph exposed = WithBoundaryOutputs(g);
  EXPECT_NE(std::find(exposed.outputs.begin(), exposed.outputs.end(), "xq"), exposed.outputs.end());
  EXPECT_EQ(std::find(exposed.outputs.begin(), exposed.outputs.end(), "rq"), exposed.outputs.end());
  auto target = MakeTarget(EmbeddedSpecText(), {});
  const TensorMap in = InputsFromSeed(g, 1);
  RunRequest req;
  req.optimize = true;
  const LayerwiseResult r = CheckLayers(*target, g, in, {}, target->Run(g, in, req));
  ASSERT_TRUE(r.ran) << r.message;
  auto rq = std::find_if(r.layers.begin(), r.layers.end(),
                         [](const LayerCheck& l) { return l.value == "rq"; });
  ASSERT_NE(rq, r.layers.end());
  EXPECT_TRUE(rq->exposed);
  EXPECT_TRUE(rq->integer);
  EXPECT_EQ(rq->failed, 0);
  EXPECT_GT(rq->informative, 0);
}

}  // namespace
}  // namespace fusefuzz::testing
