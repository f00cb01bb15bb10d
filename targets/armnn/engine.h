// Arm NN as fusefuzz runs it (README.md): the hello of armnn:MODE and one request's network
// built, armnn::Optimize'd for CpuRef and run. Shared by the protocol program
// (armnn_target_main.cc) and the in-process libFuzzer targets (fuzz/armnn_fuzzer.cc), so that
// both run exactly the same translation.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "ir/precision.h"
#include "targets/native_server.h"

namespace fusefuzz::armnn_net {

// The rule name of Arm NN's one fusion, as its rewrites report it.
inline constexpr char kFoldRule[] = "FoldPadIntoConvolution2d";

struct Mode {
  std::string name;  // fp32, fp16, bf16 or int8
  Precision precision = Precision::kFloat32;
};

// "fp32", "fp16", "bf16", "int8" (checked by the caller).
Mode ModeNamed(const std::string& name);

// The hello line of the mode: name, engine version, ops, precision, quantize rounding.
nlohmann::json Hello(const Mode& m);

// One Arm NN runtime (CpuRef) that runs requests one at a time.
class Engine {
 public:
  explicit Engine(Mode m);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Throws Unsupported for what Arm NN cannot express, FailureAfterRewrites when Optimize
  // throws, another exception for a failure.
  NativeAnswer Run(const NativeRequest& r);
  // Request "repro": the network of the case as Run builds it (repro_writer.h).
  Reproducer Repro(const NativeRequest& r, const ReproducerCase& c);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fusefuzz::armnn_net
