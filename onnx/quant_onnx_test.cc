// Quantized graphs through ONNX (docs/onnx.md, "Quantization"): export as QDQ passes libonnx's
// checker and strict shape inference; import gives back the same graph (QuantizeLinear,
// DequantizeLinear, weight and bias grids, QLinearConv and QLinearAdd through their records, and
// without records the QDQ form); what fusefuzz does not model is refused naming the node.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <functional>
#include <string>

#include "ir/error.h"
#include "ir/json_io.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "onnx/validate.h"

namespace fusefuzz {
namespace {

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

Graph G(const std::string& nodes, const std::string& outputs = R"(["y"])") {
  return ParseGraph(R"({"format": "fusefuzz-graph", "version": 2,
    "inputs": [{"name": "x", "shape": [1, 2, 3, 3]}], "nodes": [)" +
                    nodes + R"(], "outputs": )" + outputs + "}");
}

// x -> Q(u8) -> DQ -> Conv (W per-channel int8 grid, B int32 grid) -> Relu -> Q(i8) -> DQ.
const char* kQdqConv = R"(
  {"name": "q1", "op": "QuantizeLinear", "inputs": ["x"], "outputs": ["xq"],
   "quant": {"y": {"type": "uint8", "scale": [0.0625], "zero_point": [128]}}},
  {"name": "d1", "op": "DequantizeLinear", "inputs": ["xq"], "outputs": ["xd"],
   "quant": {"x": {"type": "uint8", "scale": [0.0625], "zero_point": [128]}}},
  {"name": "c", "op": "Conv", "inputs": ["xd"], "outputs": ["c"],
   "params": {"W": {"shape": [2, 2, 1, 1], "data": [0.5, -1, 0.25, 0.75]},
              "B": {"shape": [2], "data": [0.0625, -0.015625]}},
   "quant": {"W": {"type": "int8", "scale": [0.5, 0.25], "zero_point": [0, 0], "axis": 0},
             "B": {"type": "int32", "scale": [0.03125, 0.015625], "zero_point": [0, 0],
                   "axis": 0}}},
  {"name": "r", "op": "Relu", "inputs": ["c"], "outputs": ["r"]},
  {"name": "q2", "op": "QuantizeLinear", "inputs": ["r"], "outputs": ["rq"],
   "quant": {"y": {"type": "int8", "scale": [0.1], "zero_point": [-3]}}},
  {"name": "d2", "op": "DequantizeLinear", "inputs": ["rq"], "outputs": ["y"],
   "quant": {"x": {"type": "int8", "scale": [0.1], "zero_point": [-3]}}})";

// x -> Q -> QLinearConv (residual, Relu6) -> QLinearAdd(relu) -> y, an integer output; the
// second output xq is the quantized input itself.
const char* kQLinear = R"(
  {"name": "q1", "op": "QuantizeLinear", "inputs": ["x"], "outputs": ["xq"],
   "quant": {"y": {"type": "uint8", "scale": [0.0625], "zero_point": [128]}}},
  {"name": "qc", "op": "QLinearConv", "inputs": ["xq", "xq"], "outputs": ["qc"],
   "params": {"W": {"shape": [2, 2, 1, 1], "data": [1, -2, 3, 4]},
              "B": {"shape": [2], "data": [5, -7]}},
   "epilogue": [{"kind": "add", "input": 1}, {"kind": "activation", "op": "Relu6"}],
   "quant": {"x": {"type": "uint8", "scale": [0.0625], "zero_point": [128]},
             "w": {"type": "int8", "scale": [0.5, 0.25], "zero_point": [0, 0], "axis": 0},
             "r": {"type": "uint8", "scale": [0.0625], "zero_point": [128]},
             "y": {"type": "int8", "scale": [0.05], "zero_point": [-128]}}},
  {"name": "qa", "op": "QLinearAdd", "inputs": ["qc", "qc"], "outputs": ["y"],
   "attrs": {"activation": "relu"},
   "quant": {"a": {"type": "int8", "scale": [0.05], "zero_point": [-128]},
             "b": {"type": "int8", "scale": [0.05], "zero_point": [-128]},
             "y": {"type": "uint8", "scale": [0.1], "zero_point": [0]}}})";

// A DequantizeLinear of a graph input (per axis): the model casts the input to int8.
const char* kDqInput = R"(
  {"name": "d", "op": "DequantizeLinear", "inputs": ["x"], "outputs": ["y"],
   "quant": {"x": {"type": "int8", "scale": [0.5, 0.25], "zero_point": [1, -2], "axis": 1}}})";

void ExpectRoundTrip(const Graph& g, int64_t records) {
  OnnxModel m = ExportOnnx(g);
  EXPECT_EQ(CheckOnnxModel(m.bytes), "");
  OnnxImportInfo info;
  Graph back = ImportOnnx(m.bytes, "m.onnx", {}, &info);
  EXPECT_EQ(info.not_refused, "");
  EXPECT_EQ(info.refused, records);
  EXPECT_EQ(WriteGraph(back), WriteGraph(g));
  // Export is a fixpoint: the imported graph exports to the same bytes.
  EXPECT_EQ(ExportOnnx(back).bytes, m.bytes);
}

TEST(QuantOnnx, QdqGraphsComeBackAsTheSameGraph) {
  ExpectRoundTrip(G(kQdqConv), 0);
  // A float op reading integers (the model casts them to float) and an integer MaxPool.
  ExpectRoundTrip(G(R"(
    {"name": "q", "op": "QuantizeLinear", "inputs": ["x"], "outputs": ["xq"],
     "quant": {"y": {"type": "int8", "scale": [0.5], "zero_point": [3]}}},
    {"name": "p", "op": "MaxPool", "inputs": ["xq"], "outputs": ["p"],
     "attrs": {"kernel_shape": [2, 2]}},
    {"name": "r", "op": "Relu", "inputs": ["p"], "outputs": ["y"]})",
                    R"(["y", "p"])"),
                  0);
  ExpectRoundTrip(G(kQLinear, R"(["y", "xq"])"), 2);
  ExpectRoundTrip(G(kDqInput), 0);
}

TEST(QuantOnnx, ExportIsStandardQdq) {
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(ExportOnnx(G(kQdqConv)).bytes));
  std::map<std::string, int> types;
  for (const onnx::TensorProto& t : m.graph().initializer()) types[t.name()] = t.data_type();
  EXPECT_EQ(types.at("c.W"), onnx::TensorProto::INT8);
  EXPECT_EQ(types.at("c.B"), onnx::TensorProto::INT32);
  EXPECT_EQ(types.at("q1/y_zero_point"), onnx::TensorProto::UINT8);
  EXPECT_EQ(types.at("q2/y_zero_point"), onnx::TensorProto::INT8);
  std::string ops;
  for (const onnx::NodeProto& n : m.graph().node()) ops += n.op_type() + " ";
  EXPECT_EQ(ops,
            "QuantizeLinear DequantizeLinear DequantizeLinear DequantizeLinear Conv Relu "
            "QuantizeLinear DequantizeLinear ");
  // The interface stays float32: an integer output is cast back under its own name.
  ASSERT_TRUE(m.ParseFromString(ExportOnnx(G(kQLinear, R"(["y", "xq"])")).bytes));
  EXPECT_EQ(m.graph().node(m.graph().node_size() - 1).op_type(), "Cast");
  EXPECT_EQ(m.graph().output(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
}

TEST(QuantOnnx, WithoutRecordsQLinearOpsComeBackInQdqForm) {
  OnnxExportOptions opts;
  opts.record_nodes = false;
  Graph back = ImportOnnx(ExportOnnx(G(kQLinear), opts).bytes, "m.onnx");
  std::string ops;
  for (const Node& n : back.nodes) ops += std::string(OpName(n.op)) + " ";
  EXPECT_EQ(ops,
            "QuantizeLinear DequantizeLinear Conv DequantizeLinear Add Clip QuantizeLinear "
            "DequantizeLinear DequantizeLinear Add Relu QuantizeLinear ");
  EXPECT_EQ(back.nodes[2].quant.count("W"), 1u);
  EXPECT_EQ(back.nodes[2].quant.count("B"), 1u);
}

// Edits the exported model of kQdqConv.
std::string Edited(const std::function<void(onnx::GraphProto*)>& edit) {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(ExportOnnx(G(kQdqConv)).bytes));
  edit(m.mutable_graph());
  return m.SerializeAsString();
}

onnx::NodeProto* NodeNamed(onnx::GraphProto* g, const std::string& name) {
  for (onnx::NodeProto& n : *g->mutable_node()) {
    if (n.name() == name) return &n;
  }
  ADD_FAILURE() << "no node " << name;
  return g->mutable_node(0);
}

// PyTorch's QDQ export of a QAT model keeps float weights behind QuantizeLinear ->
// DequantizeLinear (issue 43): the weight's int8 initializer replaced by its float values and a
// QuantizeLinear of it imports as the same graph, the weight on the same per-channel grid.
TEST(QuantOnnx, QuantizeOfAFloatWeightFoldsIntoTheGrid) {
  const std::string bytes = Edited([&](onnx::GraphProto* g) {
    for (int k = 0; k < g->node_size(); ++k) {
      onnx::NodeProto dq = g->node(k);
      if (dq.op_type() != "DequantizeLinear") continue;
      for (onnx::TensorProto& t : *g->mutable_initializer()) {
        if (t.name() != dq.input(0) || t.data_type() != onnx::TensorProto::INT8 ||
            t.dims_size() != 4) {
          continue;
        }
        // The int8 weight [1, -2, 1, 3] at scales [0.5, 0.25]: as floats, then quantized.
        const float w[] = {0.5f, -1.0f, 0.25f, 0.75f};
        t.clear_raw_data();
        t.clear_int32_data();
        t.set_data_type(onnx::TensorProto::FLOAT);
        t.set_name(t.name() + "_float");
        for (float v : w) t.add_float_data(v);
        onnx::NodeProto q = dq;
        q.set_op_type("QuantizeLinear");
        q.set_name(dq.name() + "_q");
        q.set_input(0, t.name());
        q.set_output(0, dq.input(0));
        *g->add_node() = q;
        // Nodes in topological order: the QuantizeLinear before its DequantizeLinear.
        for (int j = g->node_size() - 1; j > k; --j) g->mutable_node()->SwapElements(j, j - 1);
        return;
      }
    }
    ADD_FAILURE() << "no int8 weight initializer";
  });
  const Graph back = ImportOnnx(bytes, "m.onnx");
  const Graph want = G(kQdqConv);
  ASSERT_EQ(back.nodes.size(), want.nodes.size());
  const Node& conv = back.nodes[2];
  EXPECT_EQ(conv.op, Op::Conv);
  EXPECT_EQ(conv.params.at("W").data, want.nodes[2].params.at("W").data);
  ASSERT_EQ(conv.quant.count("W"), 1u);
  EXPECT_EQ(conv.quant.at("W").scale, want.nodes[2].quant.at("W").scale);
}

TEST(QuantOnnx, WhatIsNotModeledIsRefusedNamingTheNode) {
  auto attr = [](onnx::NodeProto* n, const std::string& name, int64_t v) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  };
  EXPECT_EQ(ErrorOf([&] {
              ImportOnnx(
                  Edited([&](onnx::GraphProto* g) { attr(NodeNamed(g, "q2"), "block_size", 32); }),
                  "m.onnx");
            }),
            "m.onnx: node 'q2' (op type QuantizeLinear): the model is quantized, and it uses "
            "blocked quantization (block_size 32), which fusefuzz does not model");
  EXPECT_EQ(ErrorOf([&] {
              ImportOnnx(
                  Edited([&](onnx::GraphProto* g) { attr(NodeNamed(g, "q1"), "saturate", 0); }),
                  "m.onnx");
            }),
            "m.onnx: node 'q1' (op type QuantizeLinear): the model is quantized, and it sets "
            "saturate=0 (float8 without saturation), which fusefuzz does not model");
  EXPECT_EQ(ErrorOf([&] {
              ImportOnnx(Edited([&](onnx::GraphProto* g) {
                           attr(NodeNamed(g, "q1"), "output_dtype", onnx::TensorProto::INT8);
                         }),
                         "m.onnx");
            }),
            "m.onnx: node 'q1' (op type QuantizeLinear): the model is quantized, and its "
            "output_dtype int8 is not its zero point's type uint8");
  // An int16 zero point: the initializer is refused where the node reads it.
  std::string int16 = Edited([&](onnx::GraphProto* g) {
    for (onnx::TensorProto& t : *g->mutable_initializer()) {
      if (t.name() == "q2/y_zero_point") {
        t.set_data_type(onnx::TensorProto::INT16);
        t.set_raw_data(std::string(2, '\0'));
      }
    }
  });
  EXPECT_EQ(ErrorOf([&] { ImportOnnx(int16, "m.onnx"); }),
            "m.onnx: node 'q2' (op type QuantizeLinear): initializer 'q2/y_zero_point': data "
            "type int16 (fusefuzz reads float, int64, and the uint8, int8 and int32 of quantized "
            "models)");
  // A scale computed by the model (here: a graph input).
  EXPECT_EQ(ErrorOf([&] {
              ImportOnnx(
                  Edited([&](onnx::GraphProto* g) { NodeNamed(g, "d2")->set_input(1, "x"); }),
                  "m.onnx");
            }),
            "m.onnx: node 'd2' (op type DequantizeLinear): the model is quantized, and x scale "
            "(input 1) is not a constant; fusefuzz models constant scales only");
  // ONNX's integer arithmetic (a uint8 Add wraps around) is not fusefuzz's float op.
  EXPECT_EQ(ErrorOf([&] {
              ImportOnnx(Edited([&](onnx::GraphProto* g) {
                           NodeNamed(g, "d2")->set_op_type("Relu");
                           NodeNamed(g, "d2")->mutable_input()->DeleteSubrange(1, 2);
                         }),
                         "m.onnx");
            }),
            "m.onnx: node 'd2' (op type Relu): reads 'rq', an integer tensor (int8): fusefuzz "
            "models integer tensors only as quantized values (read by DequantizeLinear, "
            "QLinearConv, QLinearAdd, or moved by MaxPool, Identity, Reshape, Flatten, Concat)");
  EXPECT_EQ(ErrorOf([&] {
              ImportOnnx(Edited([&](onnx::GraphProto* g) {
                           NodeNamed(g, "q1")->set_op_type("DynamicQuantizeLinear");
                         }),
                         "m.onnx");
            }),
            "m.onnx: node 'q1' (op type DynamicQuantizeLinear): the model is quantized, and it "
            "is a quantized op that fusefuzz does not model (it models QuantizeLinear, "
            "DequantizeLinear, QLinearConv and QLinearAdd)");
}

TEST(QuantOnnx, HostileIntegerTensorsAreClearErrorsBeforeAllocating) {
  auto with_weights = [&](const std::function<void(onnx::TensorProto*)>& edit) {
    return Edited([&](onnx::GraphProto* g) {
      for (onnx::TensorProto& t : *g->mutable_initializer()) {
        if (t.name() == "c.W") edit(&t);
      }
    });
  };
  // raw_data shorter than the dims say.
  EXPECT_EQ(ErrorOf([&] {
              ImportOnnx(with_weights([](onnx::TensorProto* t) { t->set_raw_data("ab"); }),
                         "m.onnx");
            }),
            "m.onnx: node 'c/W/dequantize' (op type DequantizeLinear): initializer 'c.W': "
            "raw_data size does not match the dims");
  // A scale declaring 2^40 elements: refused by the limits, nothing allocated.
  EXPECT_EQ(ErrorOf([&] {
              ImportOnnx(with_weights([](onnx::TensorProto* t) {
                           t->clear_dims();
                           for (int i = 0; i < 4; ++i) t->add_dims(int64_t{1} << 10);
                         }),
                         "m.onnx");
            }),
            "m.onnx: node 'c/W/dequantize' (op type DequantizeLinear): initializer 'c.W': more "
            "elements than the limit");
  // int32_data out of the int8 range.
  EXPECT_EQ(ErrorOf([&] {
              ImportOnnx(with_weights([](onnx::TensorProto* t) {
                           t->clear_raw_data();
                           for (int i = 0; i < 4; ++i) t->add_int32_data(i == 2 ? 300 : 1);
                         }),
                         "m.onnx");
            }),
            "m.onnx: node 'c/W/dequantize' (op type DequantizeLinear): initializer 'c.W': "
            "int32_data element 2 = 300 is out of range for int8");
  // A per-channel scale whose length is not the channel count.
  EXPECT_NE(ErrorOf([&] {
              ImportOnnx(Edited([&](onnx::GraphProto* g) {
                           for (onnx::TensorProto& t : *g->mutable_initializer()) {
                             if (t.name() == "c/W_scale" || t.name() == "c/W_zero_point") {
                               t.set_dims(0, 3);
                               t.set_raw_data(t.raw_data() +
                                              t.raw_data().substr(0, t.raw_data().size() / 2));
                             }
                           }
                         }),
                         "m.onnx");
            }).find("node 'c/W/dequantize' (op type DequantizeLinear): the model is quantized"),
            std::string::npos);
}

TEST(QuantOnnx, CutNeverDropsAQuantizeLinearSilently) {
  // Importable: --cut keeps every Q/DQ and the grids.
  CutImport all = ImportOnnxCut(ExportOnnx(G(kQdqConv)).bytes, "m.onnx");
  EXPECT_TRUE(all.dropped.empty());
  EXPECT_EQ(WriteGraph(all.graph), WriteGraph(G(kQdqConv)));
  // Not importable (blocked): the node is cut off, and says why.
  CutImport part = ImportOnnxCut(Edited([&](onnx::GraphProto* g) {
                                   onnx::AttributeProto* a = NodeNamed(g, "q2")->add_attribute();
                                   a->set_name("block_size");
                                   a->set_type(onnx::AttributeProto::INT);
                                   a->set_i(4);
                                 }),
                                 "m.onnx");
  ASSERT_FALSE(part.dropped.empty());
  EXPECT_NE(part.dropped[0].find("node 'q2' (op type QuantizeLinear): the model is quantized"),
            std::string::npos)
      << part.dropped[0];
}

// An ONNX QLinearConv (as ONNX Runtime's quantizer writes one) of bias `bias`, between a
// QuantizeLinear and a DequantizeLinear.
std::string QLinearConvModel(int32_t bias) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("qlinearconv");
  auto value = [](onnx::ValueInfoProto* v, const std::string& name) {
    v->set_name(name);
    onnx::TypeProto::Tensor* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int d : {1, 1, 2, 2}) t->mutable_shape()->add_dim()->set_dim_value(d);
  };
  value(g->add_input(), "x");
  value(g->add_output(), "y");
  auto init = [&](const std::string& name, int type, const std::vector<int64_t>& dims,
                  const std::string& raw) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (int64_t d : dims) t->add_dims(d);
    t->set_raw_data(raw);
  };
  const float half = 0.5f;
  const std::string half_raw(reinterpret_cast<const char*>(&half), 4);
  init("s", onnx::TensorProto::FLOAT, {}, half_raw);
  init("z", onnx::TensorProto::UINT8, {}, std::string(1, '\0'));
  init("w", onnx::TensorProto::INT8, {1, 1, 1, 1}, std::string(1, '\1'));
  init("wz", onnx::TensorProto::INT8, {}, std::string(1, '\0'));
  init("b", onnx::TensorProto::INT32, {1}, std::string(reinterpret_cast<const char*>(&bias), 4));
  auto node = [&](const std::string& op, std::vector<std::string> in, const std::string& out) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(out + "_node");
    for (const std::string& i : in) n->add_input(i);
    n->add_output(out);
  };
  node("QuantizeLinear", {"x", "s", "z"}, "xq");
  node("QLinearConv", {"xq", "s", "z", "w", "s", "wz", "s", "z", "b"}, "yq");
  node("DequantizeLinear", {"yq", "s", "z"}, "y");
  return m.SerializeAsString();
}

// Issue 44 item 10: an int32 QLinearConv bias of 2^24 + 1 was rounded to 2^24 on import (fusefuzz
// holds its integers as float32): another model, silently.
TEST(QuantOnnx, QLinearConvBiasBeyondFloat32IsRefusedNotRounded) {
  const Graph ok = ImportOnnx(QLinearConvModel(1 << 24), "m.onnx");
  for (int32_t bias : {(1 << 24) + 1, -(1 << 24) - 1}) {
    const std::string e = ErrorOf([&] { ImportOnnx(QLinearConvModel(bias), "m.onnx"); });
    EXPECT_NE(e.find("m.onnx"), std::string::npos) << e;
    EXPECT_NE(e.find("yq_node"), std::string::npos) << e;
    EXPECT_NE(e.find(std::to_string(bias) + " is beyond 2^24"), std::string::npos) << e;
  }
}

// Found by onnx_import_fuzzer: an int32 bias grid with zero point -2^24 (q - z beyond 2^24) came
// back one float32 ulp off after import -> export -> import; now a fixpoint.
TEST(QuantOnnx, Int32BiasWithALargeZeroPointRoundTrips) {
  const std::string path =
      std::string(FUSEFUZZ_SOURCE_DIR) +
      "/corpus/fuzz/onnx_import_fuzzer/roundtrip-int32-bias-large-zero-point.onnx";
  const Graph first = ImportOnnx(ReadModelFile(path), path);
  const Graph second = ImportOnnx(ExportOnnx(first).bytes, "re-exported");
  EXPECT_EQ(WriteGraph(first), WriteGraph(second));
}

// Issue 44 item 8: a model fusefuzz exported with negative scales (the graph option
// allow_negative_scale, which ONNX has no field for) was refused on import.
TEST(QuantOnnx, NegativeScalesOfItsOwnExportReadBack) {
  const Graph g = ParseGraph(R"({"format": "fusefuzz-graph", "version": 2,
    "options": {"allow_negative_scale": true},
    "inputs": [{"name": "x", "shape": [1, 2, 3, 3]}], "nodes": [
    {"name": "q", "op": "QuantizeLinear", "inputs": ["x"], "outputs": ["xq"],
     "quant": {"y": {"type": "int8", "scale": [-0.0625], "zero_point": [0]}}},
    {"name": "d", "op": "DequantizeLinear", "inputs": ["xq"], "outputs": ["y"],
     "quant": {"x": {"type": "int8", "scale": [-0.0625], "zero_point": [0]}}}],
    "outputs": ["y"]})");
  const Graph back = ImportOnnx(ExportOnnx(g).bytes, "m.onnx");
  EXPECT_TRUE(back.options.allow_negative_scale);
  EXPECT_EQ(WriteGraph(back), WriteGraph(g));
}

}  // namespace
}  // namespace fusefuzz
