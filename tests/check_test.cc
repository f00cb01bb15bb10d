// `fusefuzz check` (docs/check.md) on a seed graph: PASS without faults, a minimized finding with
// an injected fault, NOT CHECKED (exit 2) when the target declines the model, and NOT JUDGED
// (exit 3) when no element of an output is informative.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli_util.h"

namespace fusefuzz {
namespace {

namespace fs = std::filesystem;
using testing::CmdResult;
using testing::Fusefuzz;
using testing::TempDir;

const std::string kBlock =
    std::string(FUSEFUZZ_SOURCE_DIR) + "/corpus/seeds/resnet-basicblock-relu-after-add.json";

TEST(CheckCommand, SeedPassesAndAnInjectedFaultIsShrunkToItsCulprit) {
  fs::path dir = TempDir("check");
  CmdResult pass = Fusefuzz("check " + kBlock + " --samples 2 -o " + dir.string());
  EXPECT_EQ(pass.status, 0) << pass.out;
  EXPECT_NE(pass.out.find("check: PASS"), std::string::npos) << pass.out;
  CmdResult fail = Fusefuzz("check " + kBlock + " --inject declaration-order -o " + dir.string());
  EXPECT_EQ(fail.status, 1) << fail.out;
  EXPECT_NE(fail.out.find("blamed on 'declaration-order'"), std::string::npos) << fail.out;
  EXPECT_NE(fail.out.find("finding: "), std::string::npos) << fail.out;
  EXPECT_FALSE(fs::is_empty(dir / "findings"));
  fs::remove_all(dir);
}

// Issue 28 item 6: minutes of silence looked like a hang. Each phase and sample goes to stderr as
// it happens; stdout keeps the result.
TEST(CheckCommand, TalksOnStderrPerPhaseAndSample) {
  fs::path dir = TempDir("check-progress");
  const fs::path err = dir / "stderr.txt";
  CmdResult r = Fusefuzz("check " + kBlock + " --samples 2 --inject declaration-order -o " +
                         (dir / "out").string() + " 2>" + err.string() + " >" +
                         (dir / "stdout.txt").string() + "; true");
  std::string progress, result;
  std::getline(std::ifstream(err), progress, '\0');
  std::getline(std::ifstream(dir / "stdout.txt"), result, '\0');
  for (const char* line :
       {"sample 1/2: reference", "sample 1/2: unoptimized run on embedded", "sample 2/2: optimized",
        "blaming the rewrite", "minimizing the finding", "writing findings/"}) {
    EXPECT_NE(progress.find(line), std::string::npos) << line << "\n" << progress;
  }
  EXPECT_EQ(result.find("check: ["), std::string::npos) << result;
  EXPECT_NE(result.find("blamed on 'declaration-order'"), std::string::npos) << result;
  // -q: no progress.
  CmdResult quiet = Fusefuzz("check " + kBlock + " -q -o " + (dir / "q").string() + " 2>" +
                             err.string() + " >/dev/null; true");
  std::string none;
  std::getline(std::ifstream(err), none, '\0');
  EXPECT_EQ(none.find("check: ["), std::string::npos) << none;
  fs::remove_all(dir);
}

// Issue 28 item 6, as Polygraphy users expect: two targets side by side (each against the
// reference, then against each other), error statistics per output with the tolerance that
// would have passed, inputs and outputs saved, the result as JSON.
TEST(CheckCommand, TwoTargetsStatisticsSavedTensorsAndJson) {
  fs::path dir = TempDir("check-two");
  const std::string example =
      std::string("'exec:") + FUSEFUZZ_EXAMPLE_TARGET + " --inject declaration-order'";
  CmdResult r = Fusefuzz("check " + kBlock + " --samples 2 -q --target embedded --target " +
                         example + " -o " + (dir / "out").string() + " --json " +
                         (dir / "r.json").string() + " --save-inputs " + (dir / "t").string() +
                         " --save-outputs " + (dir / "t").string());
  EXPECT_EQ(r.status, 1) << r.out;  // the second target has the bug
  EXPECT_NE(r.out.find("== target 2: exec:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("error over "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("would pass with --k "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("target 1 vs 2, seed 1"), std::string::npos) << r.out;
  nlohmann::json j = nlohmann::json::parse(std::ifstream(dir / "r.json"));
  EXPECT_EQ(j["format"], "fusefuzz-check");
  ASSERT_EQ(j["targets"].size(), 2u);
  EXPECT_EQ(j["targets"][0]["result"], "pass");
  EXPECT_EQ(j["targets"][1]["result"], "finding");
  EXPECT_EQ(j["targets"][1]["finding"]["blamed_rule"], "declaration-order");
  const nlohmann::json& err = j["targets"][1]["samples"][0]["outputs"][0]["error"];
  EXPECT_GT(err["max"].get<double>(), err["limit"].get<double>()) << err.dump();
  EXPECT_LE(err["median"].get<double>(), err["p99"].get<double>());
  EXPECT_LE(err["p99"].get<double>(), err["max"].get<double>());
  ASSERT_EQ(j["between_targets"].size(), 1u);
  EXPECT_GT(j["between_targets"][0]["outputs"][0]["max_abs"].get<double>(), 0);
  for (const char* f :
       {"inputs-seed1.json", "inputs-seed2.json", "reference-seed1.json", "target1-seed1.json",
        "target2-seed2.json", "target2-unoptimized-seed1.json"}) {
    EXPECT_TRUE(fs::exists(dir / "t" / f)) << f;
  }
  // The saved inputs are the sample: checking with them gives the same verdict.
  CmdResult again =
      Fusefuzz("check " + kBlock + " -q --inputs " + (dir / "t/inputs-seed1.json").string() +
               " --target " + example + " --no-minimize -o " + (dir / "out2").string());
  EXPECT_EQ(again.status, 1) << again.out;
  fs::remove_all(dir);
}

// Issue 28 item 6: a per-output tolerance, in the oracle's units; a name that is not an output
// or a VALUE that is not a positive number is exit 2 before anything runs.
TEST(CheckCommand, PerOutputToleranceJudgesThatOutput) {
  fs::path dir = TempDir("check-tolerance");
  CmdResult typo = Fusefuzz("check " + kBlock + " -q --tolerance Y=3 -o " + dir.string());
  EXPECT_EQ(typo.status, 2) << typo.out;
  EXPECT_NE(typo.out.find("'Y' is not an output of the model; did you mean 'y'?"),
            std::string::npos)
      << typo.out;
  CmdResult bad = Fusefuzz("check " + kBlock + " -q --tolerance y=-1 -o " + dir.string());
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_NE(bad.out.find("VALUE must be a positive number"), std::string::npos) << bad.out;
  // A tolerance far below the default fails a healthy model on that output, and says so.
  CmdResult strict =
      Fusefuzz("check " + kBlock + " -q --no-minimize --tolerance y=1e-30 -o " + dir.string());
  EXPECT_EQ(strict.status, 1) << strict.out;
  EXPECT_NE(strict.out.find("output 'y' 1e-30"), std::string::npos) << strict.out;
  fs::remove_all(dir);
}

TEST(CheckCommand, ADeclinedModelIsNotCheckedAndExits2) {
  fs::path dir = TempDir("check-declined");
  CmdResult r = Fusefuzz("check " + kBlock + " --target 'exec:" + FUSEFUZZ_EXAMPLE_TARGET +
                         " --decline-over 1' -o " + dir.string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("check: NOT CHECKED: UNSUPPORTED ("), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("check: PASS"), std::string::npos) << r.out;
  fs::remove_all(dir);
}

// A model none of whose output elements is informative (x + (-x) on an int8 grid of scale 1e-13:
// its float error spans millions of steps) is NOT JUDGED, never PASS: exit 3, "result":
// "not_judged", the count and the cause named, and no advice to use the oracle already in use
// (issue 43).
TEST(CheckCommand, NothingInformativeIsNotJudgedAndExits3) {
  fs::path dir = TempDir("check-not-judged");
  const std::string model =
      std::string(FUSEFUZZ_SOURCE_DIR) + "/tests/data/check/spread-not-judged.json";
  CmdResult r = Fusefuzz("check " + model + " --samples 2 -q -o " + dir.string() + " --json " +
                         (dir / "r.json").string());
  EXPECT_EQ(r.status, 3) << r.out;
  EXPECT_EQ(r.out.find("check: PASS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("check: NOT JUDGED: 2 of 2 samples could not be judged ('y' 0 of 36 "
                       "elements informative)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("sample seed 1: NOT JUDGED: unoptimized NOT JUDGED"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  y: NOT JUDGED, 0 of 18 elements informative (the integer grid's "
                       "carried spread)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("what to do: judge it layer by layer with --layers"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("--oracle sigma"), std::string::npos) << r.out;  // already in use
  std::ifstream in(dir / "r.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["targets"][0]["result"], "not_judged");
  EXPECT_EQ(j["targets"][0]["not_judged"]["samples"], 2);
  const nlohmann::json& out = j["targets"][0]["samples"][0]["outputs"][0];
  EXPECT_EQ(out["verdict"], "NOT JUDGED");
  EXPECT_EQ(out["not_judged"]["informative"], 0);
  EXPECT_EQ(j["targets"][0]["samples"][0]["verdict"], "NOT JUDGED");
  // The bound oracle's note points to sigma, which is not in use there.
  CmdResult bound = Fusefuzz("check " + model + " -q --oracle bound -o " + dir.string());
  EXPECT_EQ(bound.status, 3) << bound.out;
  EXPECT_NE(bound.out.find("--oracle sigma"), std::string::npos) << bound.out;
  fs::remove_all(dir);
}

// `--layers` (issue 43): every quantization boundary judged teacher-forced, the per-layer table
// in the text, the JSON and OUT/layers-seed<S>.{md,svg}; a layer moved by a fault is the first
// departing layer, and a finding (exit 1).
TEST(CheckCommand, LayersJudgesEveryBoundaryTeacherForced) {
  fs::path dir = TempDir("check-layers");
  const std::string quant = std::string(FUSEFUZZ_SOURCE_DIR) + "/tests/data/quant/";
  CmdResult r = Fusefuzz("check " + quant + "qdq-conv-relu.json --layers -q -o " + dir.string() +
                         " --json " + (dir / "r.json").string());
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("layers (teacher-forced"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fusion unchanged by the exposed boundaries: the same 2 rewrites"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("| 2 | rq | QuantizeLinear | 512 | 100.0% | 0 | 0 |"), std::string::npos)
      << r.out;
  EXPECT_TRUE(fs::exists(dir / "layers-seed1.md"));
  EXPECT_TRUE(fs::exists(dir / "layers-seed1.svg"));
  std::ifstream in(dir / "r.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  const nlohmann::json& layers = j["targets"][0]["samples"][0]["layers"];
  EXPECT_EQ(layers["same_fusion"], true);
  EXPECT_EQ(layers["layers"].size(), 3u);
  EXPECT_EQ(layers["first_departing"], nullptr);

  const std::string check = std::string(FUSEFUZZ_SOURCE_DIR) + "/tests/data/check/";
  CmdResult bad = Fusefuzz("check " + check + "layers-bias-scale.json --inputs " + check +
                           "layers-bias-scale.inputs.json --layers --no-minimize -q " +
                           "--inject bias-scale-unchecked -o " + dir.string());
  EXPECT_EQ(bad.status, 1) << bad.out;
  EXPECT_NE(bad.out.find("first departing layer: 'v4' (QuantizeLinear 'n4'): 1 of 14 elements "
                         "fail, worst 27 steps"),
            std::string::npos)
      << bad.out;
  EXPECT_NE(bad.out.find("channels 13; 1 positions"), std::string::npos) << bad.out;
  fs::remove_all(dir);
}

// Each sample names the rewrites the target reported, by rule (issue 45, item 12).
TEST(CheckCommand, SamplesNameTheirRewrites) {
  fs::path dir = TempDir("check-rewrites");
  CmdResult r = Fusefuzz("check " + kBlock + " -q --no-minimize -o " + dir.string());
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("sample seed 1: PASS: unoptimized PASS, optimized PASS, "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" rewrites: "), std::string::npos) << r.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fusefuzz

namespace fusefuzz {
namespace {

// Issue 43, item 4: on an int8 model the minimizer starts from the block around the first
// departing layer, its inputs the engine's integers there, not from the whole model. A 33-node
// chain whose middle layer (l6) alone departs under the fault (make_layers_chain.py): the start is
// that layer and the next (6 nodes), also without --layers (the table is made for the cut).
TEST(CheckCommand, MinimizerStartsFromTheDepartingLayersBlock) {
  fs::path dir = TempDir("check-layer-cut");
  const std::string check = std::string(FUSEFUZZ_SOURCE_DIR) + "/tests/data/check/";
  const std::string model =
      check + "layers-chain.json --inputs " + check + "layers-chain.inputs.json -q -o ";
  CmdResult pass = Fusefuzz("check " + model + dir.string() + " --layers");
  EXPECT_EQ(pass.status, 0) << pass.out;
  EXPECT_NE(pass.out.find("0 departing"), std::string::npos) << pass.out;

  CmdResult bad = Fusefuzz("check " + model + dir.string() +
                           " --inject bias-scale-unchecked --json " + (dir / "r.json").string());
  EXPECT_EQ(bad.status, 1) << bad.out;
  EXPECT_NE(bad.out.find("minimized from the block around the first departing layer 'l6_q' (6 "
                         "of 33 nodes"),
            std::string::npos)
      << bad.out;
  std::ifstream in(dir / "r.json");
  const nlohmann::json finding = nlohmann::json::parse(in)["targets"][0]["finding"];
  EXPECT_EQ(finding["blamed_rule"], "bias-scale-unchecked");
  EXPECT_EQ(finding["nodes_before"], 33);
  EXPECT_EQ(finding["minimized_from"]["layer"], "l6_q");
  EXPECT_EQ(finding["minimized_from"]["nodes"], 6);
  EXPECT_EQ(finding["nodes_after"], 3);  // DQ -> Conv -> Q: the fused layer alone
  bool recorded = false;                 // the finding's repro.json says where the reducer started
  for (const auto& f : fs::recursive_directory_iterator(dir / "findings")) {
    if (f.path().filename() != "repro.json") continue;
    std::ifstream r(f.path());
    const nlohmann::json m = nlohmann::json::parse(r)["provenance"]["minimization"];
    EXPECT_EQ(m["started_from"]["departing_layer"], "l6_q");
    EXPECT_EQ(m["started_from"]["model_nodes"], 33);
    recorded = true;
  }
  EXPECT_TRUE(recorded);
  fs::remove_all(dir);
}

// Issue 43, item 2: top-1 agreement beside the logit error, over the samples, saying what it
// rests on: one row is an observation, never read as an agreement rate.
TEST(CheckCommand, ClassifierAgreementSaysWhatItRestsOn) {
  fs::path dir = TempDir("check-classifier");
  const std::string model = std::string(FUSEFUZZ_SOURCE_DIR) + "/tests/data/check/classifier.json";
  CmdResult one = Fusefuzz("check " + model + " -q --no-minimize -o " + dir.string() + " --json " +
                           (dir / "one.json").string());
  EXPECT_EQ(one.status, 0) << one.out;
  EXPECT_NE(one.out.find("classifier agreement over 1 sample: top-1 1/1, top-5 1/1, largest "
                         "logit error 0 (one row: an observation, not an agreement rate"),
            std::string::npos)
      << one.out;
  CmdResult three = Fusefuzz("check " + model + " -q --no-minimize --samples 3 -o " + dir.string() +
                             " --json " + (dir / "three.json").string());
  EXPECT_EQ(three.status, 0) << three.out;
  EXPECT_NE(three.out.find("classifier agreement over 3 samples: top-1 3/3, top-5 3/3, largest "
                           "logit error 0\n"),
            std::string::npos)
      << three.out;
  std::ifstream in1(dir / "one.json"), in3(dir / "three.json");
  const nlohmann::json a1 = nlohmann::json::parse(in1)["targets"][0]["classifier_agreement"];
  const nlohmann::json a3 = nlohmann::json::parse(in3)["targets"][0]["classifier_agreement"];
  EXPECT_EQ(a1["rows"], 1);
  EXPECT_EQ(a1["a_rate"], false);
  EXPECT_EQ(a3["samples"], 3);
  EXPECT_EQ(a3["top1_agree"], 3);
  EXPECT_EQ(a3["a_rate"], true);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fusefuzz
