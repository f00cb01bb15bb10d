// OpenCV DNN 4.6.0 (Debian libopencv-dnn-dev 4.6.0+dfsg-12), ONNX importer: a QuantizeLinear ->
// DequantizeLinear pair on an activation (the QDQ form every ONNX quantizer writes) imports
// without complaint and runs with wrong values, fusion on or off: every other output element is
// (0 - zero_point) * scale whatever x is, the others are huge numbers that change from run to run
// (-9e26, -7e9: memory nobody wrote). ONNX: y = (saturate(round_half_even(x / s) + zp) - zp) * s.
// Standalone: no fusefuzz. Exits 1 while OpenCV's values differ from ONNX's, 0 when they agree,
// 2 when OpenCV refuses the model.
//   g++ -std=c++17 -O1 -I/usr/include/opencv4 qdq_activation_wrong_values.cc
//       -o qdq_activation_wrong_values -lopencv_dnn -lopencv_core && ./qdq_activation_wrong_values
//
// The model (ONNX opset 17, written by `fusefuzz export`; 417 bytes below):
//   x float[1,1,2,4] -> QuantizeLinear(scale 0.5, zero_point int8 10) -> xq
//                    -> DequantizeLinear(scale 0.5, zero_point int8 10) -> y
#include <cmath>
#include <cstdio>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/dnn.hpp>

static const unsigned char model[] = {
    8,   8,   18,  8,   102, 117, 115, 101, 102, 117, 122, 122, 26,  5,   48,  46,  49,  46,  48,
    50,  34,  101, 120, 112, 111, 114, 116, 101, 100, 32,  98,  121, 32,  102, 117, 115, 101, 102,
    117, 122, 122, 32,  102, 114, 111, 109, 32,  113, 100, 113, 46,  106, 115, 111, 110, 58,  140,
    2,   10,  53,  10,  1,   120, 10,  9,   113, 47,  121, 95,  115, 99,  97,  108, 101, 10,  14,
    113, 47,  121, 95,  122, 101, 114, 111, 95,  112, 111, 105, 110, 116, 18,  2,   120, 113, 26,
    1,   113, 34,  14,  81,  117, 97,  110, 116, 105, 122, 101, 76,  105, 110, 101, 97,  114, 10,
    55,  10,  2,   120, 113, 10,  9,   100, 47,  120, 95,  115, 99,  97,  108, 101, 10,  14,  100,
    47,  120, 95,  122, 101, 114, 111, 95,  112, 111, 105, 110, 116, 18,  1,   121, 26,  1,   100,
    34,  16,  68,  101, 113, 117, 97,  110, 116, 105, 122, 101, 76,  105, 110, 101, 97,  114, 18,
    8,   102, 117, 115, 101, 102, 117, 122, 122, 42,  19,  16,  1,   66,  9,   113, 47,  121, 95,
    115, 99,  97,  108, 101, 74,  4,   0,   0,   0,   63,  42,  21,  16,  3,   66,  14,  113, 47,
    121, 95,  122, 101, 114, 111, 95,  112, 111, 105, 110, 116, 74,  1,   10,  42,  19,  16,  1,
    66,  9,   100, 47,  120, 95,  115, 99,  97,  108, 101, 74,  4,   0,   0,   0,   63,  42,  21,
    16,  3,   66,  14,  100, 47,  120, 95,  122, 101, 114, 111, 95,  112, 111, 105, 110, 116, 74,
    1,   10,  90,  27,  10,  1,   120, 18,  22,  10,  20,  8,   1,   18,  16,  10,  2,   8,   1,
    10,  2,   8,   1,   10,  2,   8,   2,   10,  2,   8,   4,   98,  27,  10,  1,   121, 18,  22,
    10,  20,  8,   1,   18,  16,  10,  2,   8,   1,   10,  2,   8,   1,   10,  2,   8,   2,   10,
    2,   8,   4,   66,  4,   10,  0,   16,  17,  114, 56,  10,  15,  102, 117, 115, 101, 102, 117,
    122, 122, 58,  102, 111, 114, 109, 97,  116, 18,  37,  102, 117, 115, 101, 102, 117, 122, 122,
    45,  111, 110, 110, 120, 45,  101, 120, 112, 111, 114, 116, 32,  49,  32,  40,  100, 111, 99,
    115, 47,  111, 110, 110, 120, 46,  109, 100, 41,  114, 25,  10,  16,  102, 117, 115, 101, 102,
    117, 122, 122, 58,  118, 101, 114, 115, 105, 111, 110, 18,  5,   48,  46,  49,  46,  48};

int main() {
  cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
  float x[] = {-2, -1, -0.5f, 0, 0.25f, 1, 1.5f, 3};
  const float scale = 0.5f;
  const int zero_point = 10;
  int dims[] = {1, 1, 2, 4};
  bool wrong = false;
  for (int fuse = 0; fuse < 2; ++fuse) {
    cv::Mat y;
    try {
      cv::dnn::Net net =
          cv::dnn::readNetFromONNX(reinterpret_cast<const char*>(model), sizeof model);
      net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
      net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
      net.enableFusion(fuse != 0);
      net.setInput(cv::Mat(4, dims, CV_32F, x));
      net.forward().convertTo(y, CV_32F);
    } catch (const cv::Exception& e) {
      std::fprintf(stderr, "OpenCV refuses the model: %s\n", e.what());
      return 2;
    }
    std::printf("fusion %s: OpenCV | ONNX\n", fuse ? "on" : "off");
    for (int i = 0; i < 8; ++i) {
      const int q = std::max(-128, std::min(127, int(std::nearbyint(x[i] / scale)) + zero_point));
      const float want = float(q - zero_point) * scale;
      const float got = y.ptr<float>()[i];
      std::printf("  x %5g: %12g | %g\n", x[i], got, want);
      wrong = wrong || got != want;
    }
  }
  std::printf(wrong ? "BUG: QuantizeLinear -> DequantizeLinear runs with wrong values\n"
                    : "fixed: OpenCV agrees with ONNX\n");
  return wrong ? 1 : 0;
}
