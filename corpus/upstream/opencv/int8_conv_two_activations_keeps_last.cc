// OpenCV DNN 4.6.0 (Debian libopencv-dnn-dev 4.6.0+dfsg-12), int8 (Net::quantize) fuseLayers: a
// ConvolutionInt8 followed by two activations (Conv -> Elu -> Elu) takes both as its activation
// (the rewrites read back: ConvolutionInt8+ELUInt8 twice), but an int8 convolution holds one
// activation table: the second replaces the first, so the fused net applies Elu once. The same
// quantized net with fusion off gives other integers (18 where the fused one gives 47). The float
// net fuses only the first Elu into the Convolution and is right.
// Minimized by fusefuzz (opencv:int8): x[1,1,1,1] -> Conv 1x1 (2 channels) -> Elu -> Elu.
// fusefuzz finding on OpenCV DNN (opencv:int8): target_error
// Written by fusefuzz's OpenCV pack (targets/opencv/repro_writer.cc): the ONNX model the
// adapter imports, with the inputs written in; OpenCV alone runs it with
// Net::enableFusion(false) and (true), each after Net::quantize on the inputs (CV_32F in and out).
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
    58,  190, 2,   10,  124, 10,  2,   118, 51,  10,  4,   110, 54,  46,  87,  10,  4,   110, 54,
    46,  66,  18,  2,   118, 54,  26,  2,   110, 54,  34,  4,   67,  111, 110, 118, 42,  21,  10,
    12,  107, 101, 114, 110, 101, 108, 95,  115, 104, 97,  112, 101, 64,  1,   64,  1,   160, 1,
    7,   42,  16,  10,  7,   115, 116, 114, 105, 100, 101, 115, 64,  1,   64,  1,   160, 1,   7,
    42,  18,  10,  9,   100, 105, 108, 97,  116, 105, 111, 110, 115, 64,  1,   64,  1,   160, 1,
    7,   42,  17,  10,  4,   112, 97,  100, 115, 64,  0,   64,  0,   64,  0,   64,  0,   160, 1,
    7,   42,  12,  10,  5,   103, 114, 111, 117, 112, 24,  1,   160, 1,   2,   10,  34,  10,  2,
    118, 54,  18,  2,   118, 55,  26,  2,   110, 55,  34,  3,   69,  108, 117, 42,  15,  10,  5,
    97,  108, 112, 104, 97,  21,  0,   0,   128, 63,  160, 1,   1,   10,  34,  10,  2,   118, 55,
    18,  2,   118, 56,  26,  2,   110, 56,  34,  3,   69,  108, 117, 42,  15,  10,  5,   97,  108,
    112, 104, 97,  21,  0,   0,   128, 63,  160, 1,   1,   18,  8,   102, 117, 115, 101, 102, 117,
    122, 122, 42,  26,  8,   2,   8,   1,   8,   1,   8,   1,   16,  1,   66,  4,   110, 54,  46,
    87,  74,  8,   0,   0,   0,   0,   0,   0,   0,   0,   42,  20,  8,   2,   16,  1,   66,  4,
    110, 54,  46,  66,  74,  8,   0,   0,   128, 191, 0,   0,   128, 190, 90,  28,  10,  2,   118,
    51,  18,  22,  10,  20,  8,   1,   18,  16,  10,  2,   8,   1,   10,  2,   8,   1,   10,  2,
    8,   1,   10,  2,   8,   1,   98,  28,  10,  2,   118, 56,  18,  22,  10,  20,  8,   1,   18,
    16,  10,  2,   8,   1,   10,  2,   8,   2,   10,  2,   8,   1,   10,  2,   8,   1,   66,  4,
    10,  0,   16,  17,  114, 56,  10,  15,  102, 117, 115, 101, 102, 117, 122, 122, 58,  102, 111,
    114, 109, 97,  116, 18,  37,  102, 117, 115, 101, 102, 117, 122, 122, 45,  111, 110, 110, 120,
    45,  101, 120, 112, 111, 114, 116, 32,  49,  32,  40,  100, 111, 99,  115, 47,  111, 110, 110,
    120, 46,  109, 100, 41,  114, 25,  10,  16,  102, 117, 115, 101, 102, 117, 122, 122, 58,  118,
    101, 114, 115, 105, 111, 110, 18,  5,   48,  46,  49,  46,  48};

// graph input 'v3'
static std::vector<float> input0 = {0x1p+0};
static const int input0_dims[] = {1, 1, 1, 1};
// the reference of output 'v8' (fp64, rounded to float32), NCHW; for the reader: this bug is
// judged as fusion on against fusion off
[[maybe_unused]] static const float expected[] = {-0x1.dfc802p-2, -0x1.96694cp-3};

static cv::Mat Run(bool fuse, const char* output) {
  cv::dnn::Net net = cv::dnn::readNetFromONNX(reinterpret_cast<const char*>(model), sizeof model);
  net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
  net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
  std::vector<cv::Mat> in;
  in.push_back(cv::Mat(4, input0_dims, CV_32F, input0.data()));
  net.enableFusion(false);  // as the adapter calibrates
  net = in.size() == 1 ? net.quantize(in[0], CV_32F, CV_32F) : net.quantize(in, CV_32F, CV_32F);
  net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
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
    off = Run(false, "v8");
  } catch (const cv::Exception& e) {
    std::fprintf(stderr, "OpenCV fails with fusion off: %s\n", e.what());
    return 2;
  }
  try {
    on = Run(true, "v8");
  } catch (const cv::Exception& e) {
    std::fprintf(stderr, "OpenCV fails with fusion on: %s\n", e.what());
    return 1;
  }
  const float* fused = on.ptr<float>();
  const float* unfused = off.ptr<float>();
  (void)fused;
  (void)unfused;
  const char* outputs[] = {"v8"};
  for (const char* o : outputs) {
    cv::Mat a, b;
    try {
      Run(false, o).convertTo(a, CV_64F);
    } catch (const cv::Exception& e) {
      std::fprintf(stderr, "OpenCV fails with fusion off: %s\n", e.what());
      return 2;
    }
    try {
      Run(true, o).convertTo(b, CV_64F);
    } catch (const cv::Exception& e) {
      std::fprintf(stderr, "BUG: OpenCV fails with fusion on: %s\n", e.what());
      return 1;
    }
    for (size_t i = 0; i < a.total() && i < b.total(); ++i) {
      const double x = a.ptr<double>()[i], y = b.ptr<double>()[i];
      if (x != y || a.total() != b.total()) {
        std::printf("BUG: output '%s' element %zu: %.9g with fusion on, %.9g with fusion off\n", o,
                    i, y, x);
        return 1;
      }
    }
  }
  std::printf("fusion on and off agree on every integer\n");
  return 0;
}
