// The ONNX export's spellings (onnx/export_spellings.h). Each writes the node's exact math the
// way real exporters leave it: extra no-op nodes after it, constants of another rank, Reshape
// chains and computed shapes, Gemm and MatMul written as each other.
#include "onnx/export_spellings.h"

#include "ir/error.h"
#include "onnx/node_builder.h"

namespace fusefuzz {
namespace {

Tensor Transposed(const Tensor& t) {  // a [R, C] matrix as [C, R]
  const int64_t r = t.shape[0], c = t.shape[1];
  Tensor out({c, r}, std::vector<float>(t.data.size()));
  for (int64_t i = 0; i < r; ++i) {
    for (int64_t j = 0; j < c; ++j) out.data[size_t(j * r + i)] = t.data[size_t(i * c + j)];
  }
  return out;
}

// The plain node into a fresh value, then `tail` from it into the node's output.
void Trailing(const Node& n, const SpellingExportHooks& h,
              const std::function<void(const std::string& from)>& tail) {
  Node m = n;
  m.spelling.clear();
  m.output = h.value(n, "spelled");
  h.emit_plain(m);
  tail(m.output);
}

Node Plain(const Node& n) {
  Node m = n;
  m.spelling.clear();
  return m;
}

}  // namespace

bool HasOnnxSpelling(const Node& n) {
  if (n.spelling.empty()) return false;
  std::optional<Spelling> s = SpellingFromName(n.spelling);
  return s && InfoOf(*s).family == SpellingFamily::kOnnx;
}

void EmitOnnxSpelling(const Node& n, const Shape& in, const Shape& out,
                      const SpellingExportHooks& h) {
  const Spelling s = *SpellingFromName(n.spelling);
  switch (s) {
    case Spelling::kOnnxIdentityAfter:
      return Trailing(n, h, [&](const std::string& v) {
        h.add(NodeBuilder("Identity", h.node_name(n, "identity")).In(v).Out(n.output).node());
      });
    case Spelling::kOnnxDropoutAfter:
      return Trailing(n, h, [&](const std::string& v) {
        h.add(NodeBuilder("Dropout", h.node_name(n, "dropout")).In(v).Out(n.output).node());
      });
    case Spelling::kOnnxCastSameType:
      return Trailing(n, h, [&](const std::string& v) {
        h.add(NodeBuilder("Cast", h.node_name(n, "cast"))
                  .In(v)
                  .Out(n.output)
                  .AttrI("to", onnx::TensorProto::FLOAT)
                  .node());
      });
    case Spelling::kOnnxIdentityTranspose:
      return Trailing(n, h, [&](const std::string& v) {
        std::vector<int64_t> perm;
        for (size_t i = 0; i < out.size(); ++i) perm.push_back(int64_t(i));
        h.add(NodeBuilder("Transpose", h.node_name(n, "transpose"))
                  .In(v)
                  .Out(n.output)
                  .AttrInts("perm", perm)
                  .node());
      });
    case Spelling::kOnnxUnsqueezeSqueeze:
      return Trailing(n, h, [&](const std::string& v) {
        const std::string axes = h.int64s(n.name + "/axes", {0});
        const std::string mid = h.value(n, "unsqueezed");
        h.add(NodeBuilder("Unsqueeze", h.node_name(n, "unsqueeze")).In(v).In(axes).Out(mid).node());
        h.add(NodeBuilder("Squeeze", h.node_name(n, "squeeze"))
                  .In(mid)
                  .In(axes)
                  .Out(n.output)
                  .node());
      });
    case Spelling::kOnnxReshapeChain: {
      Node flat = Plain(n);
      flat.op = Op::Reshape;
      flat.name = h.node_name(n, "flat");
      flat.attrs = {{"shape", std::vector<int64_t>{-1}}};
      flat.output = h.value(n, "flat");
      h.emit_plain(flat);
      Node target = Plain(n);
      target.op = Op::Reshape;
      target.inputs = {flat.output};
      target.attrs = {{"shape", std::vector<int64_t>(out.begin(), out.end())}};
      h.emit_plain(target);
      return;
    }
    case Spelling::kOnnxFlattenAsReshape: {
      Node m = Plain(n);
      m.op = Op::Reshape;
      m.attrs = {{"shape", std::vector<int64_t>{out[0], -1}}};
      h.emit_plain(m);
      return;
    }
    case Spelling::kOnnxComputedShape: {
      const std::string shape = h.value(n, "shape");
      const std::string dim0 = h.value(n, "dim0");
      const std::string target = h.value(n, "target");
      h.add(NodeBuilder("Shape", h.node_name(n, "shape")).In(n.inputs[0]).Out(shape).node());
      h.add(NodeBuilder("Gather", h.node_name(n, "gather"))
                .In(shape)
                .In(h.int64s(n.name + "/index", {0}))
                .Out(dim0)
                .AttrI("axis", 0)
                .node());
      h.add(NodeBuilder("Concat", h.node_name(n, "concat"))
                .In(dim0)
                .In(h.int64s(n.name + "/rest", std::vector<int64_t>(out.begin() + 1, out.end())))
                .Out(target)
                .AttrI("axis", 0)
                .node());
      h.add(NodeBuilder("Reshape", n.name).In(n.inputs[0]).In(target).Out(n.output).node());
      return;
    }
    case Spelling::kOnnxScalarRank0:
    case Spelling::kOnnxScalarRank1:
    case Spelling::kOnnxScalarRank3: {
      Node m = Plain(n);
      const Shape rank = s == Spelling::kOnnxScalarRank0   ? Shape{}
                         : s == Spelling::kOnnxScalarRank1 ? Shape{1}
                                                           : Shape{1, 1, 1};
      for (auto& [name, t] : m.params) t.shape = rank;  // the one one-element operand
      h.emit_plain(m);
      return;
    }
    case Spelling::kOnnxGemmMatMulAdd: {
      const GemmDims d = GetGemmDims(n, in);
      Node mm = Plain(n);
      mm.op = Op::MatMul;
      mm.attrs.clear();
      mm.params = {{"B", d.trans_b ? Transposed(n.params.at("B")) : n.params.at("B")}};
      auto c = n.params.find("C");
      if (c == n.params.end()) return h.emit_plain(mm);
      mm.output = h.value(n, "matmul");
      h.emit_plain(mm);
      h.add(NodeBuilder("Add", h.node_name(n, "add"))
                .In(mm.output)
                .In(h.floats(n.name + ".C", c->second.shape, c->second.data))
                .Out(n.output)
                .node());
      return;
    }
    case Spelling::kOnnxGemmFlipTransB: {
      Node m = Plain(n);
      m.params["B"] = Transposed(n.params.at("B"));
      m.attrs["transB"] = int64_t{AttrInt(n, "transB") ? 0 : 1};
      h.emit_plain(m);
      return;
    }
    case Spelling::kOnnxMatMulAsGemm: {
      Node m = Plain(n);
      m.op = Op::Gemm;
      h.emit_plain(m);
      return;
    }
    case Spelling::kOnnxConstantNodes:
      return h.emit_plain(Plain(n));
    default:
      break;
  }
  throw InputError("node '" + n.name + "'", "spelling '" + n.spelling + "' is not an ONNX one");
}

}  // namespace fusefuzz
