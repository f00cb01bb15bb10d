#include "campaign/known_upstream.h"

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>

#include "harness/repro.h"
#include "ir/error.h"
#include "ir/json_io.h"

namespace fusefuzz {
namespace {

const std::string kSource = FUSEFUZZ_SOURCE_DIR;

// GitHub's anchor of a heading: lower case, punctuation but '-' and '_' dropped, ' ' -> '-'.
// Non-ASCII is dropped too: the headings hold symbols ('·', '→'), which GitHub drops, and no
// non-ASCII letters.
std::string Anchor(const std::string& heading) {
  std::string out;
  for (unsigned char c : heading) {
    if (c < 0x80 && (std::isalnum(c) || c == '-' || c == '_')) {
      out += static_cast<char>(std::tolower(c));
    } else if (c == ' ') {
      out += '-';
    }
  }
  return out;
}

std::set<std::string> UpstreamBugAnchors() {
  std::ifstream in(kSource + "/docs/upstream-bugs.md");
  std::set<std::string> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] != '#') continue;
    const size_t start = line.find_first_not_of("# ");
    if (start != std::string::npos) out.insert(Anchor(line.substr(start)));
  }
  return out;
}

std::vector<std::string> BaselineFiles() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(kSource + "/corpus/known"))
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  return out;
}

// Every baseline reads, is named <engine>@..., points at a section of docs/upstream-bugs.md,
// and each signature with a stored reproducer is what that reproducer signs as on its target:
// a signature that drifts (a change to Signature) fails here, not silently in campaigns.
TEST(KnownBaseline, ShippedFilesMatchTheirReproducersAndDocs) {
  const std::set<std::string> anchors = UpstreamBugAnchors();
  std::ifstream in(kSource + "/docs/upstream-bugs.md");
  const std::string docs((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(anchors.size(), 20u);
  const std::vector<std::string> files = BaselineFiles();
  ASSERT_GE(files.size(), 4u);
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    const KnownBaseline b = ReadKnownBaseline(f);
    EXPECT_EQ(std::filesystem::path(f).filename().string().rfind(b.engine + "@", 0), 0u);
    // The release as `fusefuzz list targets` shows it (the text the baseline is chosen by) is
    // the one docs/upstream-bugs.md names: a version string that drifts in one fails here.
    EXPECT_NE(docs.find(b.match), std::string::npos) << b.match;
    for (const KnownBaseline::Entry& e : b.entries) {
      SCOPED_TRACE(e.signature);
      const std::string doc = e.bug.doc;
      ASSERT_EQ(doc.rfind("docs/upstream-bugs.md#", 0), 0u);
      EXPECT_TRUE(anchors.count(doc.substr(doc.find('#') + 1))) << doc;
      EXPECT_EQ(e.target.rfind(b.engine + ":", 0), 0u);
      if (e.repro.empty()) continue;
      // Read as the embedded target's (the engine's program need not be built here), then
      // signed as the target's, which older reproducers name by the adapter's command line.
      nlohmann::json j = ReadJsonFile(kSource + "/" + e.repro);
      j["target"]["spec"] = "embedded";
      Repro r = ReadRepro(j, e.repro);
      r.target = e.target;
      // The same case once came without its rule blamed (its rerun without the rule was not
      // trusted): listed under its unblamed signature too.
      if (e.signature.rfind("fusion-unblamed-", 0) == 0) r.blame.rule.clear();
      EXPECT_EQ(Signature(r), e.signature) << e.repro;
    }
  }
}

TEST(KnownBaseline, ChosenByEngineAndRelease) {
  const std::string dir = kSource + "/corpus/known";
  const KnownUpstream ort = BaselineFor(dir, "onnxruntime:all", "onnxruntime-node 1.30.0");
  ASSERT_EQ(ort.files.size(), 1u);
  EXPECT_FALSE(ort.empty());
  EXPECT_NE(ort.bugs().begin()->second.link, "");
  // Another release, another engine's baseline, an exec: or the embedded target: none.
  EXPECT_TRUE(BaselineFor(dir, "onnxruntime@1.14.0:all", "onnxruntime-node 1.14.0").empty());
  EXPECT_TRUE(BaselineFor(dir, "pytorch:fx", "onnxruntime-node 1.30.0").empty());
  EXPECT_TRUE(BaselineFor(dir, "exec:./t", "onnxruntime-node 1.30.0").empty());
  EXPECT_TRUE(BaselineFor(dir, "embedded", "fusefuzz 0.1.0").empty());
  const KnownUpstream armnn =
      BaselineFor(dir, "armnn:fp32", "Arm NN 22.0.0 (Debian libarmnn22 20.08-12), CpuRef");
  EXPECT_NE(armnn.Find("fusion-FoldPadIntoConvolution2d-Pad.Conv-dde8cae3"), nullptr);
}

TEST(KnownBaseline, MalformedFileNamesWhere) {
  const std::string path = ::testing::TempDir() + "/known-bad.json";
  std::ofstream(path) << R"({"format": "fusefuzz-known-baseline", "engine": "armnn",
    "release": "1", "match": "x", "bugs": [{"title": "t", "link": "l", "doc": "d",
    "signatures": [{"signature": ".bad", "target": "armnn:fp32"}]}]})";
  try {
    ReadKnownBaseline(path);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/bugs/0/signatures/0/signature"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace fusefuzz
