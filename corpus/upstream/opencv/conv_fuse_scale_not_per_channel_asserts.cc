// OpenCV DNN 4.6.0 (Debian libopencv-dnn-dev 4.6.0+dfsg-12), Net::Impl::fuseLayers: a constant
// Mul (or Add) whose constant has the full shape of the convolution's output (not one value per
// channel) imports as a Scale layer; Convolution's tryFuse folds any layer with a scale/shift
// into its weights and fuseWeights asserts one weight per output channel:
// "(-215:Assertion failed) w.empty() || outCn == w.total() in function 'fuseWeights'". The net
// runs with Net::enableFusion(false) and throws with fusion on.
// Minimized by fusefuzz (opencv:fp32): x[1,1,2,2] -> Conv 2x2 (pads 0,0,1,0) -> Mul by a
// [1,1,2,1] constant -> y.
// fusefuzz finding on OpenCV DNN (opencv:fp32): target_error
// Written by fusefuzz's OpenCV pack (targets/opencv/repro_writer.cc): the ONNX model the
// adapter imports, with the inputs written in; OpenCV alone runs it with
// Net::enableFusion(false) and (true).
// Build and run:
//   g++ -std=c++17 -O1 -I/usr/include/opencv4 reproduce_opencv.cc -o reproduce_opencv -lopencv_dnn
//   -lopencv_core && ./reproduce_opencv
// Exit status: 1 while OpenCV fails with fusion on only, 0 when it runs, 2 when it fails
// without fusion too.
#include <cmath>
#include <cstdio>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/dnn.hpp>
#include <vector>

static const unsigned char model[] = {
    8,   8,   18,  8,   102, 117, 115, 101, 102, 117, 122, 122, 26,  5,   48,  46,  49,  46,  48,
    58,  175, 2,   10,  124, 10,  2,   118, 49,  10,  4,   110, 52,  46,  87,  10,  4,   110, 52,
    46,  66,  18,  2,   118, 52,  26,  2,   110, 52,  34,  4,   67,  111, 110, 118, 42,  21,  10,
    12,  107, 101, 114, 110, 101, 108, 95,  115, 104, 97,  112, 101, 64,  2,   64,  2,   160, 1,
    7,   42,  16,  10,  7,   115, 116, 114, 105, 100, 101, 115, 64,  1,   64,  1,   160, 1,   7,
    42,  18,  10,  9,   100, 105, 108, 97,  116, 105, 111, 110, 115, 64,  1,   64,  1,   160, 1,
    7,   42,  17,  10,  4,   112, 97,  100, 115, 64,  0,   64,  0,   64,  1,   64,  0,   160, 1,
    7,   42,  12,  10,  5,   103, 114, 111, 117, 112, 24,  1,   160, 1,   2,   10,  23,  10,  4,
    110, 53,  46,  65,  10,  2,   118, 52,  18,  2,   118, 53,  26,  2,   110, 53,  34,  3,   77,
    117, 108, 18,  8,   102, 117, 115, 101, 102, 117, 122, 122, 42,  34,  8,   1,   8,   1,   8,
    2,   8,   2,   16,  1,   66,  4,   110, 52,  46,  87,  74,  16,  0,   0,   0,   0,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   0,   128, 63,  42,  16,  8,   1,   16,  1,   66,  4,   110,
    52,  46,  66,  74,  4,   0,   0,   0,   0,   42,  26,  8,   1,   8,   1,   8,   2,   8,   1,
    16,  1,   66,  4,   110, 53,  46,  65,  74,  8,   0,   0,   128, 63,  0,   0,   0,   0,   90,
    28,  10,  2,   118, 49,  18,  22,  10,  20,  8,   1,   18,  16,  10,  2,   8,   1,   10,  2,
    8,   1,   10,  2,   8,   2,   10,  2,   8,   2,   98,  28,  10,  2,   118, 53,  18,  22,  10,
    20,  8,   1,   18,  16,  10,  2,   8,   1,   10,  2,   8,   1,   10,  2,   8,   2,   10,  2,
    8,   1,   66,  4,   10,  0,   16,  17,  114, 56,  10,  15,  102, 117, 115, 101, 102, 117, 122,
    122, 58,  102, 111, 114, 109, 97,  116, 18,  37,  102, 117, 115, 101, 102, 117, 122, 122, 45,
    111, 110, 110, 120, 45,  101, 120, 112, 111, 114, 116, 32,  49,  32,  40,  100, 111, 99,  115,
    47,  111, 110, 110, 120, 46,  109, 100, 41,  114, 25,  10,  16,  102, 117, 115, 101, 102, 117,
    122, 122, 58,  118, 101, 114, 115, 105, 111, 110, 18,  5,   48,  46,  49,  46,  48};

// graph input 'v1'
static std::vector<float> input0 = {0x0p+0, 0x0p+0, 0x0p+0, 0x1p+0};
static const int input0_dims[] = {1, 1, 2, 2};
// the reference of output 'v5' (fp64, rounded to float32), NCHW
static const float expected[] = {0x1p+0, 0x0p+0};

static cv::Mat Run(bool fuse, const char* output) {
  cv::dnn::Net net = cv::dnn::readNetFromONNX(reinterpret_cast<const char*>(model), sizeof model);
  net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
  net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
  std::vector<cv::Mat> in;
  in.push_back(cv::Mat(4, input0_dims, CV_32F, input0.data()));
  net.enableFusion(fuse);
  net.setInput(in[0], "v1");
  cv::Mat out = net.forward(output);
  return out.isContinuous() ? out : out.clone();
}

int main() {
  cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
  cv::setNumThreads(1);
  cv::Mat off, on;
  try {
    off = Run(false, "v5");
  } catch (const cv::Exception& e) {
    std::fprintf(stderr, "OpenCV fails with fusion off: %s\n", e.what());
    return 2;
  }
  try {
    on = Run(true, "v5");
  } catch (const cv::Exception& e) {
    std::fprintf(stderr, "OpenCV fails with fusion on: %s\n", e.what());
    return 1;
  }
  const float* fused = on.ptr<float>();
  const float* unfused = off.ptr<float>();
  (void)unfused;
  std::printf(
      "OpenCV (fusion on) ran the case without failing; output 'v5' starts %.9g (reference %.9g)\n",
      double(fused[0]), double(expected[0]));
  return 0;
}
