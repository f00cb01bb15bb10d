// Spellings in the graph (issue 51): read and written, old files unchanged, unknown names and
// spellings a node cannot take rejected naming node, spelling and op.
#include "ir/spelling.h"

#include <gtest/gtest.h>

#include "ir/error.h"
#include "ir/json_io.h"

namespace fusefuzz {
namespace {

// x [1,2,4,4] -> Conv c (pads 1) -> Relu r; `r_spelling` on r, `c_spelling` on c.
std::string Text(const std::string& c_spelling, const std::string& r_spelling,
                 const std::string& outputs = R"(["z"])") {
  auto sp = [](const std::string& s) {
    return s.empty() ? std::string() : R"(,"spelling":")" + s + "\"";
  };
  std::string w;
  for (int i = 0; i < 36; ++i) w += (i ? ",0.5" : "0.5");
  return R"({"format":"fusefuzz-graph","version":2,"inputs":[{"name":"x","shape":[1,2,4,4]}],
    "nodes":[{"name":"c","op":"Conv","inputs":["x"],"outputs":["y"],"attrs":{"pads":[1,1,1,1]},
              "params":{"W":{"shape":[2,2,3,3],"data":[)" +
         w + "]}}" + sp(c_spelling) + R"(},
             {"name":"r","op":"Relu","inputs":["y"],"outputs":["z"])" +
         sp(r_spelling) + R"(}],"outputs":)" + outputs + "}";
}

std::string ErrorOf(const std::string& text) {
  try {
    ParseGraph(text, "g.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Spelling, RoundTripsAndOldFilesReadUnchanged) {
  const Graph g = ParseGraph(Text("torch.conv-padding-same", "torch.F.relu"));
  EXPECT_EQ(g.nodes[0].spelling, "torch.conv-padding-same");
  EXPECT_EQ(g.nodes[1].spelling, "torch.F.relu");
  EXPECT_EQ(ParseGraph(WriteGraph(g)), g);
  const Graph plain = ParseGraph(Text("", ""));
  EXPECT_EQ(plain.nodes[1].spelling, "");
  EXPECT_EQ(WriteGraph(plain).find("spelling"), std::string::npos);
}

TEST(Spelling, UnknownNameIsRejectedWhereTheFileSaysIt) {
  EXPECT_NE(ErrorOf(Text("", "torch.no-such")).find("/nodes/1/spelling: unknown spelling"),
            std::string::npos)
      << ErrorOf(Text("", "torch.no-such"));
}

TEST(Spelling, ASpellingTheNodeCannotTakeNamesNodeSpellingAndOp) {
  const std::string e = ErrorOf(Text("torch.F.relu", ""));
  EXPECT_NE(e.find("node 'c' (Conv)"), std::string::npos) << e;
  EXPECT_NE(e.find("spelling 'torch.F.relu' cannot write op Conv"), std::string::npos) << e;
  // padding='valid' needs zero pads; this conv has pads 1.
  EXPECT_NE(ErrorOf(Text("torch.conv-padding-valid", "")).find("zero pads"), std::string::npos);
}

TEST(Spelling, InPlaceOnlyOnAValueNothingElseReads) {
  EXPECT_EQ(ErrorOf(Text("", "torch.relu_")), "<no error>");
  // y is also a graph output: relu_ would change it.
  const std::string e = ErrorOf(Text("", "torch.relu_", R"(["z","y"])"));
  EXPECT_NE(e.find("in-place"), std::string::npos) << e;
}

TEST(Spelling, InapplicableSpellingsAreDropped) {
  Graph g = ParseGraph(Text("torch.conv-padding-same", "torch.F.relu"));
  g.nodes[0].attrs["pads"] = std::vector<int64_t>{0, 0, 0, 0};
  DropInapplicableSpellings(g);
  EXPECT_EQ(g.nodes[0].spelling, "");
  EXPECT_EQ(g.nodes[1].spelling, "torch.F.relu");
}

// x -> QuantizeLinear -> MaxPool m (on the integers) -> DequantizeLinear; `m_spelling` on m. The
// ONNX export types m's output as uint8, so a Dropout (floats only) or a Cast to FLOAT after it
// would be an invalid model or feed the DequantizeLinear a float.
std::string QuantText(const std::string& m_spelling) {
  return R"({"format":"fusefuzz-graph","version":2,"inputs":[{"name":"x","shape":[1,2,4,4]}],
    "nodes":[{"name":"q","op":"QuantizeLinear","inputs":["x"],"outputs":["a"],
      "quant":{"y":{"type":"uint8","scale":[0.5],"zero_point":[10]}}},
     {"name":"m","op":"MaxPool","inputs":["a"],"outputs":["b"],"attrs":{"kernel_shape":[2,2]},
      "spelling":")" +
         m_spelling + R"("},
     {"name":"d","op":"DequantizeLinear","inputs":["b"],"outputs":["z"],
      "quant":{"x":{"type":"uint8","scale":[0.5],"zero_point":[10]}}}],"outputs":["z"]})";
}

TEST(Spelling, FloatOnlySpellingsStayOffValuesTheExportTypesAsIntegers) {
  EXPECT_NE(ErrorOf(QuantText("onnx.dropout-after")).find("types the output as integers"),
            std::string::npos);
  EXPECT_NE(ErrorOf(QuantText("onnx.cast-same-type")).find("types the output as integers"),
            std::string::npos);
  EXPECT_EQ(ErrorOf(QuantText("onnx.identity-after")), "<no error>");  // type-generic
  EXPECT_EQ(ErrorOf(Text("", "onnx.dropout-after")), "<no error>");    // a float Relu
}

TEST(Spelling, RegistryNamesAreUniqueAndFamiliesPrefixThem) {
  std::set<std::string_view> names;
  for (const SpellingInfo& i : AllSpellings()) {
    EXPECT_TRUE(names.insert(i.name).second) << i.name;
    EXPECT_EQ(i.name.substr(0, i.name.find('.')), SpellingFamilyName(i.family)) << i.name;
    EXPECT_EQ(SpellingFromName(i.name), i.spelling);
  }
}

}  // namespace
}  // namespace fusefuzz
