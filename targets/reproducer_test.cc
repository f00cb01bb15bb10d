// Request "repro" (docs/target-protocol.md, "Reproducers"): the answer's checks, and the exec
// client asking only targets that declared the capability.
#include "targets/reproducer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "ir/json_io.h"

namespace fusefuzz {
namespace {

using json = nlohmann::json;

json Answer(json files) { return {{"id", 1}, {"repro", {{"files", files}, {"build", "make"}}}}; }
json File(const std::string& path, const std::string& text = "int main() {}") {
  return {{"path", path}, {"text", text}};
}

TEST(ReproducerAnswer, KeepsPlainFilesAndTheBuildLine) {
  const Reproducer r = ParseReproducerAnswer(Answer({File("reproduce_x.cc"), File("data.bin")}));
  ASSERT_EQ(r.files.size(), 2u) << r.message;
  EXPECT_EQ(r.files[0].path, "reproduce_x.cc");
  EXPECT_EQ(r.files[0].text, "int main() {}");
  EXPECT_EQ(r.build, "make");
}

TEST(ReproducerAnswer, RefusesPathsOutsideTheFolderOursAndDuplicates) {
  for (const char* bad : {"../x.cc", "a/b.cc", ".hidden", "", "repro.json", "report.md",
                          "model.onnx", "test_data_set_0", "x y.cc", "/etc/passwd"}) {
    const Reproducer r = ParseReproducerAnswer(Answer({File("ok.cc"), File(bad)}));
    EXPECT_TRUE(r.files.empty()) << bad;
    EXPECT_NE(r.message.find("not a plain file name"), std::string::npos) << r.message;
  }
  EXPECT_TRUE(ParseReproducerAnswer(Answer({File("a.cc"), File("a.cc")})).files.empty());
  // The scripts fusefuzz no longer writes itself: the PyTorch and ONNX Runtime packs' own.
  EXPECT_TRUE(ValidReproducerFileName("reproduce.py"));
  EXPECT_TRUE(ValidReproducerFileName("reproduce.js"));
  EXPECT_FALSE(ValidReproducerFileName(std::string(65, 'a')));
  EXPECT_TRUE(ValidReproducerFileName(std::string(64, 'a')));
}

TEST(ReproducerAnswer, RefusesTooManyOrTooLargeFiles) {
  json many = json::array();
  for (int i = 0; i < 9; ++i) many.push_back(File("f" + std::to_string(i)));
  EXPECT_NE(ParseReproducerAnswer(Answer(many)).message.find("more than 8 files"),
            std::string::npos);
  const std::string big(size_t{9} << 20, 'x');
  const Reproducer r = ParseReproducerAnswer(Answer({File("a", big), File("b", big)}));
  EXPECT_TRUE(r.files.empty());
  EXPECT_NE(r.message.find("16 MiB"), std::string::npos);
}

TEST(ReproducerAnswer, UnsupportedErrorAndMalformedGiveNoFiles) {
  EXPECT_NE(ParseReproducerAnswer({{"id", 1}, {"unsupported", "no"}}).message.find("no reproducer"),
            std::string::npos);
  EXPECT_TRUE(ParseReproducerAnswer({{"id", 1}, {"error", "boom"}}).files.empty());
  EXPECT_TRUE(ParseReproducerAnswer({{"id", 1}, {"outputs", json::object()}}).files.empty());
  EXPECT_TRUE(ParseReproducerAnswer(Answer(json::array())).files.empty());
  EXPECT_TRUE(ParseReproducerAnswer(Answer({{{"path", "a"}}})).files.empty());
}

// A shell target: hello with `caps`, then a fixed reproducer answer to every request.
std::string ScriptTarget(const std::string& caps) {
  char dir[] = "/tmp/fusefuzz-repro-test-XXXXXX";
  EXPECT_NE(::mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/target.sh";
  std::ofstream(path)
      << "echo '{\"protocol\":\"fusefuzz-target\",\"version\":1,\"name\":\"r\",\"ops\":[\"Relu\"],"
         "\"capabilities\":["
      << caps
      << "]}'\nwhile read -r line; do\n"
         "  id=$(printf '%s' \"$line\" | grep -o '\"id\":[0-9]*' | head -n 1 | cut -d: -f2)\n"
         "  echo "
         "\"{\\\"id\\\":$id,\\\"repro\\\":{\\\"files\\\":[{\\\"path\\\":\\\"reproduce_r.txt\\\","
         "\\\"text\\\":\\\"hi\\\"}],\\\"build\\\":\\\"cat reproduce_r.txt\\\"}}\"\n"
         "done\n";
  return "sh " + path;
}

Graph OneRelu() {
  return ParseGraph(R"({"format":"fusefuzz-graph","version":1,
    "inputs":[{"name":"x","shape":[1,1,1,2]}],
    "nodes":[{"name":"r","op":"Relu","inputs":["x"],"outputs":["y"]}],"outputs":["y"]})");
}

ReproducerCase Case() {
  ReproducerCase c;
  c.output = "y";
  c.index = 1;
  Tensor t({1, 1, 1, 2});
  t.data = {0, 1};
  c.expected["y"] = t;
  return c;
}

TEST(ReproducerRequest, CarriesTheWorstElementAndTheOracleName) {
  ReproducerCase c = Case();
  c.reference = 1;
  c.bound = 0.25;
  c.oracle = "ulp";
  json request = json::object();
  AddReproducerCase(c, &request);
  const json& r = request["repro"];
  EXPECT_EQ(r["output"], "y");
  EXPECT_EQ(r["index"], 1);
  EXPECT_EQ(r["bound"], 0.25);
  EXPECT_EQ(r["oracle"], "ulp");
  EXPECT_TRUE(r["expected"].contains("y"));
  // A finding that is not a wrong number: no element, no oracle.
  c.output.clear();
  AddReproducerCase(c, &request);
  EXPECT_FALSE(request["repro"].contains("index"));
  EXPECT_FALSE(request["repro"].contains("oracle"));
}

TEST(ReproducerRequest, AskedOnlyOfTargetsThatDeclareRepro) {
  Tensor x({1, 1, 1, 2});
  x.data = {-1, 1};
  const TensorMap in = {{"x", x}};
  std::unique_ptr<Target> with = MakeExecTarget(ScriptTarget("\"repro\""), {});
  ASSERT_TRUE(with->caps().repro);
  const Reproducer r = with->AskReproducer(OneRelu(), in, RunRequest{}, Case());
  ASSERT_EQ(r.files.size(), 1u) << r.message;
  EXPECT_EQ(r.files[0].path, "reproduce_r.txt");
  EXPECT_EQ(r.build, "cat reproduce_r.txt");
  std::unique_ptr<Target> without = MakeExecTarget(ScriptTarget(""), {});
  EXPECT_FALSE(without->caps().repro);
  const Reproducer none = without->AskReproducer(OneRelu(), in, RunRequest{}, Case());
  EXPECT_TRUE(none.files.empty());
  EXPECT_NE(none.message.find("lacks the capability repro"), std::string::npos);
  // The embedded target writes none.
  EXPECT_TRUE(
      MakeEmbeddedTarget()->AskReproducer(OneRelu(), in, RunRequest{}, Case()).files.empty());
}

}  // namespace
}  // namespace fusefuzz
