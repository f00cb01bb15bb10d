#include "targets/opencv/repro_writer.h"

#include <sstream>
#include <string>

#include "targets/opencv/opencv_net.h"
#include "targets/repro_program.h"

namespace fusefuzz::opencv {
namespace {

constexpr char kFile[] = "reproduce_opencv.cc";
constexpr char kBuild[] =
    "g++ -std=c++17 -O1 -I/usr/include/opencv4 reproduce_opencv.cc -o reproduce_opencv "
    "-lopencv_dnn -lopencv_core && ./reproduce_opencv";

std::string Floats(const std::vector<float>& d) {
  std::string s;
  for (size_t i = 0; i < d.size(); ++i)
    s += (i ? (i % 8 ? ", " : ",\n    ") : "") + ExactLiteral(d[i]);
  return s;
}

std::string Bytes(const std::string& b) {
  std::string s;
  for (size_t i = 0; i < b.size(); ++i) {
    s += (i ? (i % 16 ? "," : ",\n    ") : "") + std::to_string(static_cast<unsigned char>(b[i]));
  }
  return s;
}

std::string Ints(const Shape& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out.empty() ? "1" : out;
}

}  // namespace

Reproducer WriteReproducer(const NativeRequest& r, const ReproducerCase& c, bool int8) {
  const std::string onnx = ModelBytes(r.graph);
  const bool wrong_number = !c.output.empty();
  // opencv:int8 answers the float net's numbers (a wrong number is the float net's, fusion off)
  // and judges the quantized net's integers itself (an error): int8_check.h.
  const bool quantized = int8 && !wrong_number;
  const std::string failing = wrong_number ? c.output : r.graph.outputs.front();
  const std::string mode = int8 ? "opencv:int8" : "opencv:fp32";
  std::ostringstream p;
  p << "// fusefuzz finding on OpenCV DNN (" << mode << "): " << c.title << "\n"
    << "// Written by fusefuzz's OpenCV pack (targets/opencv/repro_writer.cc): the ONNX model the\n"
    << "// adapter imports, with the inputs written in; OpenCV alone runs it with\n"
    << "// Net::enableFusion(false) and (true)"
    << (quantized ? ", each after Net::quantize on the inputs (CV_32F in and out)" : "") << ".\n"
    << "// Build and run:\n//   " << kBuild << "\n"
    << (wrong_number
            ? "// Exit status: 1 while output '" + c.output + "' element " +
                  std::to_string(c.index) + " (NCHW) with fusion " + (r.optimize ? "on" : "off") +
                  " is farther from the\n// reference than "
                  "fusefuzz's oracle allows, 0 when it is not, 2 when OpenCV fails.\n"
            : std::string("// Exit status: 1 while OpenCV fails with fusion on only, 0 "
                          "when it runs, 2 when it fails\n// without fusion too.\n"));
  p << "#include <opencv2/core/utils/logger.hpp>\n#include <opencv2/dnn.hpp>\n\n"
       "#include <cmath>\n#include <cstdio>\n#include <vector>\n\n";
  p << "static const unsigned char model[] = {\n    " << Bytes(onnx) << "};\n\n";
  int k = 0;
  for (const ValueInfo& in : r.graph.inputs) {
    const Tensor& t = r.inputs.at(in.name);
    p << "// graph input '" << in.name << "'\nstatic std::vector<float> input" << k << " = {"
      << Floats(t.data) << "};\nstatic const int input" << k << "_dims[] = {" << Ints(t.shape)
      << "};\n";
    ++k;
  }
  const std::vector<float>& ref =
      c.expected.count(failing) ? c.expected.at(failing).data : std::vector<float>{};
  p << "// the reference of output '" << failing << "' (fp64, rounded to float32), NCHW\n"
    << "[[maybe_unused]] static const float expected[] = {"  // int8 compares on with off
    << (ref.empty() ? "0" : Floats(ref)) << "};\n\n";
  p << "static cv::Mat Run(bool fuse, const char* output) {\n"
    << "  cv::dnn::Net net = cv::dnn::readNetFromONNX(reinterpret_cast<const char*>(model), "
       "sizeof model);\n"
    << "  net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);\n"
    << "  net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);\n"
    << "  std::vector<cv::Mat> in;\n";
  k = 0;
  for (const ValueInfo& in : r.graph.inputs) {
    const size_t rank = r.inputs.at(in.name).shape.size();
    p << "  in.push_back(cv::Mat(" << (rank < 2 ? 1 : rank) << ", input" << k
      << "_dims, CV_32F, input" << k << ".data()));\n";
    ++k;
  }
  if (quantized) {
    p << "  net.enableFusion(false);  // as the adapter calibrates\n"
      << "  net = in.size() == 1 ? net.quantize(in[0], CV_32F, CV_32F) : net.quantize(in, CV_32F, "
         "CV_32F);\n"
      << "  net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);\n";
  }
  p << "  net.enableFusion(fuse);\n";
  k = 0;
  for (const ValueInfo& in : r.graph.inputs) {
    p << "  net.setInput(in[" << k << "], \"" << in.name << "\");\n";
    ++k;
  }
  p << "  cv::Mat out = net.forward(output);\n"
    << "  return out.isContinuous() ? out : out.clone();\n}\n\n";
  p << "int main() {\n"
    << "  cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);\n"
    << "  cv::setNumThreads(1);\n  cv::Mat off, on;\n"
    << "  try {\n    off = Run(false, \"" << failing
    << "\");\n  } catch (const cv::Exception& e) {\n"
    << "    std::fprintf(stderr, \"OpenCV fails with fusion off: %s\\n\", e.what());\n"
    << "    return 2;\n  }\n"
    << "  try {\n    on = Run(true, \"" << failing << "\");\n  } catch (const cv::Exception& e) {\n"
    << "    std::fprintf(stderr, \"OpenCV fails with fusion on: %s\\n\", e.what());\n"
    << "    return " << (wrong_number ? 2 : 1) << ";\n  }\n"
    << "  const float* fused = on.ptr<float>();\n  const float* unfused = off.ptr<float>();\n";
  if (quantized) {
    // opencv:int8 judges the quantized net's integers with fusion on against fusion off
    // (int8_check.h), every output: the program does the same.
    p << "  (void)fused;\n  (void)unfused;\n  const char* outputs[] = {";
    for (size_t i = 0; i < r.graph.outputs.size(); ++i)
      p << (i ? ", " : "") << "\"" << r.graph.outputs[i] << "\"";
    p << "};\n  for (const char* o : outputs) {\n    cv::Mat a, b;\n"
      << "    try {\n      Run(false, o).convertTo(a, CV_64F);\n"
      << "    } catch (const cv::Exception& e) {\n"
      << "      std::fprintf(stderr, \"OpenCV fails with fusion off: %s\\n\", e.what());\n"
      << "      return 2;\n    }\n"
      << "    try {\n      Run(true, o).convertTo(b, CV_64F);\n"
      << "    } catch (const cv::Exception& e) {\n"
      << "      std::fprintf(stderr, \"BUG: OpenCV fails with fusion on: %s\\n\", e.what());\n"
      << "      return 1;\n    }\n"
      << "    for (size_t i = 0; i < a.total() && i < b.total(); ++i) {\n"
      << "      const double x = a.ptr<double>()[i], y = b.ptr<double>()[i];\n"
      << "      if (x != y || a.total() != b.total()) {\n"
      << "        std::printf(\"BUG: output '%s' element %zu: %.9g with fusion on, %.9g with "
         "fusion off\\n\", o, i, y, x);\n        return 1;\n      }\n    }\n  }\n"
      << "  std::printf(\"fusion on and off agree on every integer\\n\");\n  return 0;\n}\n";
  } else if (wrong_number) {
    // The finding's failing run (r.optimize) is judged; the other is printed beside it.
    const char* judged = r.optimize ? "fused" : "unfused";
    const char* other = r.optimize ? "unfused" : "fused";
    p << "  std::printf(\"" << (r.optimize ? "fusion off" : "fusion on") << ": %.9g\\n\", double("
      << other << "[" << c.index << "]));\n"
      << VerdictTail(r.optimize ? "OpenCV (fusion on)" : "OpenCV (fusion off)", judged, c.index,
                     ref.size(), "NCHW", c);
  } else {
    p << "  (void)unfused;\n" << RanTail("OpenCV (fusion on)", "fused", failing);
  }
  return {{{kFile, p.str()}}, kBuild, ""};
}

}  // namespace fusefuzz::opencv
