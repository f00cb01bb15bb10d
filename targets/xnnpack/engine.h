// XNNPACK as fusefuzz runs it: the hello of xnnpack:fp32 / xnnpack:int8 and one request run
// through the subgraph API (docs in README.md). Shared by the protocol program
// (xnnpack_target_main.cc) and the in-process libFuzzer targets (fuzz/xnnpack_fuzzer.cc), so
// that both run exactly the same translation.
#pragma once

#include <nlohmann/json.hpp>

#include "targets/native_server.h"

namespace fusefuzz::xnnpack {

// The hello line of mode int8 (or fp32): name, engine version, ops, rules, constraints.
nlohmann::json Hello(bool int8);

// xnn_initialize; "" or why XNNPACK refuses this machine.
std::string Initialize();

// One request: the NCHW graph as an xnn_subgraph in NHWC, fused (or not: r.optimize false keeps
// every intermediate value external), run once; its outputs and the fusions XNNPACK applied.
// Throws Unsupported for what XNNPACK cannot express, another exception for a failure.
NativeAnswer Run(const NativeRequest& r, bool int8);

}  // namespace fusefuzz::xnnpack
