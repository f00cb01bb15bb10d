// ONNX's backend node tests (Debian's libonnx-testdata: <onnx>/backend/test/data/node/test_*/):
// every test whose nodes are all in fusefuzz's vocabulary is imported, run by the reference
// interpreter and the fast kernels, and both are compared with the expected output_*.pb by the
// bound oracle. Each case has a committed class in onnx/backend_node_expectations.txt (pass, or
// why it cannot be expressed / why it disagrees); the test fails when a case changes class, so
// that nothing can start or stop passing silently. Skipped when the test data is not installed.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "ir/error.h"
#include "kernels/fast/executor.h"
#include "kernels/reference/reference.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "onnx/proto_io.h"
#include "onnx/tensor_proto.h"
#include "oracles/oracle.h"

namespace fusefuzz {
namespace {

namespace fs = std::filesystem;

// ONNX op types that map to fusefuzz ops (onnx/import.cc); Constant feeds params.
const std::set<std::string> kVocabulary = {"Conv",
                                           "BatchNormalization",
                                           "Relu",
                                           "Clip",
                                           "LeakyRelu",
                                           "PRelu",
                                           "Elu",
                                           "Sigmoid",
                                           "HardSigmoid",
                                           "Tanh",
                                           "HardSwish",
                                           "Add",
                                           "Sub",
                                           "Mul",
                                           "Div",
                                           "Pad",
                                           "MaxPool",
                                           "AveragePool",
                                           "GlobalAveragePool",
                                           "Concat",
                                           "Identity",
                                           "InstanceNormalization",
                                           "LayerNormalization",
                                           "Softmax",
                                           "Transpose",
                                           "Min",
                                           "Max",
                                           "ReduceSum",
                                           "ReduceMax",
                                           "Constant"};

fs::path NodeTestDir() {
  if (const char* env = std::getenv("FUSEFUZZ_ONNX_NODE_TESTS")) return env;
  return "/usr/include/onnx/backend/test/data/node";
}

// The op types of a model, or empty when it cannot be parsed.
std::set<std::string> OpTypes(const fs::path& model) {
  onnx::ModelProto m;
  std::string bytes = ReadModelFile(model.string());
  if (!m.ParseFromString(bytes)) return {};
  std::set<std::string> ops;
  for (const onnx::NodeProto& n : m.graph().node()) ops.insert(n.op_type());
  return ops;
}

// Drops the path prefix of an InputError (the test folder differs between machines).
std::string Reason(const std::string& what, const fs::path& dir) {
  std::string r = what;
  const std::string prefix = dir.string() + "/";
  for (size_t at; (at = r.find(prefix)) != std::string::npos;) r.erase(at, prefix.size());
  return r;
}

// ONNX op type -> its inputs (by index) that fusefuzz holds as params or attributes.
const std::map<std::string, std::set<int>> kParamInputs = {{"Conv", {1, 2}},
                                                           {"BatchNormalization", {1, 2, 3, 4}},
                                                           {"InstanceNormalization", {1, 2}},
                                                           {"LayerNormalization", {1, 2}},
                                                           {"PRelu", {1}},
                                                           {"Clip", {1, 2}},
                                                           {"Pad", {1, 2, 3}}};

// The model with the graph inputs that feed only param positions (weights, slopes, Clip bounds,
// pads: fusefuzz params and attributes, which the backend tests feed as inputs) turned into
// initializers holding the test data set's values. `inputs` are the kept inputs' files.
std::string ParamsAsInitializers(const fs::path& dir, std::vector<std::string>* input_files) {
  onnx::ModelProto m;
  ParseProto(ReadModelFile((dir / "model.onnx").string()), &m, "model.onnx", "ONNX ModelProto");
  std::map<std::string, bool> param_only;  // graph input -> used only at param positions
  for (const onnx::NodeProto& n : m.graph().node()) {
    auto it = kParamInputs.find(n.op_type());
    for (int i = 0; i < n.input_size(); ++i) {
      bool param = it != kParamInputs.end() && it->second.count(i);
      auto [entry, fresh] = param_only.emplace(n.input(i), param);
      if (!fresh) entry->second = entry->second && param;
    }
  }
  onnx::GraphProto* g = m.mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  for (int i = 0; i < g->input_size(); ++i) {
    const std::string file =
        (dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb")).string();
    if (param_only[g->input(i).name()]) {
      onnx::TensorProto* t = g->add_initializer();
      ParseProto(
          ReadProtoFile(file, int64_t{1} << 30, onnx::TensorProto::descriptor(), "a TensorProto"),
          t, file, "TensorProto");
      t->set_name(g->input(i).name());
    } else {
      *kept.Add() = g->input(i);
      input_files->push_back(file);
    }
  }
  g->mutable_input()->Swap(&kept);
  return m.SerializeAsString();
}

// "pass" (the expected outputs and the fast kernels both within the bound of the reference),
// "expected <verdict>, fast <verdict>" otherwise, or "unsupported: <why>".
std::string RunCase(const fs::path& dir) {
  Graph g;
  std::vector<std::string> input_files;
  TensorMap inputs, expected;
  try {
    g = ImportOnnx(ParamsAsInitializers(dir, &input_files), "model.onnx");
    if (input_files.size() != g.inputs.size()) return "unsupported: inputs do not match";
    for (size_t i = 0; i < input_files.size(); ++i) {
      NamedTensor t = ReadTensorProtoFile(input_files[i]);
      inputs[g.inputs[i].name] = std::move(t.tensor);
    }
    expected = ReadBackendTestData((dir / "test_data_set_0").string(), g.outputs, "output");
  } catch (const InputError& e) {
    return "unsupported: " + Reason(e.what(), dir);
  }
  // The expected outputs are one more implementation (ONNX's numpy reference, in float32),
  // judged like the fast kernels.
  Verdict onnx_ref, fast;
  try {
    RefTensorMap ref = RunReference(g, inputs);
    onnx_ref = Compare(g, ref, expected).verdict;
    fast = Compare(g, ref, RunFast(g, inputs)).verdict;
  } catch (const InputError& e) {
    return "unsupported: " + Reason(e.what(), dir);
  }
  if (onnx_ref == Verdict::kPass && fast == Verdict::kPass) return "pass";
  return "expected " + std::string(VerdictName(onnx_ref)) + ", fast " +
         std::string(VerdictName(fast));
}

// test name -> class, from onnx/backend_node_expectations.txt ("name<TAB>class").
std::map<std::string, std::string> Expectations() {
  std::ifstream f(std::string(FUSEFUZZ_SOURCE_DIR) + "/onnx/backend_node_expectations.txt");
  std::map<std::string, std::string> out;
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    out[line.substr(0, tab)] = line.substr(tab + 1);
  }
  return out;
}

TEST(BackendNodeTests, EveryCaseInTheVocabularyKeepsItsClass) {
  const fs::path root = NodeTestDir();
  if (!fs::is_directory(root)) GTEST_SKIP() << root << " is absent (Debian: libonnx-testdata)";
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root)) {
    if (!fs::exists(e.path() / "model.onnx")) continue;
    std::set<std::string> ops = OpTypes(e.path() / "model.onnx");
    if (ops.empty()) continue;
    bool in_vocabulary = std::all_of(ops.begin(), ops.end(),
                                     [](const std::string& op) { return kVocabulary.count(op); });
    if (in_vocabulary) dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());
  const std::map<std::string, std::string> expected = Expectations();
  std::map<std::string, std::string> actual;
  int passed = 0;
  std::map<std::string, int> unsupported;
  for (const fs::path& d : dirs) {
    const std::string name = d.filename().string();
    std::string cls = RunCase(d);
    actual[name] = cls;
    if (cls == "pass") ++passed;
    auto it = expected.find(name);
    if (it == expected.end()) {
      ADD_FAILURE() << name << ": not in onnx/backend_node_expectations.txt; add\n"
                    << name << "\t" << cls;
    } else {
      EXPECT_EQ(cls, it->second) << name << " changed class";
    }
  }
  for (const auto& [name, cls] : expected) {
    EXPECT_TRUE(actual.count(name)) << name << " is listed but no longer found in " << root;
  }
  // Regenerating the list: FUSEFUZZ_WRITE_EXPECTATIONS=path runs the same and writes it.
  if (const char* out = std::getenv("FUSEFUZZ_WRITE_EXPECTATIONS")) {
    std::ofstream f(out);
    f << "# ONNX backend node tests in fusefuzz's vocabulary and their class (onnx/"
         "backend_node_test.cc, docs/onnx.md).\n";
    for (const auto& [name, cls] : actual) f << name << "\t" << cls << "\n";
  }
  std::printf("backend node tests: %zu in the vocabulary, %d pass\n", dirs.size(), passed);
}

}  // namespace
}  // namespace fusefuzz
