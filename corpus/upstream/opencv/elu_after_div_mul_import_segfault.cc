// OpenCV DNN 4.6.0 (Debian libopencv-dnn-dev 4.6.0+dfsg-12), ONNX importer: readNetFromONNX
// dies of SIGSEGV on a valid model x -> Div(x, 2) -> Elu -> Mul(y, that), where y is a second
// network input (the same model with Sigmoid or Relu instead of Elu imports and runs). The crash
// is in the import itself, before any forward: fusion on or off does not matter.
// Found by fusefuzz (opencv:fp32) as a crash finding, minimized to these 3 nodes by hand.
// Standalone: no fusefuzz. Imports in a child process; exits 1 while the child dies of a signal,
// 0 when the model imports and runs, 2 when OpenCV refuses it with an exception.
//   g++ -std=c++17 -O1 -I/usr/include/opencv4 elu_after_div_mul_import_segfault.cc
//       -o elu_after_div_mul_import_segfault -lopencv_dnn -lopencv_core
//
// The model (ONNX opset 17, written by `fusefuzz export`; 349 bytes below): inputs x0, v6
// float[1,1,1,1]; v0 = Div(x0, 2); v1 = Elu(v0, alpha 1); v8 = Mul(v6, v1).
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/dnn.hpp>

static const unsigned char model[] = {
    8,   8,   18,  8,   102, 117, 115, 101, 102, 117, 122, 122, 26,  5,   48,  46,  49,  46,  48,
    50,  32,  101, 120, 112, 111, 114, 116, 101, 100, 32,  98,  121, 32,  102, 117, 115, 101, 102,
    117, 122, 122, 32,  102, 114, 111, 109, 32,  108, 46,  106, 115, 111, 110, 58,  202, 1,   10,
    23,  10,  2,   120, 48,  10,  4,   110, 48,  46,  66,  18,  2,   118, 48,  26,  2,   110, 48,
    34,  3,   68,  105, 118, 10,  34,  10,  2,   118, 48,  18,  2,   118, 49,  26,  2,   110, 49,
    34,  3,   69,  108, 117, 42,  15,  10,  5,   97,  108, 112, 104, 97,  21,  0,   0,   128, 63,
    160, 1,   1,   10,  21,  10,  2,   118, 54,  10,  2,   118, 49,  18,  2,   118, 56,  26,  2,
    110, 56,  34,  3,   77,  117, 108, 18,  8,   102, 117, 115, 101, 102, 117, 122, 122, 42,  16,
    8,   1,   16,  1,   66,  4,   110, 48,  46,  66,  74,  4,   0,   0,   0,   64,  90,  28,  10,
    2,   120, 48,  18,  22,  10,  20,  8,   1,   18,  16,  10,  2,   8,   1,   10,  2,   8,   1,
    10,  2,   8,   1,   10,  2,   8,   1,   90,  28,  10,  2,   118, 54,  18,  22,  10,  20,  8,
    1,   18,  16,  10,  2,   8,   1,   10,  2,   8,   1,   10,  2,   8,   1,   10,  2,   8,   1,
    98,  28,  10,  2,   118, 56,  18,  22,  10,  20,  8,   1,   18,  16,  10,  2,   8,   1,   10,
    2,   8,   1,   10,  2,   8,   1,   10,  2,   8,   1,   66,  4,   10,  0,   16,  17,  114, 56,
    10,  15,  102, 117, 115, 101, 102, 117, 122, 122, 58,  102, 111, 114, 109, 97,  116, 18,  37,
    102, 117, 115, 101, 102, 117, 122, 122, 45,  111, 110, 110, 120, 45,  101, 120, 112, 111, 114,
    116, 32,  49,  32,  40,  100, 111, 99,  115, 47,  111, 110, 110, 120, 46,  109, 100, 41,  114,
    25,  10,  16,  102, 117, 115, 101, 102, 117, 122, 122, 58,  118, 101, 114, 115, 105, 111, 110,
    18,  5,   48,  46,  49,  46,  48};

int main() {
  cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    try {
      cv::dnn::Net net =
          cv::dnn::readNetFromONNX(reinterpret_cast<const char*>(model), sizeof model);
      float x = 0.5f, y = -0.25f;
      int dims[] = {1, 1, 1, 1};
      net.setInput(cv::Mat(4, dims, CV_32F, &x), "x0");
      net.setInput(cv::Mat(4, dims, CV_32F, &y), "v6");
      cv::Mat out = net.forward("v8");
      std::printf("imported and ran: v8 = %g (ONNX: %g)\n", out.ptr<float>()[0], -0.25 * (0.25));
      _exit(0);
    } catch (const cv::Exception& e) {
      std::fprintf(stderr, "OpenCV refuses the model: %s\n", e.what());
      _exit(2);
    }
  }
  int status = 0;
  waitpid(child, &status, 0);
  if (WIFSIGNALED(status)) {
    std::printf("BUG: readNetFromONNX killed by signal %d\n", WTERMSIG(status));
    return 1;
  }
  return WEXITSTATUS(status);
}
