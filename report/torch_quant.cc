// quant_graph.py's Split in C++ (targets/pytorch/README.md, "Quantization flows"): the float
// model's nodes in graph order, the graph's quantization points on float values, integer
// inputs and outputs, and the declared weight grids.
#include "report/torch_quant.h"

#include "ir/error.h"

namespace fusefuzz {
namespace {

bool Commutes(Op op) {
  switch (op) {
    case Op::Relu:
    case Op::Relu6:
    case Op::Clip:
    case Op::MaxPool:
    case Op::Identity:
    case Op::Reshape:
    case Op::Flatten:
      return true;
    case Op::Conv:
    case Op::FusedConv:
    case Op::BatchNorm:
    case Op::LayerNorm:
    case Op::GroupNorm:
    case Op::InstanceNorm:
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
    case Op::AvgPool:
    case Op::GlobalAvgPool:
    case Op::Concat:
    case Op::Gemm:
    case Op::MatMul:
    case Op::QuantizeLinear:
    case Op::DequantizeLinear:
    case Op::QLinearConv:
    case Op::QLinearAdd:
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
      return false;
  }
  return false;
}

class Splitter {
 public:
  explicit Splitter(const Graph& g) : g_(g) {}

  TorchQuantSplit Run() {
    s_.float_graph.inputs = g_.inputs;
    s_.float_graph.options = g_.options;
    for (const auto& in : g_.inputs) {
      for (int c : g_.Consumers(in.name)) {
        const Node& u = g_.nodes[static_cast<size_t>(c)];
        if (u.op == Op::DequantizeLinear || u.op == Op::QLinearConv || u.op == Op::QLinearAdd) {
          const QuantParams p = RoleParams(u, in.name);
          s_.int_inputs[in.name] = p;
          int_values_[in.name] = {in.name, p};
          s_.points[in.name] = p;
          break;
        }
      }
    }
    for (const Node& n : g_.nodes) Emit(n);
    for (const auto& o : g_.outputs) {
      auto iv = int_values_.find(o);
      if (iv != int_values_.end()) {
        s_.int_outputs[o] = iv->second;
        s_.float_graph.outputs.push_back(iv->second.first);
        continue;
      }
      const std::string v = Alias(o);
      auto p = s_.points.find(v);
      if (p != s_.points.end()) s_.dq_outputs[o] = p->second;
      s_.float_graph.outputs.push_back(v);
    }
    const Graph& f = s_.float_graph;
    for (const Node& n : f.nodes) {
      for (const auto& v : n.inputs) {
        const std::vector<int> users = f.Consumers(v);
        if (users.size() == 1 && Commutes(f.nodes[static_cast<size_t>(users[0])].op)) {
          s_.commuting_successor[v] = f.nodes[static_cast<size_t>(users[0])].output;
        }
      }
    }
    return s_;
  }

 private:
  std::string Alias(const std::string& v) const {
    auto it = alias_.find(v);
    return it == alias_.end() ? v : it->second;
  }

  QuantParams RoleParams(const Node& n, const std::string& value) const {
    if (n.op == Op::DequantizeLinear) return n.quant.at("x");
    const bool first = !n.inputs.empty() && n.inputs[0] == value;
    if (n.op == Op::QLinearConv) return n.quant.at(first ? "x" : "r");
    return n.quant.at(first ? "a" : "b");
  }

  std::string ReadInt(const Node& n, const std::string& value) {
    auto it = int_values_.find(value);
    if (it == int_values_.end()) {
      throw InputError("node " + n.name, "reads " + value + ", which holds no integers");
    }
    return it->second.first;
  }

  std::string Add(const std::string& origin, Node n) {
    s_.origin[n.name] = origin;
    s_.float_graph.nodes.push_back(n);
    return s_.float_graph.nodes.back().output;
  }

  void Quantize(const std::string& value, const std::string& out, const QuantParams& p) {
    s_.points[value] = p;
    int_values_[out] = {value, p};
  }

  void Emit(const Node& n) {
    switch (n.op) {
      case Op::QuantizeLinear:
        Quantize(Alias(n.inputs[0]), n.output, n.quant.at("y"));
        return;
      case Op::DequantizeLinear:
        alias_[n.output] = ReadInt(n, n.inputs[0]);
        return;
      case Op::QLinearAdd: {
        Node add{n.name,
                 Op::Add,
                 {ReadInt(n, n.inputs[0]), ReadInt(n, n.inputs[1])},
                 n.name + "__sum",
                 {},
                 {},
                 {},
                 {},
                 {}};
        std::string y = Add(n.name, add);
        if (AttrString(n, "activation") == "relu") {
          y = Add(n.name,
                  Node{n.name + "__relu", Op::Relu, {y}, n.name + "__relu", {}, {}, {}, {}, {}});
        }
        Quantize(y, n.output, n.quant.at("y"));
        return;
      }
      case Op::QLinearConv:
        QLinearConv(n);
        return;
      case Op::MaxPool:
      case Op::Identity:
      case Op::Reshape:
      case Op::Flatten:
        if (int_values_.count(n.inputs[0])) {
          // Order-preserving ops on integers: the same op on the real values, on the same grid.
          const auto [real, p] = int_values_.at(n.inputs[0]);
          Node f = n;
          f.inputs = {real};
          f.output = n.name + "__real";
          f.quant.clear();
          const std::string y = Add(n.name, f);
          s_.points[y] = p;
          int_values_[n.output] = {y, p};
          return;
        }
        break;
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
      case Op::AvgPool:
      case Op::GlobalAvgPool:
      case Op::Concat:
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
        break;  // a float op of the model, below
    }
    Node f = n;
    for (auto& i : f.inputs) i = Alias(i);
    f.quant.clear();
    Add(n.name, f);
    const char* role = n.op == Op::Gemm ? "B" : "W";
    if ((n.op == Op::Conv || n.op == Op::FusedConv || n.op == Op::Gemm) && n.quant.count(role)) {
      s_.weights[n.name] = n.quant.at(role);
    }
  }

  void QLinearConv(const Node& n) {
    const QuantParams& qx = n.quant.at("x");
    const QuantParams& qw = n.quant.at("w");
    Node conv{n.name, Op::Conv, {ReadInt(n, n.inputs[0])}, n.name + "__conv", n.attrs, {}, {},
              {},     {}};
    Tensor w = n.params.at("W");
    const int64_t m = w.shape[0];
    const int64_t per = m ? w.size() / m : 0;
    auto sw = [&](int64_t c) { return static_cast<float>(qw.Scale(c)); };
    for (int64_t i = 0; i < w.size(); ++i) w.data[static_cast<size_t>(i)] *= sw(i / per);
    conv.params["W"] = w;
    auto b = n.params.find("B");
    if (b != n.params.end()) {
      Tensor bias = b->second;
      for (int64_t c = 0; c < bias.size(); ++c) {
        bias.data[static_cast<size_t>(c)] *= static_cast<float>(qx.Scale(0)) * sw(c);
      }
      conv.params["B"] = bias;
    }
    std::string y = Add(n.name, conv);
    s_.weights[n.name] = qw;
    for (size_t k = 0; k < n.epilogue.size(); ++k) {
      const EpilogueStep& st = n.epilogue[k];
      if (st.kind == EpilogueKind::kAdd) {
        const std::string r = ReadInt(n, n.inputs[static_cast<size_t>(st.input)]);
        y = Add(n.name,
                Node{n.name + "__add", Op::Add, {y, r}, n.name + "__add", {}, {}, {}, {}, {}});
      } else if (st.kind == EpilogueKind::kActivation) {
        y = Add(n.name, Node{n.name + "__act" + std::to_string(k),
                             st.act,
                             {y},
                             n.name + "__act" + std::to_string(k),
                             st.attrs,
                             st.params,
                             {},
                             {},
                             {}});
      } else if (st.kind == EpilogueKind::kClamp) {
        y = Add(n.name, Node{n.name + "__clip" + std::to_string(k),
                             Op::Clip,
                             {y},
                             n.name + "__clip" + std::to_string(k),
                             st.attrs,
                             {},
                             {},
                             {},
                             {}});
      } else {
        throw InputError("node " + n.name, "a QLinearConv epilogue step the adapter refuses");
      }
    }
    Quantize(y, n.output, n.quant.at("y"));
  }

  const Graph& g_;
  TorchQuantSplit s_;
  std::map<std::string, std::string> alias_;  // DQ output -> the float value it reads
  std::map<std::string, std::pair<std::string, QuantParams>> int_values_;
};

}  // namespace

TorchQuantSplit SplitQuantGraph(const Graph& g) { return Splitter(g).Run(); }

}  // namespace fusefuzz
