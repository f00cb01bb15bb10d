// OpenCV DNN 4.6.0 (Debian libopencv-dnn-dev 4.6.0+dfsg-12), Net::Impl::fuseLayers: a Concat
// whose input is a network input is "optimized out" (its inputs made to write straight into its
// output buffer), but the network input's data is set by setInput into its own buffer, so the
// Concat's output is never written: with fusion on the output is memory nobody wrote (8e-11,
// 3e-41, 2e18: changes from run to run); with Net::enableFusion(false) it is the input.
// Minimized by fusefuzz (opencv:fp32): x[1,2,1,1] -> Concat(axis 1, one input) -> y.
// fusefuzz finding on OpenCV DNN (opencv:fp32): fusion
// Written by fusefuzz's OpenCV pack (targets/opencv/repro_writer.cc): the ONNX model the
// adapter imports, with the inputs written in; OpenCV alone runs it with
// Net::enableFusion(false) and (true).
// Build and run:
//   g++ -std=c++17 -O1 -I/usr/include/opencv4 reproduce_opencv.cc -o reproduce_opencv -lopencv_dnn
//   -lopencv_core && ./reproduce_opencv
// Exit status: 1 while output 'v0' element 0 (NCHW) with fusion on is farther from the
// reference than fusefuzz's oracle allows, 0 when it is not, 2 when OpenCV fails.
#include <cmath>
#include <cstdio>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/dnn.hpp>
#include <vector>

static const unsigned char model[] = {
    8,   8,   18,  8,   102, 117, 115, 101, 102, 117, 122, 122, 26,  5,   48,  46,  49,  46,  48,
    58,  105, 10,  33,  10,  2,   120, 48,  18,  2,   118, 48,  26,  2,   110, 48,  34,  6,   67,
    111, 110, 99,  97,  116, 42,  11,  10,  4,   97,  120, 105, 115, 24,  1,   160, 1,   2,   18,
    8,   102, 117, 115, 101, 102, 117, 122, 122, 90,  28,  10,  2,   120, 48,  18,  22,  10,  20,
    8,   1,   18,  16,  10,  2,   8,   1,   10,  2,   8,   2,   10,  2,   8,   1,   10,  2,   8,
    1,   98,  28,  10,  2,   118, 48,  18,  22,  10,  20,  8,   1,   18,  16,  10,  2,   8,   1,
    10,  2,   8,   2,   10,  2,   8,   1,   10,  2,   8,   1,   66,  4,   10,  0,   16,  17,  114,
    56,  10,  15,  102, 117, 115, 101, 102, 117, 122, 122, 58,  102, 111, 114, 109, 97,  116, 18,
    37,  102, 117, 115, 101, 102, 117, 122, 122, 45,  111, 110, 110, 120, 45,  101, 120, 112, 111,
    114, 116, 32,  49,  32,  40,  100, 111, 99,  115, 47,  111, 110, 110, 120, 46,  109, 100, 41,
    114, 25,  10,  16,  102, 117, 115, 101, 102, 117, 122, 122, 58,  118, 101, 114, 115, 105, 111,
    110, 18,  5,   48,  46,  49,  46,  48};

// graph input 'x0'
static std::vector<float> input0 = {0x0p+0, 0x1p+0};
static const int input0_dims[] = {1, 2, 1, 1};
// the reference of output 'v0' (fp64, rounded to float32), NCHW
static const float expected[] = {0x0p+0, 0x1p+0};

static cv::Mat Run(bool fuse, const char* output) {
  cv::dnn::Net net = cv::dnn::readNetFromONNX(reinterpret_cast<const char*>(model), sizeof model);
  net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
  net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
  std::vector<cv::Mat> in;
  in.push_back(cv::Mat(4, input0_dims, CV_32F, input0.data()));
  net.enableFusion(fuse);
  net.setInput(in[0], "x0");
  cv::Mat out = net.forward(output);
  return out.isContinuous() ? out : out.clone();
}

int main() {
  cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
  cv::setNumThreads(1);
  cv::Mat off, on;
  try {
    off = Run(false, "v0");
  } catch (const cv::Exception& e) {
    std::fprintf(stderr, "OpenCV fails with fusion off: %s\n", e.what());
    return 2;
  }
  try {
    on = Run(true, "v0");
  } catch (const cv::Exception& e) {
    std::fprintf(stderr, "OpenCV fails with fusion on: %s\n", e.what());
    return 2;
  }
  const float* fused = on.ptr<float>();
  const float* unfused = off.ptr<float>();
  std::printf("fusion off: %.9g\n", double(unfused[0]));
  const double got = fused[0];
  const double want = 0x0p+0, bound = 0x1p-126;
  std::printf(
      "output 'v0' element 0 (NCHW): OpenCV (fusion on) %.9g, reference %.9g, |difference| %.3g, "
      "allowed %.3g\n",
      got, want, std::fabs(got - want), bound);
  if (2 <= 64) {
    std::printf("the whole output, NCHW order: OpenCV (fusion on) | reference\n");
    for (size_t i = 0; i < 2; ++i)
      std::printf("  [%zu] %.9g | %.9g\n", i, double(fused[i]), double(expected[i]));
  }
  const bool wrong = !(std::fabs(got - want) <= bound) && !(std::isnan(got) && std::isnan(want));
  std::printf(wrong ? "BUG: outside the bound\n" : "within the bound\n");
  return wrong ? 1 : 0;
}
