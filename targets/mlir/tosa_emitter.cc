// The helpers of the TOSA writer (tosa_emitter.h), the module's frame (@graph and @main) and the
// parser of what @main prints.
#include "targets/mlir/tosa_emitter.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "targets/mlir/tosa_writer.h"

namespace fusefuzz::mlir {

std::string TensorType(const Shape& s, const std::string& element) {
  std::string t = "tensor<";
  for (int64_t d : s) t += std::to_string(d) + "x";
  return t + element + ">";
}

namespace {

uint32_t Bits(float v) {
  uint32_t b = 0;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

std::string Ints(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

// A dense attribute from the values' little-endian bytes: exact, and one element is a splat.
std::string HexDense(const std::vector<float>& data) {
  std::string s = "dense<\"0x";
  char buf[3];
  for (float v : data) {
    const uint32_t b = Bits(v);
    for (int k = 0; k < 4; ++k) {
      std::snprintf(buf, sizeof buf, "%02X", static_cast<unsigned>((b >> (8 * k)) & 0xFF));
      s += buf;
    }
  }
  return s + "\">";
}

}  // namespace

std::string FloatAttr(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%08X : f32", static_cast<unsigned>(Bits(v)));
  return buf;
}

std::string ElementType(const Val& v) {
  const size_t x = v.type.rfind('x'), end = v.type.rfind('>');
  return v.type.substr(x + 1, end - x - 1);
}

std::string Emitter::Fresh() { return "%v" + std::to_string(next_++); }

Val Emitter::Emit(const std::string& op, const std::vector<Val>& operands, const std::string& props,
                  const Shape& out, const std::string& element) {
  Val v{Fresh(), out, TensorType(out, element)};
  std::string names, types;
  for (size_t i = 0; i < operands.size(); ++i) {
    names += (i ? ", " : "") + operands[i].ssa;
    types += (i ? ", " : "") + operands[i].type;
  }
  body_ += "    " + v.ssa + " = \"tosa." + op + "\"(" + names + ")" +
           (props.empty() ? "" : " <{" + props + "}>") + " : (" + types + ") -> " + v.type + "\n";
  return v;
}

Val Emitter::Const(const Shape& s, const std::vector<float>& data) {
  Val v{Fresh(), s, TensorType(s)};
  body_ += "    " + v.ssa + " = \"tosa.const\"() <{values = " + HexDense(data) + " : " + v.type +
           "}> : () -> " + v.type + "\n";
  return v;
}

Val Emitter::IntConst(const Shape& s, const std::vector<int32_t>& data,
                      const std::string& element) {
  Val v{Fresh(), s, TensorType(s, element)};
  if (element == "i8") {
    // One byte per value (weights, zero points, shifts), little-endian like the i32 constants.
    std::string hex = "dense<\"0x";
    char buf[3];
    for (int32_t d : data) {
      std::snprintf(buf, sizeof buf, "%02X", static_cast<unsigned>(d) & 0xFFu);
      hex += buf;
    }
    body_ += "    " + v.ssa + " = \"tosa.const\"() <{values = " + hex + "\"> : " + v.type +
             "}> : () -> " + v.type + "\n";
    return v;
  }
  std::vector<float> bits(data.size());  // the same little-endian bytes as the int32 values
  std::memcpy(bits.data(), data.data(), data.size() * sizeof(int32_t));
  body_ += "    " + v.ssa + " = \"tosa.const\"() <{values = " + HexDense(bits) + " : " + v.type +
           "}> : () -> " + v.type + "\n";
  return v;
}

Val Emitter::ShapeValue(const std::vector<int64_t>& dims) {
  const std::string n = std::to_string(dims.size());
  Val v{Fresh(), {int64_t(dims.size())}, "!tosa.shape<" + n + ">"};
  body_ += "    " + v.ssa + " = \"tosa.const_shape\"() <{values = dense<[" + Ints(dims) +
           "]> : tensor<" + n + "xindex>}> : () -> " + v.type + "\n";
  return v;
}

Val Emitter::Transpose(const Val& v, const std::vector<int64_t>& perm) {
  Shape out;
  for (int64_t p : perm) out.push_back(v.shape[size_t(p)]);
  return Emit("transpose", {v}, "perms = array<i32: " + Ints(perm) + ">", out, ElementType(v));
}

Val Emitter::Reshape(const Val& v, const Shape& to) {
  if (v.shape == to) return v;
  return Emit("reshape", {v, ShapeValue(to)}, "", to, ElementType(v));
}

Val Emitter::Slice(const Val& v, const std::vector<int64_t>& start, const Shape& size) {
  return Emit("slice", {v, ShapeValue(start), ShapeValue(size)}, "", size, ElementType(v));
}

Val Emitter::PadConstant(const Val& v, const std::vector<int64_t>& before_after, float value) {
  Shape out = v.shape;
  for (size_t d = 0; d < out.size(); ++d) out[d] += before_after[2 * d] + before_after[2 * d + 1];
  return Emit("pad", {v, ShapeValue(before_after), Const({1}, {value})}, "", out);
}

Val Emitter::Unary(const std::string& op, const Val& v) { return Emit(op, {v}, "", v.shape); }

Val Emitter::Binary(const std::string& op, Val a, Val b) {
  const size_t rank = std::max(a.shape.size(), b.shape.size());
  auto lift = [&](const Val& v) {
    Shape s(rank - v.shape.size(), 1);
    s.insert(s.end(), v.shape.begin(), v.shape.end());
    return Reshape(v, s);
  };
  a = lift(a);
  b = lift(b);
  Shape out(rank);
  for (size_t d = 0; d < rank; ++d) out[d] = a.shape[d] == 1 ? b.shape[d] : a.shape[d];
  if (op != "mul") return Emit(op, {a, b}, "", out);
  // tosa.mul's third operand: the result shift, 0 for floats.
  Val shift{Fresh(), {1}, "tensor<1xi8>"};
  body_ += "    " + shift.ssa +
           " = \"tosa.const\"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>\n";
  return Emit(op, {a, b, shift}, "", out);
}

Val Emitter::Clamp(const Val& v, float lo, float hi) {
  return Emit("clamp", {v}, "min_val = " + FloatAttr(lo) + ", max_val = " + FloatAttr(hi), v.shape);
}

Val Emitter::Select(const Val& cond, const Val& a, const Val& b) {
  return Emit("select", {cond, a, b}, "", a.shape);
}

std::string Emitter::Module() {
  std::string args, arg_types;
  for (size_t i = 0; i < r_.graph.inputs.size(); ++i) {
    const ValueInfo& in = r_.graph.inputs[i];
    Val v{"%arg" + std::to_string(i), r_.shapes.at(in.name), TensorType(r_.shapes.at(in.name))};
    values_[in.name] = v;
    args += (i ? ", " : "") + v.ssa + ": " + v.type;
    arg_types += (i ? ", " : "") + v.type;
  }
  if (int8_) FindQdqConvs();
  for (const fusefuzz::Node& n : r_.graph.nodes) Node(n);
  std::string results, result_types;
  for (size_t i = 0; i < r_.graph.outputs.size(); ++i) {
    const Val v = ToFloat(values_.at(r_.graph.outputs[i]));
    results += (i ? ", " : "") + v.ssa;
    result_types += (i ? ", " : "") + v.type;
  }
  std::string m = "// fusefuzz graph as TOSA (fusefuzz-mlir-target, targets/mlir/README.md)\n";
  m += "module {\n  func.func @graph(" + args + ") -> (" + result_types + ") {\n" + body_;
  m += "    return " + results + " : " + result_types + "\n  }\n";
  m += "  func.func private @printMemrefI32(memref<*xi32>)\n";
  m += "  func.func @main() {\n";
  std::string call_args;
  for (size_t i = 0; i < r_.graph.inputs.size(); ++i) {
    const ValueInfo& in = r_.graph.inputs[i];
    const std::string t = TensorType(r_.shapes.at(in.name));
    m += "    %in" + std::to_string(i) + " = arith.constant " +
         HexDense(r_.inputs.at(in.name).data) + " : " + t + "\n";
    call_args += (i ? ", " : "") + std::string("%in") + std::to_string(i);
  }
  const size_t n_out = r_.graph.outputs.size();
  m += "    %out:" + std::to_string(n_out) + " = func.call @graph(" + call_args + ") : (" +
       arg_types + ") -> (" + result_types + ")\n";
  // The bit patterns, not the values: printMemrefF32 prints 6 digits.
  for (size_t i = 0; i < n_out; ++i) {
    const Shape& s = r_.shapes.at(r_.graph.outputs[i]);
    const std::string k = std::to_string(i), f = TensorType(s), b = TensorType(s, "i32");
    std::string mem = "memref<";
    for (int64_t d : s) mem += std::to_string(d) + "x";
    mem += "i32>";
    m += "    %bits" + k + " = arith.bitcast %out#" + k + " : " + f + " to " + b + "\n";
    m += "    %buf" + k + " = bufferization.to_buffer %bits" + k + " : " + b + " to " + mem + "\n";
    m += "    %any" + k + " = memref.cast %buf" + k + " : " + mem + " to memref<*xi32>\n";
    m += "    func.call @printMemrefI32(%any" + k + ") : (memref<*xi32>) -> ()\n";
  }
  m += "    return\n  }\n}\n";
  return m;
}

std::string WriteTosaModule(const NativeRequest& r, bool int8) { return Emitter(r, int8).Module(); }

TensorMap ParsePrintedOutputs(const NativeRequest& r, const std::string& printed) {
  TensorMap out;
  size_t pos = 0;
  for (const std::string& name : r.graph.outputs) {
    const Shape& s = r.shapes.at(name);
    const size_t want = size_t(NumElements(s));
    pos = printed.find("data =", pos);
    if (pos == std::string::npos) {
      throw std::runtime_error("mlir-runner printed no data for output '" + name + "'");
    }
    pos += 6;
    Tensor t(s);
    size_t got = 0;
    while (got < want && pos < printed.size()) {
      const char c = printed[pos];
      if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
        size_t used = 0;
        const long long v = std::stoll(printed.substr(pos, 12), &used);
        const auto bits = static_cast<uint32_t>(static_cast<int32_t>(v));
        std::memcpy(&t.data[got++], &bits, sizeof bits);
        pos += used;
      } else if (c == '[' || c == ']' || c == ',' || std::isspace(static_cast<unsigned char>(c))) {
        ++pos;
      } else {
        break;
      }
    }
    if (got != want) {
      throw std::runtime_error("mlir-runner printed " + std::to_string(got) + " of the " +
                               std::to_string(want) + " values of output '" + name + "'");
    }
    out[name] = std::move(t);
  }
  return out;
}

}  // namespace fusefuzz::mlir
