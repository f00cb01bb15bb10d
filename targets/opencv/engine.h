// OpenCV DNN as fusefuzz runs it: the hello of opencv:fp32 / opencv:int8. Shared by the protocol
// program (opencv_target_main.cc) and the in-process libFuzzer targets (fuzz/opencv_fuzzer.cc);
// both run a request through opencv::Run (opencv_net.h), the same translation.
#pragma once

#include <nlohmann/json.hpp>

namespace fusefuzz::opencv {

// The hello line of mode int8 (or fp32): name, engine version, ops, fusions, capabilities.
nlohmann::json Hello(bool int8);

}  // namespace fusefuzz::opencv
