// Graph format version 1 -> 2: PRelu slopes keep their meaning (ir/graph_migrate.h).
#include "ir/graph_migrate.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ir/error.h"
#include "ir/json_io.h"

namespace fusefuzz {
namespace {

// x [1, C=3, 2, W=3] -> PRelu(slope) -> Flatten -> PRelu(slope2 on [1, 18]); and a FusedConv
// with a PRelu epilogue step on its [1, 3, 2, 3] output.
std::string Graph1(int version, const std::string& slope, const std::string& step_slope) {
  return R"({"format": "fusefuzz-graph", "version": )" + std::to_string(version) + R"(,
    "inputs": [{"name": "x", "shape": [1, 3, 2, 3]}],
    "nodes": [
      {"name": "p", "op": "PRelu", "inputs": ["x"], "outputs": ["y"],
       "params": {"slope": )" +
         slope + R"(}},
      {"name": "f", "op": "Flatten", "inputs": ["y"], "outputs": ["z"]},
      {"name": "q", "op": "PRelu", "inputs": ["z"], "outputs": ["w"],
       "params": {"slope": {"shape": [1], "data": [0.5]}}},
      {"name": "c", "op": "FusedConv", "inputs": ["x"], "outputs": ["v"],
       "params": {"W": {"shape": [3, 3, 1, 1], "data": [1, 0, 0, 0, 1, 0, 0, 0, 1]}},
       "epilogue": [{"kind": "activation", "op": "PRelu", "params": {"slope": )" +
         step_slope + R"(}}]}],
    "outputs": ["w", "v"]})";
}

const char kC[] = R"({"shape": [3], "data": [0.5, -1, 2]})";
const char kC11[] = R"({"shape": [3, 1, 1], "data": [0.5, -1, 2]})";

TEST(GraphMigrate, VersionOneChannelSlopesBecomeCOneOne) {
  Graph v1 = ParseGraph(Graph1(1, kC, kC));
  EXPECT_EQ(v1.nodes[0].params.at("slope").shape, (Shape{3, 1, 1}));
  EXPECT_EQ(v1.nodes[0].params.at("slope").data, (std::vector<float>{0.5f, -1, 2}));
  EXPECT_EQ(v1.nodes[2].params.at("slope").shape, (Shape{1}));  // [1] stays
  EXPECT_EQ(v1.nodes[3].epilogue[0].params.at("slope").shape, (Shape{3, 1, 1}));
  // Exactly the version-2 graph that says per channel explicitly.
  Graph v2 = ParseGraph(Graph1(2, kC11, kC11));
  EXPECT_EQ(WriteGraph(v1), WriteGraph(v2));
  EXPECT_EQ(nlohmann::json::parse(WriteGraph(v1))["version"], kGraphFormatVersion);
}

TEST(GraphMigrate, VersionTwoChannelLengthSlopeRunsAlongW) {
  // C == W == 3: in version 2 a [3] slope broadcasts along W and stays [3].
  Graph g = ParseGraph(Graph1(2, kC, kC11));
  EXPECT_EQ(g.nodes[0].params.at("slope").shape, (Shape{3}));
  // An epilogue step holds [M, 1, 1] or [1] only.
  EXPECT_THROW(ParseGraph(Graph1(2, kC11, kC)), InputError);
}

TEST(GraphMigrate, RankTwoAndGemmSlopesKeepTheirShape) {
  // On [N, C] the channel is the last dim: [C] means the same in both versions.
  const std::string g = R"({"format": "fusefuzz-graph", "version": 1,
    "inputs": [{"name": "x", "shape": [2, 3]}],
    "nodes": [
      {"name": "p", "op": "PRelu", "inputs": ["x"], "outputs": ["y"],
       "params": {"slope": {"shape": [3], "data": [0.5, -1, 2]}}},
      {"name": "g", "op": "Gemm", "inputs": ["y"], "outputs": ["z"],
       "params": {"B": {"shape": [3, 2], "data": [1, 0, 0, 1, 1, 1]}},
       "epilogue": [{"kind": "activation", "op": "PRelu",
                     "params": {"slope": {"shape": [2], "data": [0.5, 3]}}}]}],
    "outputs": ["z"]})";
  Graph r = ParseGraph(g);
  EXPECT_EQ(r.nodes[0].params.at("slope").shape, (Shape{3}));
  EXPECT_EQ(r.nodes[1].epilogue[0].params.at("slope").shape, (Shape{2}));
}

TEST(GraphMigrate, InvalidVersionOneGraphStillFailsInTheVerifier) {
  // A [2] slope on 3 channels was an error in version 1; migration leaves it, the verifier
  // reports it (here: [2] does not broadcast along W = 3 either).
  const std::string bad = Graph1(1, R"({"shape": [2], "data": [1, 2]})", kC);
  EXPECT_THROW(ParseGraph(bad), InputError);
}

}  // namespace
}  // namespace fusefuzz
