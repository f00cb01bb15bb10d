// Tool modes of fusion_fuzzer_replay (the standalone runner of fusion_fuzzer):
//   --write-repro OUT.json CRASHFILE   regenerate the case of a fuzzer input, check, blame and
//                                      write its reproducer, print "signature SIG" (the
//                                      campaign's dedup key); exit 0, or 1 when it has no finding
//   --find [--random N ...] FILE|DIR   report the first input with a finding (exit 0), or exit 1
//                                      when none has one (a test that the fuzzer sees faults)
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "fuzz/fusion_case.h"
#include "fuzz/fuzz_inputs.h"
#include "harness/repro.h"
#include "ir/json_io.h"

namespace fusefuzz::fuzz {
namespace {

int WriteReproMode(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s --write-repro OUT.json CRASHFILE\n", argv[0]);
    return 2;
  }
  const std::string out = argv[2], input = argv[3];
  std::vector<uint8_t> bytes;
  if (!ReadBytes(input, bytes)) {
    std::fprintf(stderr, "cannot read %s\n", input.c_str());
    return 2;
  }
  FusionCaseRunner runner;
  auto f = runner.Run(bytes.data(), bytes.size());
  if (!f) {
    std::fprintf(stderr, "%s: no finding (faults: %s)\n", input.c_str(),
                 runner.options().opt.inject.empty() ? "none" : "as in FUSEFUZZ_INJECT");
    return 1;
  }
  Repro r = runner.MakeRepro(*f, bytes.data(), bytes.size(), input);
  WriteFileAtomic(out, WriteRepro(r, out));
  std::printf("%s: %s %s -> %s\n", input.c_str(), std::string(FindingKindName(r.kind)).c_str(),
              r.blame.rule.empty() ? "(no rule blamed)" : r.blame.rule.c_str(), out.c_str());
  // The campaign's dedup key, for scripts that keep one reproducer per bug (ci/fuzz).
  std::printf("signature %s\n", Signature(r).c_str());
  return 0;
}

int FindMode(int argc, char** argv) {
  InputOptions o;
  std::string error;
  if (!ParseInputOptions(argc, argv, 2, o, error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 2;
  }
  FusionCaseRunner runner;
  bool found = false;
  int64_t n = ForEachInput(o, [&](const std::string& name, const std::vector<uint8_t>& bytes) {
    if (found) return;
    if (auto f = runner.Run(bytes.data(), bytes.size())) {
      found = true;
      std::printf("%s: %s %s\n", name.c_str(), std::string(FindingKindName(f->out.kind)).c_str(),
                  f->blame.rule.empty() ? "(no rule blamed)" : f->blame.rule.c_str());
    }
  });
  if (n < 0) return 2;
  if (!found) std::printf("no finding in %lld inputs\n", static_cast<long long>(n));
  return found ? 0 : 1;
}

}  // namespace
}  // namespace fusefuzz::fuzz

extern "C" int FusefuzzFuzzerTool(int argc, char** argv) {
  if (argc < 2) return -1;
  try {
    if (std::strcmp(argv[1], "--write-repro") == 0)
      return fusefuzz::fuzz::WriteReproMode(argc, argv);
    if (std::strcmp(argv[1], "--find") == 0) return fusefuzz::fuzz::FindMode(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 2;
  }
  return -1;
}
