// Internal to the generator: the graph under construction, and the emitters of single ops with
// parameters chosen so that every shape is valid (never generate-and-reject).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "generators/choice_source.h"
#include "generators/gen_config.h"
#include "ir/graph.h"

namespace fusefuzz::gen {

enum class InputKind { kGeneral, kAwayFromZero };

// Options of one conv emission.
struct ConvOpts {
  bool same_shape = false;  // M == C, stride 1, "same" pads: output shape == input shape
  bool no_pads = false;
  int64_t out_channels = -1;  // -1: random
  int64_t kernel = -1;        // -1: random (square)
};

class Builder {
 public:
  Builder(ChoiceSource& src, const GenConfig& cfg) : src_(src), cfg_(cfg) {}

  ChoiceSource& src() { return src_; }
  const GenConfig& cfg() const { return cfg_; }
  Graph& graph() { return g_; }
  TensorMap& inputs() { return inputs_; }
  const Shape& ShapeOf(const std::string& v) const { return shapes_.at(v); }
  bool Allowed(Op op) const { return cfg_.allowed_ops.count(op) > 0; }
  int64_t node_count() const { return static_cast<int64_t>(g_.nodes.size()); }

  // New graph input with generated values.
  std::string AddInput(const Shape& s, InputKind kind = InputKind::kGeneral);
  // Appends a node; its output shape comes from shape inference.
  std::string AddNode(Op op, std::vector<std::string> ins, AttrMap attrs = {}, ParamMap params = {},
                      std::vector<EpilogueStep> epilogue = {});

  // Removes nodes [first, end) and their values (a block that is rewritten before anything reads
  // it: the quantized generator's scratch chains).
  void RemoveNodesFrom(size_t first);
  // Removes nodes whose output no graph output depends on (after g.outputs is set).
  void PruneDeadNodes();

  // Value samplers (float32-exact results).
  float Float(double lo, double hi) { return static_cast<float>(src_.Uniform(lo, hi)); }
  float Sign() { return src_.Bool(0.5) ? -1.0f : 1.0f; }
  // A tensor whose elements come from a sub-stream seeded by one draw, so a tensor costs one
  // choice (short traces; an exhausted bytes source still yields varied values).
  Tensor UniformTensor(const Shape& s, double lo, double hi);
  Tensor InputTensor(const Shape& s, InputKind kind);
  Tensor ConvWeights(const Shape& s, int64_t fan_in);
  Tensor Bias(int64_t m);
  Tensor AwayFromZero(const Shape& s);  // +-[0.5, 2]

  // Single-op emitters: each takes a rank-4 value and returns the new value.
  std::string EmitOp(Op op, const std::string& x, int64_t budget);
  std::string EmitConv(const std::string& x, const ConvOpts& o = {});
  std::string EmitFusedConv(const std::string& x, const ConvOpts& o = {});
  std::string EmitBatchNorm(const std::string& x);
  std::string EmitNorm(Op op, const std::string& x);
  std::string EmitActivation(Op op, const std::string& x);
  std::string EmitBinary(Op op, const std::string& x, int64_t budget);
  std::string EmitBinaryWith(Op op, const std::string& x, const std::string& y);
  // `op` with a constant operand on either side (Div: always the divisor), of any broadcast
  // shape that keeps x's shape (ConstShape), values by ConstOperand.
  std::string EmitBinaryConst(Op op, const std::string& x);
  // A constant's shape against an operand of shape `other`: scalar or per-channel with
  // const_foldable, else any other mask of the axes where `other` is > 1; rank 4 or shorter.
  Shape ConstShape(const Shape& other);
  // Values of a constant operand of `op`, in one sign class (mixed, positive, negative, with
  // zeros). A divisor is in +-[0.5, 2] and never has zeros.
  Tensor ConstOperand(Op op, const Shape& s, bool divisor);
  std::string EmitPad(const std::string& x, bool zero_constant_only = false);
  std::string EmitPool(Op op, const std::string& x);
  // ReduceMean (keepdims 1) or a unary math op; sqrt, log and 1/x of Exp(x) (2 nodes) so that
  // their input is positive (gen_math.cc).
  std::string EmitMath(Op op, const std::string& x, int64_t budget);
  std::string EmitConcat(const std::string& x, const std::string& y = "");
  // A classifier head on rank-4 x ending in a rank-2 value (gen_head.cc); `op` is one of the
  // head's ops (Flatten, Reshape, Gemm, MatMul) that the head must contain (any other op: the
  // head picks both by the allowed ones). Nothing but the
  // head's own nodes may consume a rank-2 value, so a head only ends a graph.
  // At most `budget` (>= 2) nodes.
  std::string EmitHead(Op op, const std::string& x, int64_t budget);
  // Whether EmitHead can run: a flatten op and a matrix op are allowed.
  bool HeadAllowed() const;

  // Random allowed activation (weighted by op_weights), or nullopt when none is allowed.
  std::optional<Op> PickActivation();
  // Random allowed activation, uniform over the allowed ones (rare ones as often as Relu).
  std::optional<Op> PickActivationUniform();
  bool AnyActivation();
  // Attrs and params of an activation applied to a tensor of shape `x`; an `epilogue` step's
  // PRelu slope is per channel or [1], a node's may broadcast along other dims too.
  void ActivationParams(Op act, const Shape& x, bool epilogue, AttrMap* attrs, ParamMap* params);
  // A PRelu slope for a node on `x` (ONNX broadcasting, see PRelu in docs/graph-format.md).
  Shape PReluSlopeShape(const Shape& x, bool epilogue);
  // Live values with exactly this shape (for second operands, residuals, repeats).
  std::vector<std::string> ValuesWithShape(const Shape& s) const;
  // All values in creation order: graph inputs first, then node outputs.
  const std::vector<std::string>& values() const { return values_; }

 private:
  int64_t ChooseGroup(int64_t c);
  ChoiceSource& src_;
  const GenConfig& cfg_;
  Graph g_;
  TensorMap inputs_;
  std::map<std::string, Shape> shapes_;
  std::vector<std::string> values_;
  int next_node_ = 0, next_value_ = 0, next_input_ = 0;
};

// Values at which activations change behaviour (for inputs and clip bounds).
const std::vector<float>& KinkValues();

}  // namespace fusefuzz::gen
