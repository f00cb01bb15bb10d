// Issue 29 at the importer: external data anywhere in a model (items 5), names the graph format
// refuses (item 6), versions out of range (item 8), and the readers' first-byte check (item 2).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <string>
#include <tuple>

#include "ir/error.h"
#include "ir/json_io.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "onnx/proto_io.h"
#include "onnx/tensor_proto.h"

namespace fusefuzz {
namespace {

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool Has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// x[1,2,3,3] -> Relu -> y, as fusefuzz exports it, for editing.
onnx::ModelProto ReluModel() {
  Graph g = ParseGraph(R"({"format": "fusefuzz-graph", "version": 1,
    "inputs": [{"name": "x", "shape": [1, 2, 3, 3]}],
    "nodes": [{"name": "r", "op": "Relu", "inputs": ["x"], "outputs": ["y"]}],
    "outputs": ["y"]})");
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(ExportOnnx(g).bytes));
  return m;
}

void External(onnx::TensorProto* t, const std::string& location) {
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(1);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = t->add_external_data();
  e->set_key("location");
  e->set_value(location);
}

// 5: a Constant with external data, or an initializer with external data inside an If branch,
// was "cut off" by import --cut, and the prefix model went to ONNX Runtime with the reference.
TEST(HostileRound2, Item5ExternalDataThroughCutIsRefusedEverywhere) {
  // (a) A Constant whose value is external, read by an op outside the vocabulary.
  onnx::ModelProto a = ReluModel();
  {
    onnx::NodeProto* c = a.mutable_graph()->add_node();
    c->set_name("leak");
    c->set_op_type("Constant");
    c->add_output("k");
    onnx::AttributeProto* v = c->add_attribute();
    v->set_name("value");
    v->set_type(onnx::AttributeProto::TENSOR);
    External(v->mutable_t(), "../../../../etc/passwd");
    onnx::NodeProto* e = a.mutable_graph()->add_node();
    e->set_name("e");
    e->set_op_type("Erf");
    e->add_input("k");
    e->add_output("z");
  }
  // (b) An If whose branch holds an initializer with external data at an absolute path.
  onnx::ModelProto b = ReluModel();
  {
    onnx::NodeProto* n = b.mutable_graph()->add_node();
    n->set_name("branch");
    n->set_op_type("If");
    n->add_input("y");
    n->add_output("w");
    onnx::AttributeProto* then = n->add_attribute();
    then->set_name("then_branch");
    then->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* sub = then->mutable_g();
    sub->set_name("then");
    onnx::TensorProto* init = sub->add_initializer();
    init->set_name("secret");
    External(init, "/etc/shadow");
  }
  for (const onnx::ModelProto* m : {&a, &b}) {
    const std::string bytes = m->SerializeAsString();
    const std::string cut = ErrorOf([&] { ImportOnnxCut(bytes, "m.onnx"); });
    EXPECT_TRUE(Has(cut, "refers to external data")) << cut;
    EXPECT_TRUE(Has(ErrorOf([&] { ImportOnnx(bytes, "m.onnx"); }), "refers to external data"));
    // The prefix model an engine would be given is refused too.
    EXPECT_TRUE(Has(ErrorOf([&] {
                      OnnxModelWithOutputs(bytes, "m.onnx", {{"y", {1, 2, 3, 3}}});
                    }),
                    "refers to external data"));
  }
  EXPECT_TRUE(Has(ErrorOf([&] { ImportOnnxCut(a.SerializeAsString(), "m.onnx"); }),
                  "node 'leak' (op type 'Constant') attribute 'value'"));
}

// 6: import accepted a 100,000-character name and wrote a graph JSON its own reader refused.
TEST(HostileRound2, Item6ImportRefusesWhatTheGraphFormatRefuses) {
  onnx::ModelProto m = ReluModel();
  m.mutable_graph()->mutable_node(0)->set_name(std::string(100000, 'n'));
  const std::string e = ErrorOf([&] { ImportOnnx(m.SerializeAsString(), "m.onnx"); });
  EXPECT_TRUE(Has(e, "longer than 256 characters")) << e;
  // A name with a newline is a valid name: imported, and read back from the graph JSON.
  m.mutable_graph()->mutable_node(0)->set_name("r\n| forged | row |");
  Graph g = ImportOnnx(m.SerializeAsString(), "m.onnx");
  EXPECT_EQ(ParseGraph(WriteGraph(g)).nodes[0].name, "r\n| forged | row |");
}

// 8: opset 99 and ir_version -5 were imported unchecked.
TEST(HostileRound2, Item8OpsetAndIrVersionAreChecked) {
  onnx::ModelProto m = ReluModel();
  m.mutable_opset_import(0)->set_version(99);
  EXPECT_TRUE(Has(ErrorOf([&] { ImportOnnx(m.SerializeAsString(), "m.onnx"); }),
                  "opset 99 of the default domain is outside"));
  m = ReluModel();
  m.set_ir_version(-5);
  EXPECT_TRUE(Has(ErrorOf([&] { ImportOnnx(m.SerializeAsString(), "m.onnx"); }),
                  "ir_version -5 is outside"));
  m = ReluModel();
  m.add_opset_import()->set_version(17);
  EXPECT_TRUE(Has(ErrorOf([&] { ImportOnnx(m.SerializeAsString(), "m.onnx"); }), "twice"));
  EXPECT_NO_THROW(ImportOnnx(ReluModel().SerializeAsString(), "m.onnx"));
}

// 2: the first bytes must be able to start the message: zeros, text or JSON are refused at once.
TEST(HostileRound2, Item2FirstBytesMustStartTheMessage) {
  const auto* model = onnx::ModelProto::descriptor();
  const auto* tensor = onnx::TensorProto::descriptor();
  EXPECT_TRUE(Has(ErrorOf([&] { CheckMessageStart(std::string(16, '\0'), model, "z", "a model"); }),
                  "the first byte (0x00)"));
  EXPECT_TRUE(Has(ErrorOf([&] { CheckMessageStart("{\"format\": 1}", model, "j", "a model"); }),
                  "does not have"));
  EXPECT_EQ(ErrorOf([&] { CheckMessageStart(ReluModel().SerializeAsString(), model, "m", "m"); }),
            "");
  EXPECT_EQ(ErrorOf([&] {
              CheckMessageStart(EncodeTensorProto("x", Tensor({2}, {1.f, 2.f})), tensor, "t", "t");
            }),
            "");
  // A ModelProto's first field (ir_version, field 1 varint) is TensorProto's dims: allowed;
  // a FLOAT32 tag (wire type 5) on field 1 fits neither.
  EXPECT_TRUE(Has(ErrorOf([&] { CheckMessageStart("\x0d\x00\x00\x00\x00", tensor, "t", "t"); }),
                  "wire type 5"));
}

// The ONNX fuzzer's find: a Clip without a max (or with max FLT_MAX) was imported, by plain
// import and by --cut, as max = FLT_MAX, written as its shortest form 3.4028235e+38, which is a
// little above FLT_MAX as a double, and fusefuzz's own graph reader refused it ("outside the
// float32 range"). Every bound a model can hold must read back as the float it is.
// Found by fuzz/onnx_cut_fuzzer.cc: libonnx 1.12's shape inference, which `import --cut` runs
// on the whole model before fusefuzz checks its nodes, crashed on two hostile models: an int64
// tensor whose raw_data is not a whole number of elements (data propagation memcpy'd it into a
// null pointer: SIGSEGV) and a Conv with a stride of 0 (SIGFPE). The cut now runs inference
// without data propagation, or not at all, for such models, and refuses or cuts them like any
// other.
TEST(HostileRound2, CutSurvivesModelsThatCrashLibonnxShapeInference) {
  for (const char* name : {"cut-int64-raw-data-3-bytes.onnx", "cut-conv-stride-0.onnx",
                           "cut-conv-rank2-input-no-kernel-shape.onnx"}) {
    std::ifstream f(std::string(FUSEFUZZ_SOURCE_DIR) + "/tests/data/hostile/" + name,
                    std::ios::binary);
    ASSERT_TRUE(f.good()) << name;
    const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    try {
      ImportOnnxCut(bytes, "m.onnx");
    } catch (const InputError&) {
      // refused with a message: fine; a crash is the bug
    }
  }
}

TEST(HostileRound2, CutClipBoundsReadBackAsTheirFloat) {
  constexpr float kMax = std::numeric_limits<float>::max();
  constexpr float kInf = std::numeric_limits<float>::infinity();
  struct Case {
    bool has_min, has_max;
    float lo, hi;
  };
  for (const Case& k :
       {Case{false, false, 0, 0}, Case{true, false, 0, 0}, Case{true, true, -kMax, kMax},
        Case{true, true, -kInf, kInf}, Case{false, true, 0, -kMax}}) {
    onnx::ModelProto m = ReluModel();
    onnx::NodeProto* n = m.mutable_graph()->mutable_node(0);
    n->set_op_type("Clip");
    n->set_name("clip");
    for (const auto& [name, present, v] :
         {std::tuple{"lo", k.has_min, k.lo}, std::tuple{"hi", k.has_max, k.hi}}) {
      if (!present) {
        if (std::string(name) == "lo" && k.has_max) n->add_input("");
        continue;
      }
      n->add_input(name);
      onnx::TensorProto* t = m.mutable_graph()->add_initializer();
      t->set_name(name);
      t->set_data_type(onnx::TensorProto::FLOAT);
      t->add_float_data(v);
    }
    const std::string bytes = m.SerializeAsString();
    const float want_lo = k.has_min ? k.lo : -kMax;
    const float want_hi = k.has_max ? k.hi : kMax;
    for (const Graph& g : {ImportOnnx(bytes, "m.onnx"), ImportOnnxCut(bytes, "m.onnx").graph}) {
      const std::string text = WriteGraph(g);
      Graph back;
      ASSERT_EQ(ErrorOf([&] { back = ParseGraph(text, "cut.json"); }), "") << text;
      ASSERT_EQ(back.nodes.size(), 1u);
      EXPECT_EQ(AttrFloat(Op::Clip, back.nodes[0].attrs, "min", "t"), want_lo) << text;
      EXPECT_EQ(AttrFloat(Op::Clip, back.nodes[0].attrs, "max", "t"), want_hi) << text;
      EXPECT_EQ(WriteGraph(back), text);
    }
  }
  // What does not round to a finite float32 is still refused; the last double below the tie
  // with infinity rounds to FLT_MAX and is read as FLT_MAX.
  const auto clip = [](const std::string& max) {
    return R"({"format": "fusefuzz-graph", "version": 1,
      "inputs": [{"name": "x", "shape": [1, 2]}],
      "nodes": [{"name": "c", "op": "Clip", "inputs": ["x"], "outputs": ["y"],
                 "attrs": {"min": 0, "max": )" +
           max + "}}], \"outputs\": [\"y\"]}";
  };
  EXPECT_TRUE(Has(ErrorOf([&] { ParseGraph(clip("3.402823669209385e38"), "c.json"); }),
                  "c.json: /nodes/0/attrs/max: outside the float32 range"));
  EXPECT_TRUE(
      Has(ErrorOf([&] { ParseGraph(clip("3.4028235677973366e38"), "c.json"); }), "outside"));
  EXPECT_TRUE(Has(ErrorOf([&] { ParseGraph(clip("6.8e38"), "c.json"); }), "outside"));
  EXPECT_EQ(
      AttrFloat(Op::Clip, ParseGraph(clip("3.4028235677973362e38")).nodes[0].attrs, "max", "t"),
      kMax);
}

}  // namespace
}  // namespace fusefuzz
