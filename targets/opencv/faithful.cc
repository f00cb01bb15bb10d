#include "targets/opencv/faithful.h"

namespace fusefuzz::opencv {
namespace {

std::string ShapeText(const Shape& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? "," : "") + std::to_string(s[i]);
  return t + "]";
}

// An operand shape OpenCV's Eltwise / Scale import broadcasts as ONNX does: all ones, one value
// per channel of a 4-D result of batch 1, or the result's own shape (left-padded with ones).
bool FaithfulOperand(const Shape& operand, const Shape& result) {
  Shape s = operand;
  while (s.size() < result.size()) s.insert(s.begin(), 1);
  if (s == result) return true;
  bool ones = true;
  for (int64_t d : s) ones = ones && d == 1;
  if (ones) return true;
  // Per channel only in a batch of one: with N > 1 its importer adds a [1,C,1,1] constant along
  // the batch axis when N == C (Add, Sub), and refuses it when N != C.
  return result.size() == 4 && result[0] == 1 && s.size() == 4 && s[0] == 1 && s[1] == result[1] &&
         s[2] == 1 && s[3] == 1;
}

bool Binary(Op op) { return op == Op::Add || op == Op::Sub || op == Op::Mul || op == Op::Div; }

bool AllOnes(const Shape& s) {
  for (int64_t d : s) {
    if (d != 1) return false;
  }
  return true;
}

// The single-node deviations (each with its test in opencv_target_test.cc).
void RefuseNode(const Node& n, const ShapeMap& shapes) {
  const std::string at = "node '" + n.name + "' (" + std::string(OpName(n.op)) + ") ";
  if (n.op == Op::PRelu) {
    const Shape& slope = n.params.at("slope").shape;
    const Shape& x = shapes.at(n.inputs[0]);
    const bool per_channel = x.size() == 4 && NumElements(slope) == x[1] &&
                             (slope.size() == 3 || (slope.size() == 4 && slope[0] == 1)) &&
                             slope[slope.size() - 1] == 1 && slope[slope.size() - 2] == 1;
    if (!AllOnes(slope) && !per_channel) {
      throw Unsupported(at + "has a slope of shape " + ShapeText(slope) +
                        ": OpenCV 4.6 imports PRelu as ChannelsPReLU, one slope per channel, and "
                        "runs other slopes with wrong values");
    }
  }
  if (n.op == Op::MaxPool || n.op == Op::AvgPool) {
    const PoolAttrs p = GetPoolAttrs(n);
    if (p.dilation_h != 1 || p.dilation_w != 1) {
      throw Unsupported(at + "is dilated: OpenCV 4.6's pooling ignores dilations");
    }
    // ceil_mode matters only where a last, partial window is added; OpenCV 4.6 counts such
    // windows otherwise than ONNX with asymmetric pads (one fewer) and when the window would
    // start in the end padding (one more: ONNX before 1.16).
    const Shape& x = shapes.at(n.inputs[0]);
    const bool partial_h = (x[2] + p.pad_top + p.pad_bottom - p.kernel_h) % p.stride_h != 0;
    const bool partial_w = (x[3] + p.pad_left + p.pad_right - p.kernel_w) % p.stride_w != 0;
    if (p.ceil_mode && (partial_h || partial_w)) {
      throw Unsupported(at +
                        "adds a partial last window (ceil_mode): OpenCV 4.6 counts these "
                        "windows otherwise than ONNX");
    }
  }
  if (n.op == Op::AvgPool) {
    const PoolAttrs p = GetPoolAttrs(n);
    if (p.count_include_pad && (p.pad_top || p.pad_left || p.pad_bottom || p.pad_right)) {
      throw Unsupported(at +
                        "counts its padding (count_include_pad 1): OpenCV 4.6 runs it with "
                        "other values");
    }
  }
  if (n.op == Op::Gemm) {
    const GemmDims g = GetGemmDims(n, shapes.at(n.inputs[0]));
    if (g.alpha != 1.0 || g.beta != 1.0) {
      throw Unsupported(at +
                        "has alpha or beta other than 1: OpenCV 4.6 runs it with other "
                        "values");
    }
    const auto c = n.params.find("C");
    if (c != n.params.end() && c->second.shape != Shape{g.n} && c->second.shape != Shape{1, g.n}) {
      throw Unsupported(at + "has a C of shape " + ShapeText(c->second.shape) +
                        ": OpenCV 4.6 adds C as one bias per output column only");
    }
  }
}

}  // namespace

void RefuseUnfaithful(const NativeRequest& r) {
  for (const Node& n : r.graph.nodes) {
    RefuseNode(n, r.shapes);
    if (!Binary(n.op)) continue;
    const Shape& result = r.shapes.at(n.output);
    std::vector<Shape> operands;
    if (auto a = n.params.find("A"); a != n.params.end()) {
      if (n.op == Op::Div) {
        throw Unsupported("node '" + n.name +
                          "' (Div) divides a constant by a value: OpenCV 4.6's ONNX importer "
                          "computes value / constant instead (docs/upstream-bugs.md)");
      }
      operands.push_back(a->second.shape);
    }
    for (const std::string& in : n.inputs) operands.push_back(r.shapes.at(in));
    if (auto b = n.params.find("B"); b != n.params.end()) operands.push_back(b->second.shape);
    for (const Shape& s : operands) {
      if (!FaithfulOperand(s, result)) {
        throw Unsupported("node '" + n.name + "' (" + std::string(OpName(n.op)) +
                          ") broadcasts an operand of shape " + ShapeText(s) + " to " +
                          ShapeText(result) +
                          ": OpenCV 4.6 broadcasts only ones, per-channel (batch 1) and "
                          "same-shape operands as ONNX does (others run with wrong values)");
      }
    }
  }
}

}  // namespace fusefuzz::opencv
