// The graph as PyTorch source, op by op as targets/pytorch/translate.py builds it (its README,
// "ONNX semantics in PyTorch"): the same module classes and arguments, the same functions, the
// same decompositions where a torch module differs from ONNX. What the script runs is then what
// the adapter ran, so a bug that shows through the adapter shows in the script.
#include "report/torch_module.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "ir/error.h"
#include "ir/verifier.h"
#include "report/py_literal.h"
#include "report/torch_script_py.h"

namespace fusefuzz {

namespace {

class Emitter {
 public:
  explicit Emitter(const Graph& g) : g_(g), shapes_(VerifyGraph(g)) {}

  TorchModule Run() {
    for (size_t i = 0; i < g_.inputs.size(); ++i) {
      const std::string var = "x" + std::to_string(i);
      m_.var_of[g_.inputs[i].name] = var;
      m_.input_vars.push_back(var);
    }
    for (const Node& n : g_.nodes) EmitNode(n);
    for (const auto& o : g_.outputs) m_.output_vars.push_back(m_.var_of.at(o));
    std::ostringstream py;
    if (m_.uses_helpers) py << kTorchHelpers;
    py << "\nclass Graph(nn.Module):\n"
       << "    \"\"\"The finding's graph, modules declared in graph order (as the adapter's "
          "translate.py).\"\"\"\n\n"
       << "    def __init__(self):\n        super().__init__()\n";
    for (const auto& l : init_) py << "        " << l << "\n";
    if (!params_.empty()) {
      py << "        with torch.no_grad():\n";
      for (const auto& l : params_) py << "            " << l << "\n";
    }
    py << "\n    def forward(self";
    for (const auto& v : m_.input_vars) py << ", " << v;
    py << "):\n";
    for (const auto& l : forward_) py << "        " << l << "\n";
    py << "        return (";
    for (const auto& v : m_.output_vars) py << v << ", ";
    py << ")\n";
    m_.source = py.str();
    return m_;
  }

 private:
  std::string In(const Node& n, size_t i) const { return m_.var_of.at(n.inputs.at(i)); }
  const Shape& ShapeOf(const std::string& v) const { return shapes_.at(v); }

  // One forward line computing `value` (or an intermediate when value is "").
  std::string Call(const std::string& value, const std::string& expr) {
    const std::string var = "t" + std::to_string(m_.calls.size());
    forward_.push_back(var + " = " + expr);
    m_.calls.push_back(value);
    return var;
  }
  std::string Module(const Node& n, const std::string& cls, const std::string& ctor) {
    const std::string attr = "m" + std::to_string(m_.modules.size());
    init_.push_back("self." + attr + " = " + ctor);
    m_.modules.push_back({attr, cls, n.name});
    return attr;
  }
  std::string Buffer(const Tensor& t) {
    const std::string name = "c" + std::to_string(buffers_++);
    init_.push_back("self.register_buffer('" + name + "', " + PyTensor(t) + ")");
    return "self." + name;
  }
  void Set(const std::string& attr, const std::string& field, const Tensor& t,
           const std::string& reshape = "") {
    params_.push_back("self." + attr + "." + field + ".copy_(" + PyTensor(t) + reshape + ")");
  }

  void EmitNode(const Node& n) {
    const std::string x = n.inputs.empty() ? "" : In(n, 0);
    std::string y;
    switch (n.op) {
      case Op::Conv:
      case Op::FusedConv:
        y = Conv(n);
        break;
      case Op::BatchNorm: {
        const Shape& s = ShapeOf(n.inputs[0]);
        const std::string cls = s.size() == 4 ? "BatchNorm2d" : "BatchNorm1d";
        const std::string a = Module(n, cls,
                                     "nn." + cls + "(" + std::to_string(s[1]) +
                                         ", eps=" + PyDouble(AttrFloat(n, "epsilon")) + ")");
        Set(a, "weight", n.params.at("scale"));
        Set(a, "bias", n.params.at("bias"));
        Set(a, "running_mean", n.params.at("mean"));
        Set(a, "running_var", n.params.at("var"));
        y = Call(n.output, "self." + a + "(" + x + ")");
        break;
      }
      case Op::LayerNorm:
      case Op::GroupNorm:
      case Op::InstanceNorm:
        y = Norm(n, x);
        break;
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
        y = Activation(n, n.op, n.attrs, n.params, x, ShapeOf(n.inputs[0]), n.output);
        break;
      case Op::Add:
      case Op::Sub:
      case Op::Mul:
      case Op::Div: {
        const BinaryOperands b = GetBinaryOperands(n);
        const std::string a = b.const_a ? Buffer(*b.const_a) : In(n, b.input_a);
        const std::string c = b.const_b ? Buffer(*b.const_b) : In(n, b.input_b);
        const char* op = n.op == Op::Add   ? " + "
                         : n.op == Op::Sub ? " - "
                         : n.op == Op::Mul ? " * "
                                           : " / ";
        y = Call(n.output, a + op + c);
        break;
      }
      case Op::Min:
      case Op::Max: {
        const BinaryOperands b = GetBinaryOperands(n);
        const std::string a = b.const_a ? Buffer(*b.const_a) : In(n, b.input_a);
        const std::string c = b.const_b ? Buffer(*b.const_b) : In(n, b.input_b);
        const char* fn = n.op == Op::Min ? "torch.minimum(" : "torch.maximum(";
        y = Call(n.output, fn + a + ", " + c + ")");
        break;
      }
      case Op::ReduceSum:
      case Op::ReduceMax:
        y = Call(n.output, std::string(n.op == Op::ReduceSum ? "torch.sum(" : "torch.amax(") + x +
                               ", dim=" + PyInts(AttrInts(n, "axes"), "(", ")") +
                               ", keepdim=" + (AttrInt(n, "keepdims") ? "True" : "False") + ")");
        break;
      case Op::Softmax:
        y = Call(n.output, "torch.softmax(" + x + ", " + std::to_string(AttrInt(n, "axis")) + ")");
        break;
      case Op::Transpose:
        y = Call(n.output,
                 "torch.permute(" + x + ", " + PyInts(AttrInts(n, "perm"), "(", ")") + ")");
        break;
      case Op::Pad: {
        const auto p = AttrInts(n, "pads");  // t, l, b, r
        const std::string mode = AttrString(n, "mode");
        const std::string pads = PyInts({p[1], p[3], p[0], p[2]});
        if (mode == "constant") {
          y = Call(n.output, "F.pad(" + x + ", " + pads + ", mode='constant', value=" +
                                 PyDouble(AttrFloat(n, "value")) + ")");
        } else {
          const std::string m = mode == "reflect" ? "reflect"
                                : mode == "edge"  ? "replicate"
                                : mode == "wrap"  ? "circular"
                                                  : "";
          if (m.empty()) throw InputError("node " + n.name, "Pad mode " + mode);
          y = Call(n.output, "F.pad(" + x + ", " + pads + ", mode='" + m + "')");
        }
        break;
      }
      case Op::MaxPool:
      case Op::AvgPool:
        y = Pool(n, x);
        break;
      case Op::GlobalAvgPool:
        y = Call(n.output, "self." + Module(n, "AdaptiveAvgPool2d", "nn.AdaptiveAvgPool2d(1)") +
                               "(" + x + ")");
        break;
      case Op::Concat: {
        std::string list;
        for (size_t i = 0; i < n.inputs.size(); ++i) list += (i ? ", " : "") + In(n, i);
        int64_t axis = AttrInt(n, "axis");
        if (axis < 0) axis += static_cast<int64_t>(ShapeOf(n.inputs[0]).size());
        y = Call(n.output, "torch.cat([" + list + "], " + std::to_string(axis) + ")");
        break;
      }
      case Op::Identity:
        y = x;  // no node at all, as in the adapter
        break;
      case Op::Flatten:
      case Op::Reshape:
        y = Call(n.output, "torch.reshape(" + x + ", " + PyInts(ShapeOf(n.output), "(", ")") + ")");
        break;
      case Op::Gemm:
        y = Gemm(n, x);
        break;
      case Op::MatMul:
        y = Call(n.output, "torch.matmul(" + x + ", " + Buffer(n.params.at("B")) + ")");
        break;
      case Op::ReduceMean:
        y = Call(n.output, "torch.mean(" + x + ", dim=" + PyInts(AttrInts(n, "axes"), "(", ")") +
                               ", keepdim=" + (AttrInt(n, "keepdims") ? "True" : "False") + ")");
        break;
      case Op::Pow:
        y = Call(n.output, "torch.pow(" + x + ", " + PyDouble(AttrFloat(n, "exponent")) + ")");
        break;
      case Op::Sqrt:
      case Op::Reciprocal:
      case Op::Exp:
      case Op::Log:
      case Op::Erf: {
        std::string fn(OpName(n.op));
        for (char& ch : fn) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        y = Call(n.output, "torch." + fn + "(" + x + ")");
        break;
      }
      case Op::QuantizeLinear:
      case Op::DequantizeLinear:
      case Op::QLinearConv:
      case Op::QLinearAdd:
        // The quantization modes' float model has none (report/torch_quant.cc splits them).
        throw InputError("node " + n.name, "a quantized op in the float model");
    }
    m_.var_of[n.output] = y;
  }

  std::string Conv(const Node& n) {
    const ConvAttrs a = GetConvAttrs(n);
    const Tensor& w = n.params.at("W");
    const bool bias = n.params.count("B") > 0;
    const bool symmetric = a.pad_top == a.pad_bottom && a.pad_left == a.pad_right;
    std::string x = In(n, 0);
    if (!symmetric) {
      // nn.Conv2d pads both sides equally; ONNX pads may differ per side.
      x = Call("", "F.pad(" + x + ", " +
                       PyInts({a.pad_left, a.pad_right, a.pad_top, a.pad_bottom}) + ")");
    }
    const std::string ctor =
        "nn.Conv2d(" + std::to_string(w.shape[1] * a.group) + ", " + std::to_string(w.shape[0]) +
        ", " + PyInts({w.shape[2], w.shape[3]}, "(", ")") +
        ", stride=" + PyInts({a.stride_h, a.stride_w}, "(", ")") +
        ", dilation=" + PyInts({a.dilation_h, a.dilation_w}, "(", ")") +
        ", padding=" + (symmetric ? PyInts({a.pad_top, a.pad_left}, "(", ")") : std::string("0")) +
        ", groups=" + std::to_string(a.group) + ", bias=" + (bias ? "True" : "False") + ")";
    const std::string m = Module(n, "Conv2d", ctor);
    Set(m, "weight", w);
    if (bias) Set(m, "bias", n.params.at("B"));
    const bool plain = n.epilogue.empty();
    std::string y = Call(plain ? n.output : "", "self." + m + "(" + x + ")");
    const Shape& out = ShapeOf(n.output);
    for (size_t k = 0; k < n.epilogue.size(); ++k) {
      const EpilogueStep& s = n.epilogue[k];
      const std::string value = k + 1 == n.epilogue.size() ? n.output : "";
      switch (s.kind) {
        case EpilogueKind::kScaleShift: {
          Tensor scale = s.params.at("scale"), shift = s.params.at("shift");
          scale.shape = shift.shape = {1, static_cast<int64_t>(scale.data.size()), 1, 1};
          const std::string cs = Buffer(scale), ch = Buffer(shift);
          y = Call(value, Call("", y + " * " + cs) + " + " + ch);
          break;
        }
        case EpilogueKind::kAdd:
          y = Call(value, y + " + " + In(n, static_cast<size_t>(s.input)));
          break;
        case EpilogueKind::kActivation:
          y = Activation(n, s.act, s.attrs, s.params, y, out, value);
          break;
        case EpilogueKind::kClamp:
          y = Call(value, "torch.clamp(" + y + ", " +
                              PyDouble(AttrFloat(Op::Clip, s.attrs, "min", n.name)) + ", " +
                              PyDouble(AttrFloat(Op::Clip, s.attrs, "max", n.name)) + ")");
          break;
      }
    }
    return y;
  }

  std::string Norm(const Node& n, const std::string& x) {
    const Tensor &scale = n.params.at("scale"), &bias = n.params.at("bias");
    const std::string eps = PyDouble(AttrFloat(n, "epsilon"));
    const Shape& s = ShapeOf(n.inputs[0]);
    std::string m;
    if (n.op == Op::LayerNorm) {
      m = Module(n, "LayerNorm", "nn.LayerNorm(" + PyInts(scale.shape) + ", eps=" + eps + ")");
    } else {
      const int64_t c = s[1];
      const int64_t groups = n.op == Op::GroupNorm ? AttrInt(n, "num_groups") : c;
      int64_t span = c / groups;
      for (size_t i = 2; i < s.size(); ++i) span *= s[i];
      if (span == 1) {
        m_.uses_helpers = true;
        m = Module(n, "SingleElementNorm",
                   "SingleElementNorm(" + PyTensor(scale) + ", " + PyTensor(bias) + ", " + eps +
                       ", " + std::to_string(s.size()) + ")");
        return Call(n.output, "self." + m + "(" + x + ")");
      }
      m = n.op == Op::GroupNorm ? Module(n, "GroupNorm",
                                         "nn.GroupNorm(" + std::to_string(groups) + ", " +
                                             std::to_string(c) + ", eps=" + eps + ")")
                                : Module(n, "InstanceNorm2d",
                                         "nn.InstanceNorm2d(" + std::to_string(c) + ", eps=" + eps +
                                             ", affine=True, track_running_stats=False)");
    }
    Set(m, "weight", scale);
    Set(m, "bias", bias);
    return Call(n.output, "self." + m + "(" + x + ")");
  }

  std::string Activation(const Node& n, Op op, const AttrMap& attrs, const ParamMap& params,
                         const std::string& x, const Shape& s, const std::string& value) {
    auto a = [&](const char* name) { return PyDouble(AttrFloat(op, attrs, name, n.name)); };
    std::string cls, ctor;
    switch (op) {
      case Op::Relu:
        cls = "ReLU", ctor = "nn.ReLU()";
        break;
      case Op::Relu6:
        cls = "ReLU6", ctor = "nn.ReLU6()";
        break;
      case Op::Clip:
        return Call(value, "torch.clamp(" + x + ", " + a("min") + ", " + a("max") + ")");
      case Op::LeakyRelu:
        cls = "LeakyReLU", ctor = "nn.LeakyReLU(" + a("alpha") + ")";
        break;
      case Op::PRelu: {
        const Tensor& slope = params.at("slope");
        // nn.PReLU is per channel: the slope may vary along dim 1 only (numpy broadcasting).
        bool per_channel = slope.shape.size() <= s.size();
        const size_t lead = per_channel ? s.size() - slope.shape.size() : 0;
        for (size_t i = 0; per_channel && i < slope.shape.size(); ++i) {
          if (i + lead != 1 && slope.shape[i] != 1) per_channel = false;
        }
        if (per_channel) {
          const std::string m =
              Module(n, "PReLU", "nn.PReLU(num_parameters=" + std::to_string(slope.size()) + ")");
          Set(m, "weight", slope, ".reshape(-1)");
          return Call(value, "self." + m + "(" + x + ")");
        }
        m_.uses_helpers = true;
        cls = "BroadcastPReLU", ctor = "BroadcastPReLU(" + PyTensor(slope) + ")";
        break;
      }
      case Op::Elu:
        cls = "ELU", ctor = "nn.ELU(" + a("alpha") + ")";
        break;
      case Op::Sigmoid:
        cls = "Sigmoid", ctor = "nn.Sigmoid()";
        break;
      case Op::HardSigmoid:
        m_.uses_helpers = true;
        cls = "OnnxHardSigmoid", ctor = "OnnxHardSigmoid(" + a("alpha") + ", " + a("beta") + ")";
        break;
      case Op::Tanh:
        cls = "Tanh", ctor = "nn.Tanh()";
        break;
      case Op::Silu:
        cls = "SiLU", ctor = "nn.SiLU()";
        break;
      case Op::HardSwish:
        cls = "Hardswish", ctor = "nn.Hardswish()";
        break;
      case Op::Gelu: {
        const std::string approx = AttrString(op, attrs, "approximate", n.name);
        if (approx != "none" && approx != "tanh") {
          throw InputError("node " + n.name, "Gelu approximate=" + approx);
        }
        cls = "GELU", ctor = "nn.GELU(approximate='" + approx + "')";
        break;
      }
      case Op::Conv:
      case Op::FusedConv:
      case Op::BatchNorm:
      case Op::LayerNorm:
      case Op::GroupNorm:
      case Op::InstanceNorm:
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
      case Op::QuantizeLinear:
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
      case Op::DequantizeLinear:
      case Op::QLinearConv:
      case Op::QLinearAdd:
        throw InputError("node " + n.name, "not an activation: " + std::string(OpName(op)));
    }
    return Call(value, "self." + Module(n, cls, ctor) + "(" + x + ")");
  }

  std::string Pool(const Node& n, const std::string& x) {
    const PoolAttrs p = GetPoolAttrs(n);
    if (p.dilation_h != 1 || p.dilation_w != 1) {
      throw InputError("node " + n.name, "a dilated pool (the adapter answers unsupported)");
    }
    const bool max = n.op == Op::MaxPool;
    const std::string k = PyInts({p.kernel_h, p.kernel_w}, "(", ")");
    const std::string st = PyInts({p.stride_h, p.stride_w}, "(", ")");
    const std::string ceil = p.ceil_mode ? "True" : "False";
    if (p.pad_top == p.pad_bottom && p.pad_left == p.pad_right && 2 * p.pad_top <= p.kernel_h &&
        2 * p.pad_left <= p.kernel_w) {
      // torch's own padding (symmetric, at most half the kernel) and ceil rule are ONNX's.
      const std::string pad = PyInts({p.pad_top, p.pad_left}, "(", ")");
      const std::string m =
          max ? Module(n, "MaxPool2d",
                       "nn.MaxPool2d(" + k + ", " + st + ", " + pad + ", ceil_mode=" + ceil + ")")
              : Module(n, "AvgPool2d",
                       "nn.AvgPool2d(" + k + ", " + st + ", " + pad + ", ceil_mode=" + ceil +
                           ", count_include_pad=" + (p.count_include_pad ? "True" : "False") + ")");
      return Call(n.output, "self." + m + "(" + x + ")");
    }
    // Explicit padding to exactly the extent of the ONNX windows (may crop at the end).
    m_.uses_helpers = true;
    const Shape& s = ShapeOf(n.inputs[0]);
    const Shape& o = ShapeOf(n.output);
    const int64_t oh = o[2], ow = o[3];
    const int64_t end_h = (oh - 1) * p.stride_h + p.kernel_h - s[2] - p.pad_top;
    const int64_t end_w = (ow - 1) * p.stride_w + p.kernel_w - s[3] - p.pad_left;
    const std::string pad = PyInts({p.pad_left, end_w, p.pad_top, end_h});
    if (max) {
      return Call(n.output, "self." +
                                Module(n, "OnnxMaxPool2d",
                                       "OnnxMaxPool2d(" + k + ", " + st + ", " + pad + ")") +
                                "(" + x + ")");
    }
    const bool inc = p.count_include_pad;
    const int64_t lo_h = inc ? -p.pad_top : 0, hi_h = inc ? s[2] + p.pad_bottom : s[2];
    const int64_t lo_w = inc ? -p.pad_left : 0, hi_w = inc ? s[3] + p.pad_right : s[3];
    Tensor div({1, 1, oh, ow});
    for (int64_t i = 0; i < oh; ++i) {
      const int64_t h0 = i * p.stride_h - p.pad_top;
      const int64_t nh = std::max<int64_t>(0, std::min(h0 + p.kernel_h, hi_h) - std::max(h0, lo_h));
      for (int64_t j = 0; j < ow; ++j) {
        const int64_t w0 = j * p.stride_w - p.pad_left;
        div.data[static_cast<size_t>(i * ow + j)] = static_cast<float>(
            nh * std::max<int64_t>(0, std::min(w0 + p.kernel_w, hi_w) - std::max(w0, lo_w)));
      }
    }
    const std::string m =
        Module(n, "OnnxAvgPool2d",
               "OnnxAvgPool2d(" + k + ", " + st + ", " + pad + ", " + PyTensor(div) + ")");
    return Call(n.output, "self." + m + "(" + x + ")");
  }

  std::string Gemm(const Node& n, const std::string& x) {
    const GemmDims d = GetGemmDims(n, ShapeOf(n.inputs[0]));
    Tensor b = n.params.at("B");  // B' = [K, N]
    if (d.trans_b) {
      Tensor t({b.shape[1], b.shape[0]});
      for (int64_t i = 0; i < b.shape[0]; ++i) {
        for (int64_t j = 0; j < b.shape[1]; ++j) {
          t.data[static_cast<size_t>(j * b.shape[0] + i)] =
              b.data[static_cast<size_t>(i * b.shape[1] + j)];
        }
      }
      b = t;
    }
    auto c = n.params.find("C");
    const bool has_c = c != n.params.end();
    const bool column_bias = !has_c || (c->second.size() == d.n && d.n > 1 &&
                                        (c->second.shape.size() == 1 || c->second.shape[0] == 1));
    std::string y;
    const std::string value = n.epilogue.empty() ? n.output : "";
    if (d.alpha == 1.0 && d.beta == 1.0 && !d.trans_a && column_bias) {
      // nn.Linear, as a real model writes it (so that the modes' Linear fusions see it).
      Tensor wt({d.n, d.k});
      for (int64_t i = 0; i < d.k; ++i) {
        for (int64_t j = 0; j < d.n; ++j) {
          wt.data[static_cast<size_t>(j * d.k + i)] = b.data[static_cast<size_t>(i * d.n + j)];
        }
      }
      const std::string m = Module(n, "Linear",
                                   "nn.Linear(" + std::to_string(d.k) + ", " + std::to_string(d.n) +
                                       ", bias=" + (has_c ? "True" : "False") + ")");
      Set(m, "weight", wt);
      if (has_c) Set(m, "bias", c->second, ".reshape(-1)");
      y = Call(value, "self." + m + "(" + x + ")");
    } else {
      const std::string a = d.trans_a ? Call("", "torch.t(" + x + ")") : x;
      const bool more = d.alpha != 1.0 || has_c;
      y = Call(more ? "" : value, "torch.mm(" + a + ", " + Buffer(b) + ")");
      if (d.alpha != 1.0) y = Call(has_c ? "" : value, y + " * " + PyDouble(d.alpha));
      if (has_c) {
        std::string term = Buffer(c->second);
        if (d.beta != 1.0) term = Call("", term + " * " + PyDouble(d.beta));
        y = Call(value, y + " + " + term);
      }
    }
    const Shape out = {d.m, d.n};
    for (size_t k = 0; k < n.epilogue.size(); ++k) {
      const EpilogueStep& s = n.epilogue[k];
      const std::string v = k + 1 == n.epilogue.size() ? n.output : "";
      if (s.kind == EpilogueKind::kActivation) {
        y = Activation(n, s.act, s.attrs, s.params, y, out, v);
      } else if (s.kind == EpilogueKind::kClamp) {
        y = Call(v, "torch.clamp(" + y + ", " +
                        PyDouble(AttrFloat(Op::Clip, s.attrs, "min", n.name)) + ", " +
                        PyDouble(AttrFloat(Op::Clip, s.attrs, "max", n.name)) + ")");
      } else {
        throw InputError("node " + n.name, "a Gemm epilogue step the adapter refuses");
      }
    }
    return y;
  }

  const Graph& g_;
  ShapeMap shapes_;
  TorchModule m_;
  std::vector<std::string> init_, params_, forward_;
  int buffers_ = 0;
};

}  // namespace

TorchModule EmitTorchModule(const Graph& g) { return Emitter(g).Run(); }

}  // namespace fusefuzz
