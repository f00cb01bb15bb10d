// The OpenCV DNN pack's translation and run (targets/opencv/README.md): a request's graph is
// exported to ONNX in memory by fusefuzz's own exporter (onnx/export.h, the model ONNX Runtime
// gets) and imported by cv::dnn::readNetFromONNX; Net::enableFusion(false) is the unoptimized
// run, enableFusion(true) the optimized one. What fused into what is read back from the net:
// a layer skipped by fuseLayers reports no time in getPerfProfile, and Net::dump() draws it in
// one box ("cluster") with the layer it was fused into.
#pragma once

#include <opencv2/dnn.hpp>
#include <string>
#include <vector>

#include "targets/native_server.h"

namespace fusefuzz::opencv {

// OpenCV's fusions, named by the OpenCV layer types involved: "<host>+<merged>" for a layer
// Net::Impl::fuseLayers (net_impl_fuse.cpp, 4.6) merged into the one before it (by tryFuse:
// BatchNorm, Scale folded into the weights; or setActivation: an activation run inside the
// host; Net::dump() shows the merge, not which call made it), and "Concat (in place)" for a
// Concat whose inputs write straight into its output. int8: the types Net::quantize made
// ("ConvolutionInt8+ReLUInt8").
std::vector<std::string> DeclaredFusions(bool int8);

// The graph's ONNX model (ExportOnnx) with the opset it was written at.
std::string ModelBytes(const Graph& g);

// readNetFromONNX on the bytes; an importer refusal (cv::Exception) is Unsupported with
// OpenCV's message.
cv::dnn::Net ImportNet(const std::string& onnx);

// opencv:int8: `net` (fusion off while OpenCV calibrates) quantized by Net::quantize on the
// request's inputs (the calibration data fusefuzz sends), with float32 inputs and outputs.
cv::dnn::Net QuantizedNet(cv::dnn::Net& net, const NativeRequest& r);

// OpenCV's output as a tensor: the graph's shape when OpenCV's has the same extents apart from
// ones, else its own shape (judged as a mismatch).
Tensor OutputTensor(const cv::Mat& m, const Shape& expected);

// One forward of the graph's outputs on a fresh net (quantized first when `int8`), fusion on or
// off; timed when `bench`. cv::Exception passes through.
struct Forwarded {
  std::vector<cv::Mat> outs;  // in the order of the graph's outputs
  std::vector<Rewrite> rewrites;
  std::optional<BenchTimings> timings;
};
Forwarded Forward(const NativeRequest& r, const std::string& onnx, bool int8, bool fuse,
                  bool bench);

// Runs the request: fusion on when r.optimize, observed fusions as rewrites. `refuse`: refuse
// what faithful.h lists (off only for the --no-refusals test switch, which shows OpenCV's
// values for them).
NativeAnswer Run(const NativeRequest& r, bool int8, bool refuse = true);

// The rewrites the last forward of `net` applied: its skipped layers, each with the layer it
// was fused into (from Net::dump()), named as DeclaredFusions() names them. Node names are the
// graph's ("onnx_node!" dropped, a decomposition's "<node>/<step>" cut to "<node>").
std::vector<Rewrite> ObservedFusions(cv::dnn::Net& net);

// The graph node an OpenCV layer came from ("onnx_node!conv1" -> "conv1"; "n/relu" -> "n").
std::string NodeOfLayer(const std::string& layer);

}  // namespace fusefuzz::opencv
