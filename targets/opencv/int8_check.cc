#include "targets/opencv/int8_check.h"

#include <cmath>

#include "targets/opencv/opencv_net.h"

namespace fusefuzz::opencv {
namespace {

// The int8 fusions that change rounding (measured: targets/opencv/README.md): a BatchNormInt8 or
// ScaleInt8 folded into its producer requantizes once, at the folded layer's output scale,
// where the unfused net rounds the producer's output to int8 first. An activation merged into
// its producer (ReLUInt8 a clamp, the others the same lookup table on the same integers) and the
// Concat in place must keep every integer: a difference there is a finding.
bool RoundsDifferently(const std::string& rule) {
  return rule.ends_with("+BatchNormInt8") || rule.ends_with("+ScaleInt8");
}

// The first element where the fused quantized net's integers differ from the unfused one's, as
// a message; "" when every output agrees exactly.
std::string FirstDifference(const NativeRequest& r, const std::vector<cv::Mat>& off,
                            const std::vector<cv::Mat>& on) {
  for (size_t i = 0; i < r.graph.outputs.size() && i < off.size() && i < on.size(); ++i) {
    cv::Mat a, b;
    off[i].convertTo(a, CV_64F);
    on[i].convertTo(b, CV_64F);
    const std::string& o = r.graph.outputs[i];
    if (a.total() != b.total()) {
      return "output '" + o + "' has " + std::to_string(b.total()) + " elements with fusion on, " +
             std::to_string(a.total()) + " with fusion off";
    }
    a = a.reshape(1, 1);
    b = b.reshape(1, 1);
    for (int k = 0; k < static_cast<int>(a.total()); ++k) {
      const double x = a.at<double>(k), y = b.at<double>(k);
      if (x == y || (std::isnan(x) && std::isnan(y))) continue;
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.9g with fusion on, %.9g with fusion off", y, x);
      return "output '" + o + "' element " + std::to_string(k) + " (NCHW) is " + buf;
    }
  }
  return "";
}

}  // namespace

NativeAnswer RunInt8(const NativeRequest& r, const std::string& onnx) {
  Forwarded plain, off;
  try {
    plain = Forward(r, onnx, false, false, false);
    off = Forward(r, onnx, true, false, r.bench_runs > 0 && !r.optimize);
  } catch (const cv::Exception& e) {
    throw Unsupported(std::string("OpenCV refuses to run or quantize the net: ") + e.what());
  }
  NativeAnswer a;
  a.timings = off.timings;
  if (r.optimize) {
    Forwarded on;
    try {
      on = Forward(r, onnx, true, true, r.bench_runs > 0);
    } catch (const cv::Exception& e) {
      throw std::runtime_error(std::string("OpenCV int8 fails with fusion on only: ") + e.what());
    }
    const std::string diff = FirstDifference(r, off.outs, on.outs);
    if (!diff.empty()) {
      for (const Rewrite& w : on.rewrites) {
        if (RoundsDifferently(w.rule)) {
          throw Unsupported("OpenCV int8 with fusion on moves " + diff + ", but " + w.rule +
                            " at '" + w.nodes.back() +
                            "' rounds once where the unfused net rounds twice; the pack has no "
                            "bound for that difference, so the case is not judged");
        }
      }
      throw FailureAfterRewrites("OpenCV int8 (Net::quantize) with fusion on moves " + diff,
                                 on.rewrites);
    }
    a.rewrites = std::move(on.rewrites);
    a.timings = on.timings;
  }
  for (size_t i = 0; i < r.graph.outputs.size() && i < plain.outs.size(); ++i) {
    const std::string& o = r.graph.outputs[i];
    a.outputs[o] = OutputTensor(plain.outs[i], r.shapes.at(o));
  }
  return a;
}

}  // namespace fusefuzz::opencv
