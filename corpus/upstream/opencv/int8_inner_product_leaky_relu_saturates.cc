// OpenCV DNN 4.6.0 (Debian libopencv-dnn-dev 4.6.0+dfsg-12), int8 (Net::quantize) fuseLayers: a
// LeakyRelu (ReLUInt8 with a negative slope) merged into an InnerProductInt8 (Gemm/MatMul) turns
// negative outputs into +127: the fused net's integer is 127 where the same quantized net with
// fusion off gives -128 (and the float net is right). Convolution + LeakyRelu keeps its integers.
// Minimized by fusefuzz (opencv:int8): x[1,4] -> Gemm (B [3,4], transB) -> LeakyRelu (alpha 0.01).
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
    58,  249, 1,   10,  87,  10,  2,   118, 53,  10,  4,   110, 54,  46,  66,  18,  2,   118, 54,
    26,  2,   110, 54,  34,  4,   71,  101, 109, 109, 42,  15,  10,  5,   97,  108, 112, 104, 97,
    21,  0,   0,   128, 63,  160, 1,   1,   42,  14,  10,  4,   98,  101, 116, 97,  21,  0,   0,
    128, 63,  160, 1,   1,   42,  13,  10,  6,   116, 114, 97,  110, 115, 65,  24,  0,   160, 1,
    2,   42,  13,  10,  6,   116, 114, 97,  110, 115, 66,  24,  1,   160, 1,   2,   10,  40,  10,
    2,   118, 54,  18,  2,   118, 55,  26,  2,   110, 55,  34,  9,   76,  101, 97,  107, 121, 82,
    101, 108, 117, 42,  15,  10,  5,   97,  108, 112, 104, 97,  21,  10,  215, 35,  60,  160, 1,
    1,   18,  8,   102, 117, 115, 101, 102, 117, 122, 122, 42,  62,  8,   3,   8,   4,   16,  1,
    66,  4,   110, 54,  46,  66,  74,  48,  0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   0,   128, 63,  0,   0,   128, 63,  0,   0,   0,   0,   90,
    20,  10,  2,   118, 53,  18,  14,  10,  12,  8,   1,   18,  8,   10,  2,   8,   1,   10,  2,
    8,   4,   98,  20,  10,  2,   118, 55,  18,  14,  10,  12,  8,   1,   18,  8,   10,  2,   8,
    1,   10,  2,   8,   3,   66,  4,   10,  0,   16,  17,  114, 56,  10,  15,  102, 117, 115, 101,
    102, 117, 122, 122, 58,  102, 111, 114, 109, 97,  116, 18,  37,  102, 117, 115, 101, 102, 117,
    122, 122, 45,  111, 110, 110, 120, 45,  101, 120, 112, 111, 114, 116, 32,  49,  32,  40,  100,
    111, 99,  115, 47,  111, 110, 110, 120, 46,  109, 100, 41,  114, 25,  10,  16,  102, 117, 115,
    101, 102, 117, 122, 122, 58,  118, 101, 114, 115, 105, 111, 110, 18,  5,   48,  46,  49,  46,
    48};

// graph input 'v5'
static std::vector<float> input0 = {0x0p+0, 0x1p-2, -0x1.753304p-1, 0x0p+0};
static const int input0_dims[] = {1, 4};
// the reference of output 'v7' (fp64, rounded to float32), NCHW; for the reader: this bug is
// judged as fusion on against fusion off
[[maybe_unused]] static const float expected[] = {0x0p+0, 0x0p+0, -0x1.39dae6p-8};

static cv::Mat Run(bool fuse, const char* output) {
  cv::dnn::Net net = cv::dnn::readNetFromONNX(reinterpret_cast<const char*>(model), sizeof model);
  net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
  net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
  std::vector<cv::Mat> in;
  in.push_back(cv::Mat(2, input0_dims, CV_32F, input0.data()));
  net.enableFusion(false);  // as the adapter calibrates
  net = in.size() == 1 ? net.quantize(in[0], CV_32F, CV_32F) : net.quantize(in, CV_32F, CV_32F);
  net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
  net.enableFusion(fuse);
  net.setInput(in[0], "v5");
  cv::Mat out = net.forward(output);
  return out.isContinuous() ? out : out.clone();
}

int main() {
  cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
  cv::setNumThreads(1);
  cv::Mat off, on;
  try {
    off = Run(false, "v7");
  } catch (const cv::Exception& e) {
    std::fprintf(stderr, "OpenCV fails with fusion off: %s\n", e.what());
    return 2;
  }
  try {
    on = Run(true, "v7");
  } catch (const cv::Exception& e) {
    std::fprintf(stderr, "OpenCV fails with fusion on: %s\n", e.what());
    return 1;
  }
  const float* fused = on.ptr<float>();
  const float* unfused = off.ptr<float>();
  (void)fused;
  (void)unfused;
  const char* outputs[] = {"v7"};
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
