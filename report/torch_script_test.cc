// reproduce.py (report/torch_script.h): written for PyTorch findings and no others, names of a
// hostile graph kept as literals, and every PyTorch reproducer of the corpus reproduced by its
// script with /usr/bin/python3 and torch alone (exit 1 on this torch 1.13.1).
#include "report/torch_script.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "report/finding_writer.h"

namespace fusefuzz {
namespace {

namespace fs = std::filesystem;

const std::string kSource = FUSEFUZZ_SOURCE_DIR;
const std::string kRelu6 =
    kSource + "/corpus/upstream/pytorch/optimize_for_inference_relu6_blocked_layout.repro.json";

fs::path TempDir(const std::string& name) {
  fs::path p = fs::temp_directory_path() /
               ("fusefuzz-torch-script-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

bool HaveTorch() { return fs::exists("/usr/lib/python3/dist-packages/torch/__init__.py"); }

// Runs `script` with /usr/bin/python3 from another folder; (exit status, stdout + stderr).
std::pair<int, std::string> RunPython(const fs::path& script) {
  const fs::path out = script.parent_path() / "out.txt";
  const std::string cmd =
      "cd / && /usr/bin/python3 " + script.string() + " > " + out.string() + " 2>&1";
  const int st = std::system(cmd.c_str());
  std::string text;
  std::getline(std::ifstream(out), text, '\0');
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, text};
}

void RenameValue(Repro& r, const std::string& from, const std::string& to) {
  for (auto& in : r.graph.inputs) {
    if (in.name == from) in.name = to;
  }
  for (auto& n : r.graph.nodes) {
    for (auto& i : n.inputs) {
      if (i == from) i = to;
    }
    if (n.output == from) n.output = to;
  }
  for (auto& o : r.graph.outputs) {
    if (o == from) o = to;
  }
  auto it = r.inputs.find(from);
  if (it != r.inputs.end()) {
    Tensor t = it->second;
    r.inputs.erase(it);
    r.inputs[to] = t;
  }
  if (r.worst.output == from) r.worst.output = to;
}

TEST(TorchScript, ModeOfTargetSpecs) {
  EXPECT_EQ(PytorchMode("pytorch:torchscript"), "torchscript");
  EXPECT_EQ(PytorchMode("exec:/usr/bin/python3 targets/pytorch/fusefuzz_torch.py --mode ptq_fx"),
            "ptq_fx");
  EXPECT_EQ(PytorchMode("exec:python3 /x/fusefuzz_torch.py --mode=fx"), "fx");
  EXPECT_EQ(PytorchMode("onnxruntime:all"), "");
  EXPECT_EQ(PytorchMode("exec:node fusefuzz-ort.js --mode all"), "");
  EXPECT_EQ(PytorchMode("embedded"), "");
}

TEST(TorchScript, OnlyForPytorchTargetsAndScriptedModes) {
  Repro r = ReadReproFile(kRelu6);
  r.target = "pytorch:torchscript";
  EXPECT_NE(TorchReproScript(r), "");
  for (const char* other :
       {"embedded", "onnxruntime:all", "exec:./my-engine", "pytorch:no_such_mode"}) {
    r.target = other;
    EXPECT_EQ(TorchReproScript(r), "") << other;
  }
  // Too large to write into a script: refused.
  r.target = "pytorch:torchscript";
  EXPECT_EQ(TorchReproScript(r, 2), "");
  // A finding kind the script cannot show (the unoptimized run already disagrees).
  r.kind = FindingKind::kKernel;
  EXPECT_EQ(TorchReproScript(r), "");
}

TEST(TorchScript, HostileNamesStayStringLiterals) {
  Repro r = ReadReproFile(kRelu6);
  r.target = "pytorch:torchscript";
  const std::string input = "x0'\"\n\\); import os #";
  const std::string output = "v3\"\"\"\r\\x\n__import__('os').system('false')";
  RenameValue(r, "x0", input);
  RenameValue(r, "v3", output);
  r.graph.nodes[0].name = "n1'''\nimport sys; sys.exit(0)";
  const std::string script = TorchReproScript(r);
  ASSERT_NE(script, "");
  EXPECT_EQ(script.find("import os"), std::string::npos);
  EXPECT_EQ(script.find("__import__"), std::string::npos);
  EXPECT_EQ(script.find("sys.exit(0)"), std::string::npos);
  if (!HaveTorch()) GTEST_SKIP() << "no torch for /usr/bin/python3 (ci/setup installs it)";
  const fs::path dir = TempDir("hostile");
  std::ofstream(dir / "reproduce.py") << script;
  const auto [status, out] = RunPython(dir / "reproduce.py");
  // The names did not break the script: it runs and still reproduces the bug.
  EXPECT_EQ(status, 1) << out;
  EXPECT_NE(out.find("the bug is there"), std::string::npos) << out;
  EXPECT_NE(out.find("__import__('os')"), std::string::npos) << out;  // printed, as data
  fs::remove_all(dir);
}

// The same through the quantization split: graph names reach the script only as literals.
TEST(TorchScript, HostileNamesInAQuantizedGraph) {
  Repro r =
      ReadReproFile(kSource + "/corpus/upstream/pytorch/qnnpack_clamp_channels_last.repro.json");
  RenameValue(r, "xq", "xq'\n__import__('os')");
  RenameValue(r, "y", "y\\\"\"\"");
  for (auto& n : r.graph.nodes) n.name += "')\nraise SystemExit(0)#";
  const std::string script = TorchReproScript(r);
  ASSERT_NE(script, "");
  EXPECT_EQ(script.find("__import__"), std::string::npos);
  EXPECT_EQ(script.find("raise SystemExit(0)#"), std::string::npos);
  if (!HaveTorch()) GTEST_SKIP() << "no torch for /usr/bin/python3 (ci/setup installs it)";
  const fs::path dir = TempDir("hostile-quant");
  std::ofstream(dir / "reproduce.py") << script;
  const auto [status, out] = RunPython(dir / "reproduce.py");
  EXPECT_EQ(status, 1) << out;
  EXPECT_NE(out.find("the bug is there"), std::string::npos) << out;
  fs::remove_all(dir);
}

// The verdict is the script's own: on inputs where the clamp has nothing to clamp, the
// optimized run agrees with the reference and the script exits 0.
TEST(TorchScript, ExitsZeroWhereTheBugDoesNotShow) {
  if (!HaveTorch()) GTEST_SKIP() << "no torch for /usr/bin/python3 (ci/setup installs it)";
  Repro r = ReadReproFile(kRelu6);
  r.inputs.at("x0").data = {0.5f, 1.5f};
  const fs::path dir = TempDir("passing");
  std::ofstream(dir / "reproduce.py") << TorchReproScript(r);
  const auto [status, out] = RunPython(dir / "reproduce.py");
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("the bug is fixed (or not this one)"), std::string::npos) << out;
  fs::remove_all(dir);
}

// The qnnpack clamp bug's graph through the same flows on onednn, whose clamp is correct: the
// flows run end to end (prepare, observers on the graph's parameters, convert; QAT's train
// steps) and agree with the grid oracle, exit 0.
TEST(TorchScript, QuantFlowsOnOnednnPassTheQnnpackClampCase) {
  if (!HaveTorch()) GTEST_SKIP() << "no torch for /usr/bin/python3 (ci/setup installs it)";
  Repro r =
      ReadReproFile(kSource + "/corpus/upstream/pytorch/qnnpack_clamp_channels_last.repro.json");
  for (const char* mode : {"pytorch:ptq_fx", "pytorch:qat_fx"}) {
    r.target = mode;
    const fs::path dir = TempDir("onednn");
    std::ofstream(dir / "reproduce.py") << TorchReproScript(r);
    const auto [status, out] = RunPython(dir / "reproduce.py");
    EXPECT_EQ(status, 0) << mode << "\n" << out;
    fs::remove_all(dir);
  }
}

// The founding report's bug (fuse_modules lists by declaration order fuse the conv with the
// ReLU after the residual Add) cut to the data flow (ptq_eager_dataflow) leaves the conv
// unfused, whose output the minimized graph does not quantize: the adapter answers unsupported,
// and the script says it cannot tell (exit 2), for the same reason.
TEST(TorchScript, DataflowListsOnTheMinimizedCaseCannotTell) {
  if (!HaveTorch()) GTEST_SKIP() << "no torch for /usr/bin/python3 (ci/setup installs it)";
  Repro r = ReadReproFile(kSource +
                          "/corpus/pytorch/ptq_eager_conv_add_relu_declaration_order.repro.json");
  r.target = "exec:/usr/bin/python3 targets/pytorch/fusefuzz_torch.py --mode ptq_eager_dataflow";
  const fs::path dir = TempDir("dataflow");
  std::ofstream(dir / "reproduce.py") << TorchReproScript(r);
  const auto [status, out] = RunPython(dir / "reproduce.py");
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("which the graph keeps in float"), std::string::npos) << out;
  fs::remove_all(dir);
}

// Every PyTorch reproducer of the corpus: the finding folder written by the writer holds
// reproduce.py, report.md names it, and the script reproduces the bug on its own.
class CorpusScript : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusScript, ReproducesTheBugWithTorchAlone) {
  if (!HaveTorch()) GTEST_SKIP() << "no torch for /usr/bin/python3 (ci/setup installs it)";
  const std::string file = kSource + "/" + GetParam();
  const fs::path dir = TempDir(fs::path(file).stem().stem().string());
  WriteFindingFolder((dir / "f").string(), ReadReproFile(file), "", nullptr);
  ASSERT_TRUE(fs::exists(dir / "f/reproduce.py"));
  std::string report;
  std::getline(std::ifstream(dir / "f/report.md"), report, '\0');
  EXPECT_NE(report.find("reproduce.py"), std::string::npos);
  const auto [status, out] = RunPython(dir / "f/reproduce.py");
  EXPECT_EQ(status, 1) << out;
  EXPECT_NE(out.find("the bug is there"), std::string::npos) << out;
  fs::remove_all(dir);
}

// The PyTorch reproducers of the corpus, relative to the source folder, sorted; crashes aside
// (no script is written for them: the process dies; their hand-written standalone script has a
// ctest of its own, targets/pytorch/CMakeLists.txt).
std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  for (const char* d : {"corpus/upstream/pytorch", "corpus/pytorch"}) {
    for (const auto& e : fs::directory_iterator(kSource + "/" + d)) {
      const std::string name = e.path().filename().string();
      if (name.size() > 11 && name.substr(name.size() - 11) == ".repro.json") {
        std::ifstream in(e.path());
        const std::string text((std::istreambuf_iterator<char>(in)), {});
        if (text.find("\"kind\": \"crash\"") != std::string::npos) continue;
        files.push_back(std::string(d) + "/" + name);
      }
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

INSTANTIATE_TEST_SUITE_P(Pytorch, CorpusScript, ::testing::ValuesIn(CorpusFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = fs::path(info.param).stem().stem().string();
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace fusefuzz
