// Runs a fuzz target without a fuzzing engine: every file (folders recursively) given on the
// command line, then --random N deterministic inputs (mutants of those files, or random bytes),
// each through LLVMFuzzerTestOneInput. A target may add tool modes (FusefuzzFuzzerTool).
//   <target>_replay [--random N] [--seed S] [--max-len L] FILE|DIR...
//   <target>_replay --dump DIR --random N [--seed S] [--max-len L] [FILE|DIR...]
//       writes the generated inputs to DIR (named by SHA-1, as libFuzzer does) and runs nothing:
//       how fuzz/make_corpus.sh makes the byte seeds, reproducibly.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "fuzz/fuzz_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
// Optional per-target tool modes; returns -1 when argv names none of them.
extern "C" int FusefuzzFuzzerTool(int argc, char** argv) __attribute__((weak));

int main(int argc, char** argv) {
  if (FusefuzzFuzzerTool != nullptr) {
    int code = FusefuzzFuzzerTool(argc, argv);
    if (code >= 0) return code;
  }
  fusefuzz::fuzz::InputOptions o;
  std::string error;
  if (!fusefuzz::fuzz::ParseInputOptions(argc, argv, 1, o, error)) {
    std::fprintf(stderr, "%s: %s\nusage: %s [--random N] [--seed S] [--max-len L] FILE|DIR...\n",
                 argv[0], error.c_str(), argv[0]);
    return 2;
  }
  if (o.paths.empty() && o.random == 0) {
    std::fprintf(stderr, "usage: %s [--random N] [--seed S] [--max-len L] FILE|DIR...\n", argv[0]);
    return 2;
  }
  if (!o.dump.empty()) {
    o.generated_only = true;  // the files only seed the mutations
    bool ok = true;
    int64_t n =
        fusefuzz::fuzz::ForEachInput(o, [&](const std::string&, const std::vector<uint8_t>& bytes) {
          std::string path = o.dump + "/" + fusefuzz::fuzz::Sha1Hex(bytes.data(), bytes.size());
          std::ofstream out(path, std::ios::binary);
          out.write(reinterpret_cast<const char*>(bytes.data()),
                    static_cast<std::streamsize>(bytes.size()));
          ok = ok && static_cast<bool>(out);
        });
    if (n < 0 || !ok) return 2;
    std::fprintf(stderr, "%s: wrote %lld inputs to %s\n", argv[0], static_cast<long long>(n),
                 o.dump.c_str());
    return 0;
  }
  const auto start = std::chrono::steady_clock::now();
  int64_t n = fusefuzz::fuzz::ForEachInput(
      o, [](const std::string& name, const std::vector<uint8_t>& bytes) {
        // Printed first so that a crash names its input.
        std::fprintf(stderr, "running %s (%zu bytes)\n", name.c_str(), bytes.size());
        LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      });
  if (n < 0) return 2;
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "%s: %lld inputs, no crash, %.2f s\n", argv[0], static_cast<long long>(n),
               s);
  return 0;
}
