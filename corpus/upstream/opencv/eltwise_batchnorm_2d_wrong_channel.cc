// OpenCV DNN 4.6.0 (Debian libopencv-dnn-dev 4.6.0+dfsg-12), Net::Impl::fuseLayers: a BatchNorm
// after an Add on a 2-D tensor [N, C] is merged into the Eltwise layer as its activation
// (setActivation) and then normalizes with the wrong channel's parameters: here every output is
// 0 where channel 11 should be 316.2 (scale 1, var 0, epsilon 1e-5). Fusion off is right.
// Minimized by fusefuzz (opencv:fp32): x[1,12] -> Add (a [1,12] zero constant) -> BatchNorm.
// fusefuzz finding on OpenCV DNN (opencv:fp32): fusion
// Written by fusefuzz's OpenCV pack (targets/opencv/repro_writer.cc): the ONNX model the
// adapter imports, with the inputs written in; OpenCV alone runs it with
// Net::enableFusion(false) and (true).
// Build and run:
//   g++ -std=c++17 -O1 -I/usr/include/opencv4 reproduce_opencv.cc -o reproduce_opencv -lopencv_dnn
//   -lopencv_core && ./reproduce_opencv
// Exit status: 1 while output 'v5' element 11 (NCHW) with fusion on is farther from the
// reference than fusefuzz's oracle allows, 0 when it is not, 2 when OpenCV fails.
#include <cmath>
#include <cstdio>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/dnn.hpp>
#include <vector>

static const unsigned char model[] = {
    8,   8,   18,  8,   102, 117, 115, 101, 102, 117, 122, 122, 26,  5,   48,  46,  49,  46,  48,
    58,  236, 3,   10,  23,  10,  2,   118, 51,  10,  4,   110, 52,  46,  66,  18,  2,   118, 52,
    26,  2,   110, 52,  34,  3,   65,  100, 100, 10,  87,  10,  2,   118, 52,  10,  8,   110, 53,
    46,  115, 99,  97,  108, 101, 10,  7,   110, 53,  46,  98,  105, 97,  115, 10,  7,   110, 53,
    46,  109, 101, 97,  110, 10,  6,   110, 53,  46,  118, 97,  114, 18,  2,   118, 53,  26,  2,
    110, 53,  34,  18,  66,  97,  116, 99,  104, 78,  111, 114, 109, 97,  108, 105, 122, 97,  116,
    105, 111, 110, 42,  17,  10,  7,   101, 112, 115, 105, 108, 111, 110, 21,  172, 197, 39,  55,
    160, 1,   1,   18,  8,   102, 117, 115, 101, 102, 117, 122, 122, 42,  62,  8,   1,   8,   12,
    16,  1,   66,  4,   110, 52,  46,  66,  74,  48,  0,   0,   0,   0,   0,   0,   0,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
    0,   42,  64,  8,   12,  16,  1,   66,  8,   110, 53,  46,  115, 99,  97,  108, 101, 74,  48,
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   0,   128, 63,  42,  63,  8,   12,  16,  1,   66,  7,   110,
    53,  46,  98,  105, 97,  115, 74,  48,  0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   42,
    63,  8,   12,  16,  1,   66,  7,   110, 53,  46,  109, 101, 97,  110, 74,  48,  0,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   42,  62,  8,   12,  16,  1,   66,  6,   110, 53,  46,  118,
    97,  114, 74,  48,  0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   90,  20,  10,  2,   118,
    51,  18,  14,  10,  12,  8,   1,   18,  8,   10,  2,   8,   1,   10,  2,   8,   12,  98,  20,
    10,  2,   118, 53,  18,  14,  10,  12,  8,   1,   18,  8,   10,  2,   8,   1,   10,  2,   8,
    12,  66,  4,   10,  0,   16,  17,  114, 56,  10,  15,  102, 117, 115, 101, 102, 117, 122, 122,
    58,  102, 111, 114, 109, 97,  116, 18,  37,  102, 117, 115, 101, 102, 117, 122, 122, 45,  111,
    110, 110, 120, 45,  101, 120, 112, 111, 114, 116, 32,  49,  32,  40,  100, 111, 99,  115, 47,
    111, 110, 110, 120, 46,  109, 100, 41,  114, 25,  10,  16,  102, 117, 115, 101, 102, 117, 122,
    122, 58,  118, 101, 114, 115, 105, 111, 110, 18,  5,   48,  46,  49,  46,  48};

// graph input 'v3'
static std::vector<float> input0 = {0x0p+0, 0x0p+0, 0x0p+0, 0x0p+0, 0x0p+0, 0x0p+0,
                                    0x0p+0, 0x0p+0, 0x0p+0, 0x0p+0, 0x0p+0, 0x1p+0};
static const int input0_dims[] = {1, 12};
// the reference of output 'v5' (fp64, rounded to float32), NCHW
static const float expected[] = {0x0p+0, 0x0p+0, 0x0p+0, 0x0p+0, 0x0p+0, 0x0p+0,
                                 0x0p+0, 0x0p+0, 0x0p+0, 0x0p+0, 0x0p+0, 0x1.3c3a5p+8};

static cv::Mat Run(bool fuse, const char* output) {
  cv::dnn::Net net = cv::dnn::readNetFromONNX(reinterpret_cast<const char*>(model), sizeof model);
  net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
  net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
  std::vector<cv::Mat> in;
  in.push_back(cv::Mat(2, input0_dims, CV_32F, input0.data()));
  net.enableFusion(fuse);
  net.setInput(in[0], "v3");
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
    return 2;
  }
  const float* fused = on.ptr<float>();
  const float* unfused = off.ptr<float>();
  std::printf("fusion off: %.9g\n", double(unfused[11]));
  const double got = fused[11];
  const double want = 0x1.3c3a4f22acd0ep+8, bound = 0x1.3c3a4f22acd0ep-12;
  std::printf(
      "output 'v5' element 11 (NCHW): OpenCV (fusion on) %.9g, reference %.9g, |difference| %.3g, "
      "allowed %.3g\n",
      got, want, std::fabs(got - want), bound);
  if (12 <= 64) {
    std::printf("the whole output, NCHW order: OpenCV (fusion on) | reference\n");
    for (size_t i = 0; i < 12; ++i)
      std::printf("  [%zu] %.9g | %.9g\n", i, double(fused[i]), double(expected[i]));
  }
  const bool wrong = !(std::fabs(got - want) <= bound) && !(std::isnan(got) && std::isnan(want));
  std::printf(wrong ? "BUG: outside the bound\n" : "within the bound\n");
  return wrong ? 1 : 0;
}
