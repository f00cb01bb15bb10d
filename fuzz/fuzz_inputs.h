// Inputs for the standalone fuzz target runners (no libFuzzer): files, folders (every regular
// file, sorted), and deterministic random inputs — pure random bytes, or mutants of the given
// files when there are any — so that ctest can smoke-test a target without a fuzzing engine.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fusefuzz::fuzz {

struct InputOptions {
  std::vector<std::string> paths;  // files or folders
  int64_t random = 0;              // extra generated inputs
  uint64_t seed = 1;
  size_t max_len = 4096;        // of a generated input
  bool generated_only = false;  // files only seed the mutations; fn sees generated inputs only
  std::string dump;  // folder: write the generated inputs there (named by SHA-1), run none
};

// Parses "--random N", "--seed S", "--max-len L", "--dump DIR" and paths from argv[first..];
// returns false and sets `error` on a bad option.
bool ParseInputOptions(int argc, char** argv, int first, InputOptions& o, std::string& error);

// Calls fn(name, bytes) for every file input, then for every generated one (name "random-<i>").
// Returns the number of inputs, or -1 after printing why when a path cannot be read.
int64_t ForEachInput(
    const InputOptions& o,
    const std::function<void(const std::string&, const std::vector<uint8_t>&)>& fn);

bool ReadBytes(const std::string& path, std::vector<uint8_t>& out);

// SHA-1 in hex: the name libFuzzer gives a crash file (crash-<sha1>), so a reproducer's
// provenance matches the artifact it came from.
std::string Sha1Hex(const uint8_t* data, size_t size);

}  // namespace fusefuzz::fuzz
