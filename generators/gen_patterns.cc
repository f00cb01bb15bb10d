// Pattern families: small subgraphs shaped like the places where real fusion bugs were found
// (docs/generator.md lists the bug behind each).
#include "generators/gen_patterns.h"

#include <algorithm>

namespace fusefuzz::gen {
namespace {

// Patterns favour ReLU and ReLU6: the published fusion bugs involve them (max(0, x) lowering,
// ReLU6 turned into an unbounded clip); any allowed activation still appears.
Op PickAct(Builder& b) {
  if (b.Allowed(Op::Relu) && b.src().Bool(b.cfg().probabilities.pattern_relu)) return Op::Relu;
  if (b.Allowed(Op::Relu6) && b.src().Bool(b.cfg().probabilities.pattern_relu6)) return Op::Relu6;
  return *b.PickActivation();
}

// A pattern's conv where no rule needs a plain Conv: sometimes a FusedConv (with its own
// epilogue), so that fusions onto an existing FusedConv are exercised too.
std::string PatternConv(Builder& b, const std::string& x, const ConvOpts& o = {},
                        double p_fused = -1) {
  if (p_fused < 0) p_fused = b.cfg().probabilities.pattern_fused_conv;
  const bool fused = b.Allowed(Op::FusedConv) && (!b.Allowed(Op::Conv) || b.src().Bool(p_fused));
  return fused ? b.EmitFusedConv(x, o) : b.EmitConv(x, o);
}

std::string SingleOp(Builder& b, const std::string& x, int64_t budget) {
  std::vector<Op> ops;
  std::vector<double> w;
  for (Op op : b.cfg().allowed_ops) {
    auto it = b.cfg().op_weights.find(op);
    ops.push_back(op);
    // Rank-2 head ops only end a graph (Generate's head step): never in the body.
    const bool head = FamilyOf(op) == OpFamily::kReshape || FamilyOf(op) == OpFamily::kGemm;
    w.push_back(it == b.cfg().op_weights.end() || head ? 0.0 : it->second);
  }
  return b.EmitOp(ops[b.src().Pick(w)], x, budget);
}

// Conv -> BN, the classic fold; the conv sometimes has a large bias (folded as b*s + shift).
std::string ConvBn(Builder& b, const std::string& x) { return b.EmitBatchNorm(b.EmitConv(x)); }

// Glow's bug: BN folded into a Conv through an intervening activation.
std::string ConvActBn(Builder& b, const std::string& x) {
  std::string c = b.EmitConv(x);
  return b.EmitBatchNorm(b.EmitActivation(PickAct(b), c));
}

// Only one of two BNs folded, the second mishandled.
std::string ConvBnBn(Builder& b, const std::string& x) {
  return b.EmitBatchNorm(b.EmitBatchNorm(b.EmitConv(x)));
}

std::string ConvBnAct(Builder& b, const std::string& x) {
  std::string y = b.EmitBatchNorm(b.EmitConv(x));
  return b.EmitActivation(PickAct(b), y);
}

// BN before a conv: foldable into the weights only when the conv has no zero padding (the
// padded border would see shift instead of 0). Both cases, and an explicit Pad in between.
std::string BnConv(Builder& b, const std::string& x, int64_t budget) {
  std::string y = b.EmitBatchNorm(x);
  if (budget >= 3 && b.Allowed(Op::Pad) && b.src().Bool(b.cfg().probabilities.bn_conv_pad))
    y = b.EmitPad(y);
  ConvOpts o;
  o.no_pads = b.src().Bool(b.cfg().probabilities.bn_conv_unpadded);
  return b.EmitConv(y, o);
}

// ResNet BasicBlock: conv-BN-act-conv-BN, Add the shortcut, THEN the activation (fusing the
// activation into the conv by declaration order is the bug). With less budget: conv-BN-add-act.
std::string Residual(Builder& b, const std::string& x, int64_t budget) {
  ConvOpts same;
  same.same_shape = true;
  std::string y = b.EmitBatchNorm(b.EmitConv(x, same));
  if (budget >= 7 && b.src().Bool(b.cfg().probabilities.residual_full_block)) {
    y = b.EmitActivation(PickAct(b), y);
    y = b.EmitBatchNorm(b.EmitConv(y, same));
  }
  y = b.src().Bool(b.cfg().probabilities.swap_operands) ? b.EmitBinaryWith(Op::Add, y, x)
                                                        : b.EmitBinaryWith(Op::Add, x, y);
  return b.EmitActivation(PickAct(b), y);
}

// An intermediate with a second consumer: the conv output feeds both a BN and an activation.
std::string Branch(Builder& b, const std::string& x) {
  std::string c = PatternConv(b, x);
  std::string bn = b.EmitBatchNorm(c);
  std::string act = b.EmitActivation(PickAct(b), c);
  return b.src().Bool(b.cfg().probabilities.swap_operands) ? b.EmitBinaryWith(Op::Add, bn, act)
                                                           : b.EmitBinaryWith(Op::Add, act, bn);
}

// Explicit Pad before a conv or pool (foldable into the window's pads only for zero constant
// padding, and for pools only in some modes).
std::string PadThenWindow(Builder& b, const std::string& x) {
  std::string y = b.EmitPad(x);
  std::vector<Op> windows;
  for (Op op : {Op::Conv, Op::MaxPool, Op::AvgPool})
    if (b.Allowed(op)) windows.push_back(op);
  Op w = windows[static_cast<size_t>(b.src().Int(0, int64_t(windows.size()) - 1))];
  if (w == Op::Conv) {
    ConvOpts o;
    o.no_pads = b.src().Bool(b.cfg().probabilities.pad_conv_unpadded);
    return PatternConv(b, y, o);
  }
  return b.EmitPool(w, y);
}

// Squeeze-excite: x * gate(conv(gap(x))); a [N,C,1,1] operand broadcast against [N,C,H,W].
std::string SqueezeExcite(Builder& b, const std::string& x, int64_t budget) {
  int64_t c = b.ShapeOf(x)[1];
  std::string s = b.EmitPool(Op::GlobalAvgPool, x);
  ConvOpts o;
  o.kernel = 1;
  o.no_pads = true;
  if (budget >= 6 && b.AnyActivation() && b.src().Bool(b.cfg().probabilities.se_reduce)) {
    o.out_channels = std::max<int64_t>(1, c / 2);
    s = b.EmitActivation(PickAct(b), b.EmitConv(s, o));
  }
  o.out_channels = c;
  s = b.EmitConv(s, o);
  Op gate = Op::Sigmoid;
  if (!b.Allowed(Op::Sigmoid) ||
      (b.Allowed(Op::HardSigmoid) && b.src().Bool(b.cfg().probabilities.se_hard_sigmoid))) {
    gate = Op::HardSigmoid;
  }
  s = b.EmitActivation(gate, s);
  return b.src().Bool(b.cfg().probabilities.swap_operands) ? b.EmitBinaryWith(Op::Mul, x, s)
                                                           : b.EmitBinaryWith(Op::Mul, s, x);
}

// A random order of conv / BN / activation / add: every order is a distinct fusion question.
std::string Permutation(Builder& b, const std::string& x, int64_t budget) {
  std::vector<int> kinds;
  if (b.Allowed(Op::Conv)) kinds.push_back(0);
  if (b.Allowed(Op::BatchNorm)) kinds.push_back(1);
  if (b.AnyActivation()) kinds.push_back(2);
  if (b.Allowed(Op::Add)) kinds.push_back(3);
  // Fisher-Yates with our own draws, then keep 2..4 of them.
  for (size_t i = kinds.size(); i > 1; --i) {
    std::swap(kinds[i - 1], kinds[static_cast<size_t>(b.src().Int(0, int64_t(i) - 1))]);
  }
  int64_t most = std::min<int64_t>(int64_t(kinds.size()), budget);
  kinds.resize(static_cast<size_t>(b.src().Int(2, most)));
  std::string y = x;
  for (int k : kinds) {
    switch (k) {
      case 0: {
        ConvOpts o;
        o.same_shape = b.src().Bool(b.cfg().probabilities.permutation_same_shape);
        y = PatternConv(b, y, o);
        break;
      }
      case 1:
        y = b.EmitBatchNorm(y);
        break;
      case 2:
        y = b.EmitActivation(PickAct(b), y);
        break;
      default:
        if (y != x && b.ShapeOf(y) == b.ShapeOf(x) &&
            b.src().Bool(b.cfg().probabilities.permutation_skip)) {
          y = b.EmitBinaryWith(Op::Add, y, x);  // a skip connection around the sequence
        } else {
          y = b.EmitBinary(Op::Add, y, 1);
        }
    }
  }
  return y;
}

std::string UnaryBranch(Builder& b, const std::string& x) {
  if (b.Allowed(Op::Conv) && b.src().Bool(b.cfg().probabilities.concat_conv_branch)) {
    ConvOpts o;
    o.same_shape = true;
    o.out_channels = -1;
    return b.EmitConv(x, o);
  }
  if (b.AnyActivation()) return b.EmitActivation(PickAct(b), x);
  return b.EmitBatchNorm(x);
}

// Two branches of one value joined by a channel concat.
std::string ConcatBranches(Builder& b, const std::string& x) {
  std::string l = UnaryBranch(b, x);
  std::string r = b.src().Bool(b.cfg().probabilities.concat_second_branch) ? UnaryBranch(b, x) : x;
  int64_t total = b.ShapeOf(l)[1] + b.ShapeOf(r)[1];
  if (total > 2 * b.cfg().limits.max_channels) return b.EmitConcat(l);
  return b.src().Bool(b.cfg().probabilities.swap_operands) ? b.EmitConcat(l, r)
                                                           : b.EmitConcat(r, l);
}

// Conv -> [activation] -> Add/Sub/Mul/Div with a constant of any broadcast class on either side:
// what conv-scale-fold / conv-shift-fold must accept (scalar, per channel) or refuse (batch,
// spatial, full, [M], c - conv, c / conv), after every conv geometry.
std::string ConvConst(Builder& b, const std::string& x, int64_t budget) {
  const int64_t start = b.node_count();
  std::string y = b.EmitConv(x);
  if (budget >= 3 && b.AnyActivation() && b.src().Bool(b.cfg().probabilities.conv_const_act)) {
    y = b.EmitActivation(PickAct(b), y);
  }
  std::vector<Op> ops;
  for (Op op : {Op::Add, Op::Sub, Op::Mul, Op::Div})
    if (b.Allowed(op)) ops.push_back(op);
  const Op op = ops[static_cast<size_t>(b.src().Int(0, int64_t(ops.size()) - 1))];
  // Div goes through EmitBinary: besides conv / c, also (c / d) * conv with a fresh divisor d,
  // since a conv output is never a divisor.
  if (op == Op::Div) return b.EmitBinary(op, y, budget - (b.node_count() - start));
  return b.EmitBinaryConst(op, y);
}

// (Fused)Conv -> activation -> [Add(value) | MaxPool], the activation uniform over the allowed
// ones: every activation fused into a conv or an epilogue; an add that must stay after the
// activation; a max pool after it (reordered only when the conv output has another use).
std::string ConvActPool(Builder& b, const std::string& x, int64_t budget) {
  const GenProbabilities& p = b.cfg().probabilities;
  std::string y = PatternConv(b, x, {}, p.conv_act_pool_fused);
  y = b.EmitActivation(*b.PickActivationUniform(), y);
  if (budget >= 3 && b.Allowed(Op::Add) && b.src().Bool(p.act_then_add)) {
    const std::string r = b.ShapeOf(y) == b.ShapeOf(x) ? x : b.AddInput(b.ShapeOf(y));
    return b.src().Bool(p.swap_operands) ? b.EmitBinaryWith(Op::Add, y, r)
                                         : b.EmitBinaryWith(Op::Add, r, y);
  }
  if (budget >= 3 && b.Allowed(Op::MaxPool) && b.src().Bool(p.act_then_max_pool)) {
    y = b.EmitPool(Op::MaxPool, y);
  }
  return y;
}

// Activation (uniform over the allowed ones) -> MaxPool on any value: pool-activation-reorder,
// which is legal only for monotone activations. (After a conv the activation is fused first.)
std::string ActPool(Builder& b, const std::string& x) {
  return b.EmitPool(Op::MaxPool, b.EmitActivation(*b.PickActivationUniform(), x));
}

}  // namespace

bool PatternEligible(Builder& b, Pattern p) {
  auto ok = [&](std::initializer_list<Op> ops) {
    for (Op op : ops)
      if (!b.Allowed(op)) return false;
    return true;
  };
  bool act = b.AnyActivation();
  switch (p) {
    case Pattern::kSingle:
      return true;
    case Pattern::kConvBn:
    case Pattern::kConvBnBn:
    case Pattern::kBnConv:
      return ok({Op::Conv, Op::BatchNorm});
    case Pattern::kConvActBn:
    case Pattern::kConvBnAct:
      return act && ok({Op::Conv, Op::BatchNorm});
    case Pattern::kResidual:
    case Pattern::kBranch:
      return act && ok({Op::Conv, Op::BatchNorm, Op::Add});
    case Pattern::kPadConvOrPool:
      return ok({Op::Pad}) &&
             (b.Allowed(Op::Conv) || b.Allowed(Op::MaxPool) || b.Allowed(Op::AvgPool));
    case Pattern::kSqueezeExcite:
      return ok({Op::GlobalAvgPool, Op::Conv, Op::Mul}) &&
             (b.Allowed(Op::Sigmoid) || b.Allowed(Op::HardSigmoid));
    case Pattern::kPermutation: {
      int n = int(b.Allowed(Op::Conv)) + int(b.Allowed(Op::BatchNorm)) + int(act) +
              int(b.Allowed(Op::Add));
      return n >= 2;
    }
    case Pattern::kConcatBranches:
      return ok({Op::Concat}) && (act || b.Allowed(Op::Conv) || b.Allowed(Op::BatchNorm));
    case Pattern::kConvConst:
      return b.Allowed(Op::Conv) &&
             (b.Allowed(Op::Add) || b.Allowed(Op::Sub) || b.Allowed(Op::Mul) || b.Allowed(Op::Div));
    case Pattern::kConvActPool:
      return act && (b.Allowed(Op::Conv) || b.Allowed(Op::FusedConv));
    case Pattern::kActPool:
      return act && b.Allowed(Op::MaxPool);
    case Pattern::kRepeat:
      return false;  // decided by the generator
    case Pattern::kLayerNormDecomposed:
    case Pattern::kRmsNormDecomposed:
    case Pattern::kGeluErfDecomposed:
    case Pattern::kGeluTanhDecomposed:
    case Pattern::kQuickGeluDecomposed:
    case Pattern::kSiluDecomposed:
    case Pattern::kHardSwishDecomposed:
    case Pattern::kMishDecomposed:
    case Pattern::kSoftmaxDecomposed:
    case Pattern::kMatMulChain:
      return DecomposedEligible(b, p);
  }
  return false;
}

std::string EmitPattern(Builder& b, Pattern p, const std::string& x, int64_t budget) {
  switch (p) {
    case Pattern::kSingle:
      return SingleOp(b, x, budget);
    case Pattern::kConvBn:
      return ConvBn(b, x);
    case Pattern::kConvActBn:
      return ConvActBn(b, x);
    case Pattern::kConvBnBn:
      return ConvBnBn(b, x);
    case Pattern::kConvBnAct:
      return ConvBnAct(b, x);
    case Pattern::kBnConv:
      return BnConv(b, x, budget);
    case Pattern::kResidual:
      return Residual(b, x, budget);
    case Pattern::kBranch:
      return Branch(b, x);
    case Pattern::kPadConvOrPool:
      return PadThenWindow(b, x);
    case Pattern::kSqueezeExcite:
      return SqueezeExcite(b, x, budget);
    case Pattern::kPermutation:
      return Permutation(b, x, budget);
    case Pattern::kConcatBranches:
      return ConcatBranches(b, x);
    case Pattern::kConvConst:
      return ConvConst(b, x, budget);
    case Pattern::kConvActPool:
      return ConvActPool(b, x, budget);
    case Pattern::kActPool:
      return ActPool(b, x);
    case Pattern::kRepeat:
      break;
    case Pattern::kLayerNormDecomposed:
    case Pattern::kRmsNormDecomposed:
    case Pattern::kGeluErfDecomposed:
    case Pattern::kGeluTanhDecomposed:
    case Pattern::kQuickGeluDecomposed:
    case Pattern::kSiluDecomposed:
    case Pattern::kHardSwishDecomposed:
    case Pattern::kMishDecomposed:
    case Pattern::kSoftmaxDecomposed:
    case Pattern::kMatMulChain:
      return EmitDecomposed(b, p, x, budget);
  }
  return SingleOp(b, x, budget);
}

}  // namespace fusefuzz::gen
