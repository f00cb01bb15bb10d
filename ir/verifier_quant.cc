// Verification of quantized ops and of quantization parameters (ir/quant.h): shapes of the kQuant
// family, QLinearConv's epilogue, and every node's QuantMap against its roles, the tensor shapes
// and the params it declares to lie on a grid.
#include <cmath>
#include <map>
#include <sstream>

#include "ir/error.h"
#include "ir/verifier_internal.h"

namespace fusefuzz {
namespace {

std::string Where(const Node& n) {
  return "node '" + n.name + "' (" + std::string(OpName(n.op)) + ")";
}

[[noreturn]] void Fail(const Node& n, const std::string& what) { throw InputError(Where(n), what); }

std::string RoleWhere(const Node& n, const std::string& role) {
  return Where(n) + " quant '" + role + "'";
}

std::string Num(double d) {
  std::ostringstream o;
  o.precision(9);
  o << d;
  return o.str();
}

const QuantParams& Role(const Node& n, const std::string& role) { return n.quant.at(role); }

// An activation tensor's params: 8-bit, per tensor, positive scale.
void Check8BitPerTensor(const Node& n, const std::string& role) {
  const QuantParams& q = Role(n, role);
  const std::string w = RoleWhere(n, role);
  if (q.type == QuantType::kInt32) {
    throw InputError(w + " type", "must be uint8 or int8 (int32 only for weights' biases)");
  }
  if (q.PerAxis())
    throw InputError(w + " axis", "must be per tensor (no axis) for " + std::string(OpName(n.op)));
  Validate(q, -1, false, w);
}

// The integers of a param held as floats (QLinearConv's W and B).
void CheckIntegers(const Node& n, const std::string& param, int64_t lo, int64_t hi) {
  auto it = n.params.find(param);
  if (it == n.params.end()) return;
  const Tensor& t = it->second;
  for (size_t i = 0; i < t.data.size(); ++i) {
    const float v = t.data[i];
    if (!(v == std::nearbyint(v)) || v < static_cast<float>(lo) || v > static_cast<float>(hi)) {
      Fail(n, "param '" + param + "' element " + std::to_string(i) + " is " + Num(v) +
                  ": must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                  "]");
    }
  }
}

// A float param declared to lie on the grid of role `role` (same name): every value must be one
// DequantizeLinear produces.
void CheckDeclaredGrid(const Node& n, const std::string& role, bool weight) {
  const QuantParams& q = Role(n, role);
  const std::string w = RoleWhere(n, role);
  auto it = n.params.find(role);
  if (it == n.params.end()) {
    Fail(n, "quant '" + role + "' declares a grid for param '" + role + "', which is absent");
  }
  const Tensor& t = it->second;
  if (weight && q.type == QuantType::kInt32) {
    throw InputError(w + " type", "a weight grid must be int8 or uint8, got int32");
  }
  if (!weight && q.type != QuantType::kInt32) {
    throw InputError(w + " type",
                     "a bias grid must be int32, got " + std::string(QuantTypeName(q.type)));
  }
  ValidateFor(q, t.shape, false, w);
  ForEachQuantElement(q, t.shape, [&](size_t i, double s, int64_t z) {
    if (!OnGrid(t.data[i], s, z, q.type)) {
      const double pos = static_cast<double>(t.data[i]) / s + static_cast<double>(z);
      const bool beyond = q.type == QuantType::kInt32 && std::fabs(pos) > kMaxExactInt;
      Fail(n, "param '" + role + "' element " + std::to_string(i) + " = " + Num(t.data[i]) +
                  (beyond ? " is beyond 2^24 steps of its int32 grid (not exact in float32)"
                          : " is not on its declared grid (s=" + Num(s) +
                                ", z=" + std::to_string(z) + ": position " + Num(pos) + ")"));
    }
  });
}

void CheckQLinearConv(const Node& n, const std::vector<Shape>& in) {
  Check8BitPerTensor(n, "x");
  Check8BitPerTensor(n, "y");
  const bool residual = in.size() == 2;
  if (residual != (n.quant.count("r") == 1)) {
    Fail(n, residual ? "missing quantization parameters 'r' of the residual input 1"
                     : "quant 'r' given but the node has no residual input");
  }
  if (residual) Check8BitPerTensor(n, "r");
  const QuantParams& w = Role(n, "w");
  const std::string ww = RoleWhere(n, "w");
  if (w.type != QuantType::kInt8) throw InputError(ww + " type", "must be int8");
  const Tensor& W = n.params.at("W");
  if (w.PerAxis() && w.axis != 0) throw InputError(ww + " axis", "must be 0 (per output channel)");
  ValidateFor(w, W.shape, false, ww);
  for (size_t i = 0; i < w.zero_point.size(); ++i) {
    if (w.zero_point[i] != 0) {
      throw InputError(ww + " zero_point[" + std::to_string(i) + "]",
                       "must be 0 (symmetric weights), got " + std::to_string(w.zero_point[i]));
    }
  }
  CheckIntegers(n, "W", -128, 127);
  CheckIntegers(n, "B", -kMaxExactInt, kMaxExactInt);
}

}  // namespace

void CheckQLinearConvEpilogue(const Node& n, const std::vector<Shape>& in, const Shape& out) {
  size_t i = 0;
  if (in.size() == 2) {
    if (n.epilogue.empty() || n.epilogue[0].kind != EpilogueKind::kAdd ||
        n.epilogue[0].input != 1) {
      Fail(n, "epilogue step 0 must add the residual input 1");
    }
    if (in[1] != out) {
      Fail(n, "residual input 1 " + ShapeToString(in[1]) + " must have the output's shape " +
                  ShapeToString(out));
    }
    i = 1;
  }
  for (; i < n.epilogue.size(); ++i) {
    const EpilogueStep& s = n.epilogue[i];
    const std::string ctx = "epilogue step " + std::to_string(i);
    if (s.kind != EpilogueKind::kActivation || i + 1 != n.epilogue.size()) {
      Fail(n, ctx +
                  ": after the residual add a QLinearConv holds at most one activation step "
                  "(Relu, Relu6 or Clip), last");
    }
    if (s.act != Op::Relu && s.act != Op::Relu6 && s.act != Op::Clip) {
      Fail(n, ctx + ": " + std::string(OpName(s.act)) +
                  " cannot be folded into the integer clamp (only Relu, Relu6, Clip)");
    }
    if (!s.params.empty()) Fail(n, ctx + ": an activation step here has no params");
    for (const auto& [name, v] : s.attrs) {
      if (!FindAttrSpec(s.act, name)) {
        Fail(n, ctx + ": unknown attribute '" + name + "' for " + std::string(OpName(s.act)));
      }
    }
    if (s.act == Op::Clip) {
      for (const char* b : {"min", "max"}) {
        if (!std::isfinite(AttrFloat(Op::Clip, s.attrs, b, Where(n) + " " + ctx))) {
          Fail(n, ctx + ": Clip " + b + " must be finite");
        }
      }
    }
  }
}

Shape QuantShape(const Node& n, const std::vector<Shape>& in) {
  switch (n.op) {
    case Op::QuantizeLinear:
    case Op::DequantizeLinear:
      return in[0];
    case Op::QLinearAdd: {
      if (in[0] != in[1]) {
        Fail(n, "inputs " + ShapeToString(in[0]) + " and " + ShapeToString(in[1]) +
                    " must have equal shapes (no broadcasting)");
      }
      const std::string act = AttrString(n, "activation");
      if (act != "none" && act != "relu") {
        Fail(n, "activation must be \"none\" or \"relu\", got \"" + act + "\"");
      }
      return in[0];
    }
    case Op::Conv:
    case Op::FusedConv:
    case Op::BatchNorm:
    case Op::LayerNorm:
    case Op::GroupNorm:
    case Op::InstanceNorm:
    case Op::Relu:
    case Op::Relu6:
    case Op::Clip:
    case Op::LeakyRelu:
    case Op::PRelu:
    case Op::Elu:
    case Op::Sigmoid:
    case Op::HardSigmoid:
    case Op::Tanh:
    case Op::Silu:
    case Op::HardSwish:
    case Op::Gelu:
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
    case Op::Pad:
    case Op::MaxPool:
    case Op::AvgPool:
    case Op::GlobalAvgPool:
    case Op::Concat:
    case Op::Identity:
    case Op::Flatten:
    case Op::Reshape:
    case Op::Gemm:
    case Op::MatMul:
    case Op::ReduceMean:
    case Op::Pow:
    case Op::Sqrt:
    case Op::Reciprocal:
    case Op::Exp:
    case Op::Log:
    case Op::Erf:
    case Op::Min:
    case Op::Max:
    case Op::ReduceSum:
    case Op::ReduceMax:
    case Op::Softmax:
    case Op::Transpose:
    case Op::QLinearConv:
      break;
  }
  Fail(n, "not a quant-family op");
}

void CheckQuantTypes(const Graph& g) {
  // value -> the node whose integers it holds (through ops that only move integers around).
  std::map<std::string, const Node*> origin;
  for (const Node& n : g.nodes) {
    if (ProducesQuantized(n.op)) {
      origin[n.output] = &n;
    } else if ((n.op == Op::Identity || n.op == Op::Reshape || n.op == Op::Flatten ||
                n.op == Op::MaxPool) &&
               !n.inputs.empty() && origin.count(n.inputs[0])) {
      origin[n.output] = origin.at(n.inputs[0]);
    }
  }
  for (const Node& n : g.nodes) {
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      // The roles under which a node reads its integer inputs.
      const char* role = n.op == Op::DequantizeLinear ? (i == 0 ? "x" : nullptr)
                         : n.op == Op::QLinearConv    ? (i == 0 ? "x" : "r")
                         : n.op == Op::QLinearAdd     ? (i == 0 ? "a" : "b")
                                                      : nullptr;
      auto from = origin.find(n.inputs[i]);
      if (!role || !n.quant.count(role) || from == origin.end()) continue;
      const QuantType read = n.quant.at(role).type;
      const QuantType held = from->second->quant.at("y").type;
      if (read == held) continue;
      // Read as another type, the integers are out of range for some data only: refused here,
      // where the file can be named, not at run time.
      throw InputError(RoleWhere(n, role) + " type",
                       "reads '" + n.inputs[i] + "' as " + std::string(QuantTypeName(read)) +
                           ", but it holds the " + std::string(QuantTypeName(held)) +
                           " output of " + Where(*from->second) +
                           " (the types of a quantized value must agree)");
    }
  }
}

namespace {

// s_a * s_b in float32, as the engines compute a bias scale (and s_a * s_b / s_c, a
// requantization multiplier): what is wrong with it, or "".
std::string ScaleProductProblem(double a, double b, const double* c) {
  const float p = static_cast<float>(a) * static_cast<float>(b);
  if (!std::isfinite(p)) return "overflows float32";
  if (std::fpclassify(p) == FP_SUBNORMAL || p == 0) return "underflows float32";
  if (c) {
    const float m = p / static_cast<float>(*c);
    if (!std::isfinite(m)) return "divided by the output scale overflows float32";
    if (std::fpclassify(m) == FP_SUBNORMAL || m == 0) {
      return "divided by the output scale underflows float32";
    }
  }
  return "";
}

}  // namespace

void CheckScaleProducts(const Graph& g) {
  std::map<std::string, const Node*> dequantized;  // value -> the DequantizeLinear making it
  for (const Node& n : g.nodes) {
    if (n.op == Op::DequantizeLinear) dequantized[n.output] = &n;
  }
  auto check = [](const Node& n, const QuantParams& a, const char* ra, const QuantParams& w,
                  const char* rw, const QuantParams* y) {
    for (double sa : a.scale) {
      for (double sw : w.scale) {
        const double sy = y ? y->scale[0] : 0;
        const std::string why = ScaleProductProblem(sa, sw, y ? &sy : nullptr);
        if (why.empty()) continue;
        // Outside the domain: engines compute this product (the bias scale, the requantization
        // multiplier) in float32 and disagree on what to do with inf or 0 (docs/quantization.md).
        Fail(n, std::string("the scale product s_") + ra + " * s_" + rw + " = " + Num(sa) + " * " +
                    Num(sw) + (y ? " / " + Num(sy) : std::string()) + " " + why +
                    ": such scales are outside what fusefuzz models");
      }
    }
  };
  for (const Node& n : g.nodes) {
    if (n.op == Op::QLinearConv) {
      check(n, n.quant.at("x"), "x", n.quant.at("w"), "w", &n.quant.at("y"));
    } else if ((n.op == Op::Conv || n.op == Op::FusedConv) && n.quant.count("W") &&
               !n.inputs.empty() && dequantized.count(n.inputs[0])) {
      check(n, dequantized.at(n.inputs[0])->quant.at("x"), "x", n.quant.at("W"), "W", nullptr);
    }
  }
}

void VerifyQuant(const Node& n, const std::vector<Shape>& in, const GraphOptions& options) {
  for (const auto& [role, q] : n.quant) {
    if (!FindQuantRole(n.op, role)) {
      std::string valid;
      for (const auto& r : QuantRolesOf(n.op)) valid += (valid.empty() ? "" : ", ") + r.role;
      Fail(n, "unknown quantization role '" + role +
                  "' (valid: " + (valid.empty() ? "none" : valid) + ")");
    }
  }
  for (const auto& r : QuantRolesOf(n.op)) {
    if (r.required && !n.quant.count(r.role)) {
      Fail(n, "missing quantization parameters '" + r.role + "' (" + r.doc + ")");
    }
  }
  switch (n.op) {
    case Op::QuantizeLinear: {
      const QuantParams& q = Role(n, "y");
      if (q.type == QuantType::kInt32) {
        throw InputError(RoleWhere(n, "y") + " type",
                         "must be uint8 or int8 (int32 outputs are not exact in float32)");
      }
      ValidateFor(q, in[0], options.allow_negative_scale, RoleWhere(n, "y"));
      return;
    }
    case Op::DequantizeLinear:
      ValidateFor(Role(n, "x"), in[0], options.allow_negative_scale, RoleWhere(n, "x"));
      return;
    case Op::QLinearConv:
      CheckQLinearConv(n, in);
      return;
    case Op::QLinearAdd:
      for (const char* r : {"a", "b", "y"}) Check8BitPerTensor(n, r);
      return;
    case Op::Conv:
    case Op::FusedConv:
      if (n.quant.count("W")) CheckDeclaredGrid(n, "W", true);
      if (n.quant.count("B")) CheckDeclaredGrid(n, "B", false);
      return;
    case Op::Gemm:
      if (n.quant.count("B")) CheckDeclaredGrid(n, "B", true);
      if (n.quant.count("C")) CheckDeclaredGrid(n, "C", false);
      return;
    case Op::BatchNorm:
    case Op::LayerNorm:
    case Op::GroupNorm:
    case Op::InstanceNorm:
    case Op::Relu:
    case Op::Relu6:
    case Op::Clip:
    case Op::LeakyRelu:
    case Op::PRelu:
    case Op::Elu:
    case Op::Sigmoid:
    case Op::HardSigmoid:
    case Op::Tanh:
    case Op::Silu:
    case Op::HardSwish:
    case Op::Gelu:
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
    case Op::Pad:
    case Op::MaxPool:
    case Op::AvgPool:
    case Op::GlobalAvgPool:
    case Op::Concat:
    case Op::Identity:
    case Op::Flatten:
    case Op::Reshape:
    case Op::MatMul:
    case Op::ReduceMean:
    case Op::Pow:
    case Op::Sqrt:
    case Op::Reciprocal:
    case Op::Exp:
    case Op::Log:
    case Op::Erf:
    case Op::Min:
    case Op::Max:
    case Op::ReduceSum:
    case Op::ReduceMax:
    case Op::Softmax:
    case Op::Transpose:
      return;  // no roles: any entry was refused above
  }
}

}  // namespace fusefuzz
