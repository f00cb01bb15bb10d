// Pieces of the C++ reproducer programs the C/C++ packs write (request "repro",
// docs/target-protocol.md): how such a program says what it found and exits, the same for
// every engine.
#pragma once

#include <cstdint>
#include <string>

#include "targets/target.h"

namespace fusefuzz {

// The exact C++ literal of a double (hexadecimal floating point; INFINITY, NAN by name).
std::string ExactLiteral(double v);

// The end of main(): `buffer[at]` (the engine's value at the failing element) next to the
// reference, the whole output (`n` elements, named `expected` in the program, in `order`) when
// small, "BUG: outside the bound" and exit 1 while |value - reference| > bound, else exit 0.
std::string VerdictTail(const std::string& engine, const std::string& buffer, int64_t at, size_t n,
                        const std::string& order, const ReproducerCase& c);

// The end of main() for a finding that is not a wrong number: the engine ran, exit 0.
std::string RanTail(const std::string& engine, const std::string& buffer,
                    const std::string& output);

}  // namespace fusefuzz
