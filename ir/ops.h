// Op registry (X-macro over ir/ops.def) and the per-op schema of attributes and params.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fusefuzz {

enum class Op {
#define FF_OP(e, name, family, min_in, max_in, monotone, rounding) e,
#include "ir/ops.def"
#undef FF_OP
};

enum class OpFamily {
  kConv,
  kNorm,
  kActivation,
  kBinary,
  kPad,
  kPool,
  kConcat,
  kIdentity,
  kReshape,
  kGemm,
  kQuant,   // QuantizeLinear, DequantizeLinear, QLinearAdd (QLinearConv is kConv)
  kReduce,  // ReduceMean, ReduceSum, ReduceMax over an axis set; Softmax along one axis
  kMath,    // elementwise unary math: Pow (constant exponent), Sqrt, Reciprocal, Exp, Log, Erf
  kLayout   // Transpose: moves elements, values unchanged
};

// Columns of ir/ops.def (see there).
enum class Monotonicity {
  kNotActivation,
  kAlways,
  kIfAlphaNonNegative,
  kIfSlopesNonNegative,
  kNever
};
enum class RoundingClass { kNotActivation, kPiecewiseLinear, kTranscendental };

const std::vector<Op>& AllOps();
std::string_view OpName(Op op);
std::optional<Op> OpFromName(std::string_view name);
OpFamily FamilyOf(Op op);
std::string_view FamilyName(OpFamily family);
int MinInputs(Op op);
int MaxInputs(Op op);
Monotonicity MonotonicityOf(Op op);
RoundingClass RoundingClassOf(Op op);
inline bool IsActivation(Op op) { return FamilyOf(op) == OpFamily::kActivation; }
inline bool IsBinary(Op op) { return FamilyOf(op) == OpFamily::kBinary; }

enum class AttrType { kInt, kFloat, kInts, kString };
std::string_view AttrTypeName(AttrType t);

struct AttrSpec {
  std::string name;
  AttrType type;
  bool required;
  // Default used when the attr is absent (ignored when required). Stored as the generic value.
  double default_float = 0;
  int64_t default_int = 0;
  std::vector<int64_t> default_ints;
  std::string default_string;
  std::string doc;
};

struct ParamSpec {
  std::string name;
  bool required;
  std::string doc;  // expected shape, in words ("[M, C/group, kH, kW]")
};

struct OpSchema {
  std::vector<AttrSpec> attrs;
  std::vector<ParamSpec> params;
  std::string doc;  // one line: what the op computes
};

const OpSchema& SchemaOf(Op op);
const AttrSpec* FindAttrSpec(Op op, std::string_view name);
const ParamSpec* FindParamSpec(Op op, std::string_view name);

}  // namespace fusefuzz
