// The capability `bench` of the external-target protocol (docs/target-protocol.md#timing-requests):
// fusefuzz-example-target and the embedded target time the runs themselves; timings that a
// target gets wrong (missing, not positive, not numbers, wrong run count) are bad responses.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "generators/seeded_inputs.h"
#include "ir/json_io.h"
#include "targets/target.h"

namespace fusefuzz {
namespace {

::testing::AssertionResult Has(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' not found in '" << text << "'";
}

// x[1,2,3,3] -> Conv(1x1) -> BatchNorm -> Relu -> y
Graph ConvBnRelu() {
  return ParseGraph(R"({"format":"fusefuzz-graph","version":1,
    "inputs":[{"name":"x","shape":[1,2,3,3]}],
    "nodes":[
     {"name":"conv","op":"Conv","inputs":["x"],"outputs":["c"],
      "params":{"W":{"shape":[2,2,1,1],"data":[0.5,-1,0.25,2]},
                "B":{"shape":[2],"data":[0.5,-0.25]}}},
     {"name":"bn","op":"BatchNorm","inputs":["c"],"outputs":["b"],"attrs":{"epsilon":0.001},
      "params":{"scale":{"shape":[2],"data":[1.5,0.5]},"bias":{"shape":[2],"data":[0.25,-1]},
                "mean":{"shape":[2],"data":[0.125,-0.5]},"var":{"shape":[2],"data":[0.75,2]}}},
     {"name":"act","op":"Relu","inputs":["b"],"outputs":["y"]}],
    "outputs":["y"]})");
}

std::unique_ptr<Target> Exec(const std::string& cmd) {
  TargetSettings s;
  s.timeout_seconds = 10;
  return MakeExecTarget(cmd, s);
}

std::string Example(const std::string& flags = "") {
  return std::string("'") + FUSEFUZZ_EXAMPLE_TARGET + "' " + flags;
}

RunRequest Timing(bool optimize, int warmup, int runs) {
  RunRequest req;
  req.optimize = optimize;
  req.bench_warmup = warmup;
  req.bench_runs = runs;
  return req;
}

// A shell target declaring `bench` that answers with an error quoting the request's "bench"
// object (quotes removed; keys in nlohmann's sorted order), so the test sees what was sent.
TEST(BenchProtocol, RequestCarriesWarmupAndRuns) {
  const std::string hello =
      R"({"protocol":"fusefuzz-target","version":1,"name":"fake","ops":["Conv","BatchNorm","Relu"],"capabilities":["bench"]})";
  auto t = Exec("echo '" + hello +
                "'; read -r l; b=$(printf '%s' \"$l\" | grep -o '\"bench\":{[^}]*}'); "
                "printf '{\"id\":1,\"error\":\"%s\"}\\n' \"$(printf '%s' \"$b\" | tr -d '\"')\"; "
                "read -r l");
  EXPECT_TRUE(t->caps().bench);
  const Graph g = ConvBnRelu();
  TargetResult r = t->Run(g, InputsFromSeed(g, 1), Timing(true, 3, 7));
  EXPECT_EQ(r.message, "target error: bench:{runs:7,warmup:3}");
}

TEST(BenchProtocol, ExampleAndEmbeddedTimeTheirRuns) {
  const Graph g = ConvBnRelu();
  const TensorMap in = InputsFromSeed(g, 3);
  auto example = Exec(Example());
  ASSERT_TRUE(example->caps().bench);
  auto embedded = MakeEmbeddedTarget();
  ASSERT_TRUE(embedded->caps().bench);
  for (Target* t : {example.get(), embedded.get()}) {
    for (bool optimize : {false, true}) {
      TargetResult r = t->Run(g, in, Timing(optimize, 1, 5));
      ASSERT_EQ(r.status, RunStatus::kOk) << r.message;
      ASSERT_TRUE(r.timings.has_value()) << t->spec();
      EXPECT_EQ(r.timings->runs, 5);
      EXPECT_GT(r.timings->min_ns, 0);
      EXPECT_LE(r.timings->min_ns, r.timings->median_ns);
      // The outputs of a timed run are the case's outputs, as without timing.
      RunRequest plain;
      plain.optimize = optimize;
      TargetResult want = embedded->Run(g, in, plain);
      EXPECT_FALSE(want.timings.has_value());
      ASSERT_EQ(r.outputs.size(), 1u);
      EXPECT_TRUE(r.outputs.at("y").BitwiseEquals(want.outputs.at("y")));
    }
  }
}

TEST(BenchProtocol, TargetWithoutTheCapabilityIsNotAsked) {
  auto t = Exec(Example("--no-capabilities"));
  EXPECT_FALSE(t->caps().bench);
  const Graph g = ConvBnRelu();
  TargetResult r = t->Run(g, InputsFromSeed(g, 1), Timing(false, 0, 3));
  EXPECT_EQ(r.status, RunStatus::kUnsupported);
  EXPECT_TRUE(Has(r.message, "lacks the capability bench"));
}

TEST(BenchProtocol, LyingTimingsAreBadResponses) {
  const Graph g = ConvBnRelu();
  struct Case {
    const char* kind;
    const char* message;
  } cases[] = {
      {"negative", "/timings/median_ns: must be a finite number of nanoseconds > 0, got -1000"},
      {"missing", "/timings/median_ns: must be a finite number of nanoseconds > 0, got nothing"},
      {"runs", "/timings/runs: must be 4, the number of runs asked for, got 5"},
      {"nan", "/timings/min_ns: must be a finite number of nanoseconds > 0, got \"nan\""},
  };
  for (const Case& c : cases) {
    auto t = Exec(Example(std::string("--bad-timings ") + c.kind + " --bad-timings-on Relu"));
    TargetResult r = t->Run(g, InputsFromSeed(g, 1), Timing(true, 0, 4));
    EXPECT_EQ(r.status, RunStatus::kError) << c.kind;
    EXPECT_TRUE(r.bad_response) << c.kind;
    EXPECT_TRUE(Has(r.message, std::string("target wrote a bad response: ") + c.message));
  }
}

// Shell targets for what the example cannot say: no timings at all, min above the median, a
// bare NaN (not JSON: garbage).
TEST(BenchProtocol, MalformedTimings) {
  const std::string hello =
      R"({"protocol":"fusefuzz-target","version":1,"name":"fake","ops":["Conv","BatchNorm","Relu"],"capabilities":["bench"]})";
  const std::string y =
      R"("y":{"shape":[1,2,3,3],"data":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18]})";
  struct Case {
    std::string timings, message;
  } cases[] = {
      {"", "/timings: missing (the request asked for timings)"},
      {R"(,"timings":[1])", "/timings: must be an object"},
      {R"(,"timings":{"runs":2,"median_ns":10,"min_ns":20})", "min_ns 20 is above median_ns 10"},
      {R"(,"timings":{"runs":2,"median_ns":0,"min_ns":0})", "/timings/median_ns"},
      {R"(,"timings":{"runs":2,"median_ns":NaN,"min_ns":1})", "garbage: not a JSON object"},
  };
  const Graph g = ConvBnRelu();
  for (const Case& c : cases) {
    auto t = Exec("echo '" + hello + "'; read -r l; echo '{\"id\":1,\"outputs\":{" + y + "}" +
                  c.timings + "}'; read -r l");
    TargetResult r = t->Run(g, InputsFromSeed(g, 1), Timing(false, 0, 2));
    EXPECT_EQ(r.status, RunStatus::kError) << c.timings;
    EXPECT_TRUE(r.bad_response) << c.timings;
    EXPECT_TRUE(Has(r.message, c.message)) << c.timings;
  }
}

// Issue 29, item 8: a timing of 1e308 ns and an unknown key in "timings" were tabulated.
TEST(HostileRound2, Item8BenchRefusesImplausibleTimingsAndUnknownKeys) {
  const std::string hello =
      R"({"protocol":"fusefuzz-target","version":1,"name":"fake","ops":["Conv","BatchNorm","Relu"],"capabilities":["bench"]})";
  const std::string y =
      R"("y":{"shape":[1,2,3,3],"data":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18]})";
  struct Case {
    std::string timings, message;
  } cases[] = {
      {R"(,"timings":{"runs":2,"median_ns":1e308,"min_ns":1e308})",
       "/timings/median_ns: 1e+308 ns is longer than an hour per run"},
      {R"(,"timings":{"runs":2,"median_ns":10,"min_ns":5,"max_ns":20})",
       "/timings: unknown key \"max_ns\""},
  };
  const Graph g = ConvBnRelu();
  for (const Case& c : cases) {
    auto t = Exec("echo '" + hello + "'; read -r l; echo '{\"id\":1,\"outputs\":{" + y + "}" +
                  c.timings + "}'; read -r l");
    TargetResult r = t->Run(g, InputsFromSeed(g, 1), Timing(false, 0, 2));
    EXPECT_EQ(r.status, RunStatus::kError) << c.timings;
    EXPECT_TRUE(r.bad_response) << c.timings;
    EXPECT_TRUE(Has(r.message, c.message)) << c.timings << ": " << r.message;
  }
}

}  // namespace
}  // namespace fusefuzz
