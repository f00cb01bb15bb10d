// A standalone reproducer of a PyTorch finding (issue 28 item 4, issue 26 item 5):
// `reproduce.py` in the finding folder, run with /usr/bin/python3 and torch alone (no fusefuzz,
// no import of the adapter). docs/campaign.md, "Output".
#pragma once

#include <cstdint>
#include <string>

#include "harness/repro.h"

namespace fusefuzz {

// The mode of a PyTorch target: "pytorch:MODE", or an exec: command that runs
// targets/pytorch/fusefuzz_torch.py with `--mode MODE` (older reproducers); "" otherwise.
std::string PytorchMode(const std::string& target);

// The script for a finding on a PyTorch target, or "" when the target is not PyTorch, the kind is
// not one the script can show (a mismatch with a worst element, a target error of the optimized
// run, an unquantized node), the graph holds what the script does not translate, or it would hold
// more than `max_elements` values (inputs, weights, the failing output's reference).
std::string TorchReproScript(const Repro& r, int64_t max_elements = 16384);

}  // namespace fusefuzz
