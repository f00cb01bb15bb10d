// A quantized graph as the float model a PyTorch user quantizes, plus where the graph quantizes
// it: targets/pytorch/quant_graph.py's split, for reproduce.py (report/torch_script.h). The
// adapter refused what its flows cannot express before the finding was filed, so only what the
// script needs is computed here.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>

#include "ir/graph.h"

namespace fusefuzz {

struct TorchQuantSplit {
  Graph float_graph;                              // Q/DQ removed, QLinear* expanded
  std::map<std::string, QuantParams> points;      // float value -> the graph's quantization
  std::map<std::string, QuantParams> int_inputs;  // graph input -> params (fed dequantized)
  // graph output -> (float value, params): answered as integers on the graph's grid
  std::map<std::string, std::pair<std::string, QuantParams>> int_outputs;
  std::map<std::string, QuantParams> dq_outputs;  // graph output that dequantizes a point
  std::map<std::string, QuantParams> weights;     // float conv / Gemm node -> its weight grid
  std::map<std::string, std::string> origin;      // float node -> graph node
  // float value -> the output of its only consumer when that commutes with a quantization
  // (ReLU, ReLU6, Clip, MaxPool, shape ops): the observer of a value the graph does not
  // quantize takes that point's parameters.
  std::map<std::string, std::string> commuting_successor;
};

// Throws InputError for what the adapter would have refused.
TorchQuantSplit SplitQuantGraph(const Graph& g);

}  // namespace fusefuzz
