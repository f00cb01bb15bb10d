// When each spelling applies. A spelling must write exactly the node's math, so each condition
// below is what the spelling's writer needs for that: e.g. padding='same' only for the pads torch
// computes for it, an in-place op only on a value nothing else reads afterwards.
#include "ir/spelling.h"

#include <algorithm>

#include "ir/error.h"

namespace fusefuzz {
namespace {

bool OpListed(std::string_view ops, Op op) {
  const std::string_view name = OpName(op);
  size_t start = 0;
  while (start <= ops.size()) {
    size_t end = ops.find('|', start);
    if (end == std::string_view::npos) end = ops.size();
    if (ops.substr(start, end - start) == name) return true;
    start = end + 1;
  }
  return false;
}

bool IsQuantOp(Op op) {
  return op == Op::QuantizeLinear || op == Op::DequantizeLinear || op == Op::QLinearConv ||
         op == Op::QLinearAdd;
}

bool InplaceSpelling(const std::string& name) {
  return name == "torch.relu_" || name == "torch.ReLU-inplace" || name == "torch.Tensor.relu_" ||
         name == "torch.inplace-binary";
}

// True when writing into `v` in place cannot change any other value: v and every value it
// aliases (the input of an Identity, Reshape, Flatten or in-place node, which torch returns as
// the same storage) have this one consumer, are no graph output and no graph input.
bool InplaceSafe(const Graph& g, std::string v) {
  for (;;) {
    if (g.IsGraphInput(v) || g.IsGraphOutput(v) || g.Consumers(v).size() != 1) return false;
    const Node* p = g.Producer(v);
    if (!p) return false;
    const bool aliases = p->op == Op::Identity || p->op == Op::Reshape || p->op == Op::Flatten ||
                         InplaceSpelling(p->spelling);
    if (!aliases || p->inputs.empty()) return true;
    v = p->inputs[0];
  }
}

// Whether the ONNX export types `v` as integers (onnx/export_quant.h): the output of a
// QuantizeLinear or QLinear op, passed through the ops ONNX runs on integers as they are. A
// spelling that writes a float-only op (Dropout) or a Cast to FLOAT after such a value would make
// an invalid model or feed a DequantizeLinear a float.
bool OnnxHoldsIntegers(const Graph& g, std::string v) {
  for (;;) {
    const Node* p = g.Producer(v);
    if (!p) return false;
    if (p->op == Op::QuantizeLinear || p->op == Op::QLinearConv || p->op == Op::QLinearAdd) {
      return true;
    }
    const bool passes = p->op == Op::Identity || p->op == Op::Reshape || p->op == Op::Flatten ||
                        p->op == Op::MaxPool || p->op == Op::Concat || p->op == Op::Pad;
    if (!passes || p->inputs.empty()) return false;
    v = p->inputs[0];
  }
}

// The one-element constant operand of a binary node and the shape of its value operand.
bool OneElementConstant(const Node& n, const ShapeMap& shapes, size_t* const_rank,
                        size_t* value_rank) {
  const BinaryOperands ops = GetBinaryOperands(n);
  const Tensor* c = ops.const_a ? ops.const_a : ops.const_b;
  if (!c || n.inputs.size() != 1 || c->size() != 1) return false;
  *const_rank = c->shape.size();
  *value_rank = shapes.at(n.inputs[0]).size();
  return true;
}

// Gemm as a torch Linear: alpha = beta = 1, no transA, C absent or one bias per column.
bool LinearGemm(const Node& n, const ShapeMap& shapes) {
  if (!n.epilogue.empty()) return false;
  const GemmDims d = GetGemmDims(n, shapes.at(n.inputs[0]));
  if (d.alpha != 1 || d.beta != 1 || d.trans_a) return false;
  auto c = n.params.find("C");
  if (c == n.params.end()) return true;
  const Shape& s = c->second.shape;
  return NumElements(s) == d.n && (s.size() == 1 || s[0] == 1) && d.n > 1;
}

std::string OpProblem(Spelling s, const Graph& g, const ShapeMap& shapes, const Node& n) {
  const Shape& x = n.inputs.empty() ? Shape{} : shapes.at(n.inputs[0]);
  switch (s) {
    case Spelling::kTorchReluInplaceFn:
    case Spelling::kTorchReluInplaceModule:
    case Spelling::kTorchReluInplaceMethod:
      return InplaceSafe(g, n.inputs[0])
                 ? ""
                 : "an in-place op needs an input that only this node reads (no graph input or "
                   "output, and nothing else reading it or what it aliases)";
    case Spelling::kTorchInplaceBinary: {
      const BinaryOperands ops = GetBinaryOperands(n);
      if (ops.input_a != 0 || shapes.at(n.output) != x) {
        return "in place needs the first operand to be a value of the output's shape";
      }
      if (n.inputs.size() == 2 && n.inputs[0] == n.inputs[1]) return "both operands are one value";
      return InplaceSafe(g, n.inputs[0]) ? "" : "the first operand is read elsewhere";
    }
    case Spelling::kTorchConvSame: {
      const ConvAttrs a = GetConvAttrs(n);
      const Shape& w = n.params.at("W").shape;
      const int64_t th = a.dilation_h * (w[2] - 1), tw = a.dilation_w * (w[3] - 1);
      const bool same = a.stride_h == 1 && a.stride_w == 1 && a.pad_top == th / 2 &&
                        a.pad_bottom == th - th / 2 && a.pad_left == tw / 2 &&
                        a.pad_right == tw - tw / 2;
      return same ? "" : "padding='same' needs stride 1 and pads d*(k-1) split begin-low";
    }
    case Spelling::kTorchConvValid: {
      const ConvAttrs a = GetConvAttrs(n);
      return a.pad_top == 0 && a.pad_left == 0 && a.pad_bottom == 0 && a.pad_right == 0
                 ? ""
                 : "padding='valid' needs zero pads";
    }
    case Spelling::kTorchConvBiasAdd:
      return n.params.count("B") ? "" : "the conv has no bias";
    case Spelling::kTorchConv1d: {
      const ConvAttrs a = GetConvAttrs(n);
      const bool ok = x.size() == 4 && x[3] == 1 && n.params.at("W").shape[3] == 1 &&
                      a.pad_left == 0 && a.pad_right == 0 && a.pad_top == a.pad_bottom;
      return ok ? "" : "Conv1d needs input width 1, kernel width 1, no W pads, equal H pads";
    }
    case Spelling::kTorchFLinear:
      return LinearGemm(n, shapes) ? ""
                                   : "F.linear needs alpha = beta = 1, no transA, a column bias";
    case Spelling::kTorchLinearBiasAdd:
      return LinearGemm(n, shapes) && n.params.count("C")
                 ? ""
                 : "needs a plain Linear (alpha = beta = 1, no transA) with a column bias";
    case Spelling::kTorchAddmm:
    case Spelling::kTorchMatmulAdd:
    case Spelling::kOnnxGemmMatMulAdd: {
      if (!n.epilogue.empty()) return "the Gemm has an epilogue";
      const GemmDims d = GetGemmDims(n, x);
      if (d.trans_a) return "transA";
      if (s == Spelling::kTorchAddmm) return n.params.count("C") ? "" : "no C";
      if (d.alpha != 1 || d.beta != 1) return "alpha or beta is not 1";
      return s == Spelling::kTorchMatmulAdd && !n.params.count("C") ? "no C" : "";
    }
    case Spelling::kOnnxGemmFlipTransB:
      return n.epilogue.empty() ? "" : "the Gemm has an epilogue";
    case Spelling::kTorchForwardHook:
    case Spelling::kTorchForwardPreHook:
      return n.op != Op::Gemm || LinearGemm(n, shapes) ? "" : "only a Gemm written as nn.Linear";
    case Spelling::kTorchPythonScalar:
    case Spelling::kOnnxScalarRank0:
    case Spelling::kOnnxScalarRank1:
    case Spelling::kOnnxScalarRank3: {
      size_t cr = 0, vr = 0;
      if (!OneElementConstant(n, shapes, &cr, &vr)) return "needs one one-element constant operand";
      const size_t want = s == Spelling::kOnnxScalarRank3   ? 3
                          : s == Spelling::kOnnxScalarRank1 ? 1
                                                            : 0;
      return cr <= vr && want <= vr ? "" : "the rank would change the output's shape";
    }
    case Spelling::kTorchFlatten:
      return AttrInt(n, "axis") == 1 ? "" : "torch.flatten(x, 1) needs axis 1";
    case Spelling::kTorchFMaxPool: {
      const PoolAttrs a = GetPoolAttrs(n);
      const bool ok = a.dilation_h == 1 && a.dilation_w == 1 && a.pad_top == a.pad_bottom &&
                      a.pad_left == a.pad_right && 2 * a.pad_top <= a.kernel_h &&
                      2 * a.pad_left <= a.kernel_w;
      return ok ? "" : "F.max_pool2d needs symmetric pads of at most half the kernel, no dilation";
    }
    case Spelling::kOnnxComputedShape: {
      const Shape& y = shapes.at(n.output);
      return y.size() >= 2 && y[0] == x[0] ? "" : "the output does not keep the input's dim 0";
    }
    case Spelling::kOnnxMatMulAsGemm:
      return x.size() == 2 ? "" : "Gemm needs a rank-2 input";
    case Spelling::kOnnxConstantNodes:
      return n.params.empty() && n.op != Op::Reshape ? "the node has no constants" : "";
    case Spelling::kTorchFRelu:
    case Spelling::kTorchClampMin:
    case Spelling::kTorchFRelu6:
    case Spelling::kTorchHardtanh:
    case Spelling::kTorchFunctionalAct:
    case Spelling::kTorchFConv2d:
    case Spelling::kTorchBnAffineFalse:
    case Spelling::kTorchFBatchNorm:
    case Spelling::kTorchIdentity:
    case Spelling::kTorchDropoutEval:
    case Spelling::kTorchShared:
    case Spelling::kTorchView:
    case Spelling::kTorchMeanKeepdim:
    case Spelling::kOnnxDropoutAfter:
    case Spelling::kOnnxCastSameType:
      return OnnxHoldsIntegers(g, n.output)
                 ? "the ONNX export types the output as integers (a Dropout takes floats only, "
                   "a Cast to FLOAT would feed a DequantizeLinear a float)"
                 : "";
    case Spelling::kOnnxIdentityAfter:
    case Spelling::kOnnxIdentityTranspose:
    case Spelling::kOnnxUnsqueezeSqueeze:
    case Spelling::kOnnxReshapeChain:
    case Spelling::kOnnxFlattenAsReshape:
      return "";
  }
  return "";
}

}  // namespace

const std::vector<SpellingInfo>& AllSpellings() {
  static const std::vector<SpellingInfo> all = {
#define FF_SPELLING(e, name, ops, family, doc) \
  {Spelling::k##e, name, ops, SpellingFamily::family, doc},
#include "ir/spellings.def"
#undef FF_SPELLING
  };
  return all;
}

const SpellingInfo& InfoOf(Spelling s) { return AllSpellings().at(static_cast<size_t>(s)); }

std::optional<Spelling> SpellingFromName(std::string_view name) {
  for (const SpellingInfo& i : AllSpellings()) {
    if (i.name == name) return i.spelling;
  }
  return std::nullopt;
}

std::string_view SpellingFamilyName(SpellingFamily f) {
  switch (f) {
    case SpellingFamily::kTorch:
      return "torch";
    case SpellingFamily::kOnnx:
      return "onnx";
  }
  return "";
}

std::string SpellingProblem(Spelling s, const Graph& g, const ShapeMap& shapes, size_t index) {
  const Node& n = g.nodes.at(index);
  const SpellingInfo& info = InfoOf(s);
  if (info.ops == "*") {
    if (IsQuantOp(n.op) || !n.quant.empty()) return "it writes float ops only";
  } else if (!OpListed(info.ops, n.op)) {
    return "it writes " + std::string(info.ops) + " only";
  }
  return OpProblem(s, g, shapes, n);
}

void VerifySpellings(const Graph& g, const ShapeMap& shapes) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.spelling.empty()) continue;
    const std::string where = "node '" + n.name + "' (" + std::string(OpName(n.op)) + ")";
    std::optional<Spelling> s = SpellingFromName(n.spelling);
    if (!s) {
      throw InputError(where, "unknown spelling '" + n.spelling + "' (fusefuzz list spellings)");
    }
    const std::string why = SpellingProblem(*s, g, shapes, i);
    if (!why.empty()) {
      throw InputError(where, "spelling '" + n.spelling + "' cannot write op " +
                                  std::string(OpName(n.op)) + " here: " + why);
    }
  }
}

void DropInapplicableSpellings(Graph& g) {
  bool any = false;
  for (const Node& n : g.nodes) any |= !n.spelling.empty();
  if (!any) return;
  // Shapes of the graph without spellings: a spelling never changes them.
  Graph plain = g;
  for (Node& n : plain.nodes) n.spelling.clear();
  ShapeMap shapes;
  try {
    shapes = VerifyGraph(plain);
  } catch (const InputError&) {
    return;  // invalid anyway: the caller's verification says why
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    if (n.spelling.empty()) continue;
    std::optional<Spelling> s = SpellingFromName(n.spelling);
    if (!s || !SpellingProblem(*s, g, shapes, i).empty()) n.spelling.clear();
  }
}

}  // namespace fusefuzz
