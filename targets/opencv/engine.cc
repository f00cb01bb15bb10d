#include "targets/opencv/engine.h"

#include <opencv2/core/version.hpp>
#include <string>
#include <vector>

#include "ir/ops.h"
#include "targets/opencv/opencv_net.h"

namespace fusefuzz::opencv {
namespace {

// Each family checked against the reference through the protocol (opencv_target_test.cc).
const std::vector<Op> kOps = {
    Op::Conv,    Op::BatchNorm, Op::Relu,      Op::LeakyRelu,     Op::PRelu,  Op::Elu,
    Op::Sigmoid, Op::Tanh,      Op::HardSwish, Op::Add,           Op::Sub,    Op::Mul,
    Op::Div,     Op::MaxPool,   Op::AvgPool,   Op::GlobalAvgPool, Op::Concat, Op::Identity,
    Op::Flatten, Op::Reshape,   Op::Gemm,      Op::MatMul,        Op::Pad};

}  // namespace

nlohmann::json Hello(bool int8) {
  nlohmann::json ops = nlohmann::json::array();
  for (Op op : kOps) {
    // Net::quantize has no HardSwishInt8 in 4.6 ("Can't create layer ... HardSwishInt8").
    if (!(int8 && op == Op::HardSwish)) ops.push_back(std::string(OpName(op)));
  }
  return {{"protocol", "fusefuzz-target"},
          {"version", 1},
          {"name", std::string("opencv:") + (int8 ? "int8" : "fp32")},
          {"engine", "OpenCV DNN " CV_VERSION " (Debian libopencv-dnn406 " FUSEFUZZ_OPENCV_VERSION
                     "), ONNX import, CPU"},
          {"ops", ops},
          {"precision", "float32"},
          {"fusions", DeclaredFusions(int8)},
          {"capabilities", {"rewrites", "bench", "repro"}}};
}

}  // namespace fusefuzz::opencv
