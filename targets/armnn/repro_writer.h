// The Arm NN pack's answer to request "repro" (docs/target-protocol.md, "Reproducers"): one C++
// file, reproduce_armnn.cc, that builds the INetwork the adapter builds for the case (read back
// from the adapter's own network through INetwork::Accept, layer by layer with descriptors,
// constant tensors and tensor infos written in), optimizes it for CpuRef with the mode's options,
// runs it with Arm NN alone and compares the failing output's worst element with the reference
// (exit 1 while the finding is there, 0 when fixed, 2 when Arm NN fails).
#pragma once

#include <armnn/ArmNN.hpp>
#include <set>
#include <string>

#include "ir/precision.h"
#include "targets/native_server.h"

namespace fusefuzz::armnn_net {

// `net`: the adapter's network for the case, built (with its barriers); `precision`: the mode's
// Optimize reduction (fp16/bf16), as in the adapter.
Reproducer WriteReproducer(const NativeRequest& r, const ReproducerCase& c,
                           const armnn::INetwork& net, const std::string& mode,
                           Precision precision);

}  // namespace fusefuzz::armnn_net
